import ResiliencePolicies

/// Checks the goals for the default pipeline against a report's measurements.
enum GoalEvaluator {
    /// The failure probability below which retries fit in the budget (10 % ratio).
    static let budgetCrossover = 0.1

    /// The most load the default retry budget allows in scenario 2: 1 + ratio + minimum rate ÷ per-client rate.
    static func budgetBound(_ report: StormReport) -> Double {
        let workload = StormScenarios.independent(p: 0.5, mode: report.mode).workload
        let perClient = workload.requestsPerSecond / Double(max(workload.clients, 1))
        let budget = PipelineTuning.standard.budget
        return 1 + budget.ratio + budget.minimumPerSecond / perClient
    }

    static func evaluate(_ report: StormReport) -> [GoalCheck] {
        var checks: [GoalCheck] = []
        let name = StrategyName.defaultPipeline

        if let pipeline = report.outage.result(name) {
            let during = report.outage.amplificationDuring(pipeline)
            let immediate = report.outage.result(StrategyName.immediate).map(report.outage.amplificationDuring)
            checks.append(
                GoalCheck(
                    goal: "Full outage: amplification during the fault <= 1.10x",
                    measured: "default \(FixedFormat.number(during))x; immediate x3 "
                        + "\(immediate.map { FixedFormat.number($0) } ?? "-")x",
                    passed: during <= 1.1))
        }
        if let pipeline = report.aws.result(name), let full = report.aws.result(StrategyName.fullJitter) {
            checks.append(
                GoalCheck(
                    goal: "AWS setup: fewer total calls than full jitter alone",
                    measured: "default \(pipeline.attempts) calls (\(pipeline.successes)/\(pipeline.logicalRequests) "
                        + "completed); full jitter \(full.attempts) calls (\(full.successes) completed)",
                    passed: pipeline.attempts < full.attempts))
        }
        let points = report.independent.filter { $0.strategy == name }
        let below = points.filter { $0.p < budgetCrossover }
        if !below.isEmpty {
            let worst = below.map { abs($0.successRate - $0.successBound) }.max() ?? 0
            checks.append(
                GoalCheck(
                    goal: "Independent failures, p < 10%: success within 0.1 pp of 1 - p^n",
                    measured: "largest gap \(FixedFormat.number(worst * 100, decimals: 3)) pp",
                    passed: worst <= 0.001))
        }
        let above = points.filter { $0.p >= budgetCrossover }
        if let worst = above.max(by: { $0.load < $1.load }) {
            checks.append(
                GoalCheck(
                    goal: "Independent failures, p >= 10%: load <= 1.10x",
                    measured: "highest load \(FixedFormat.number(worst.load, decimals: 3))x at p = "
                        + "\(FixedFormat.number(worst.p, decimals: 2)); the budget allows 10% of requests plus "
                        + "1 retry/s per client, i.e. up to \(FixedFormat.number(budgetBound(report), decimals: 3))x here",
                    passed: worst.load <= 1.1))
        }
        if let pipeline = report.metastable.result(name) {
            let recovery = report.metastable.recovery(pipeline)
            let limit = report.metastable.schedule.cap * 2
            checks.append(
                GoalCheck(
                    goal: "Metastable: default recovers within 2 x cap (\(FixedFormat.seconds(limit, decimals: 0)))",
                    measured: "recovered after \(FixedFormat.seconds(recovery, decimals: 1))",
                    passed: recovery.map { $0 <= limit } ?? false))
        }
        if let immediate = report.metastable.result(StrategyName.immediate) {
            let recovery = report.metastable.recovery(immediate)
            checks.append(
                GoalCheck(
                    goal: "Metastable: immediate retry x3 never recovers",
                    measured: "immediate x3 recovery: \(FixedFormat.seconds(recovery, decimals: 1))",
                    passed: recovery == nil))
        }
        if let row = report.stability.first(where: { $0.strategy == name }) {
            checks.append(
                GoalCheck(
                    goal: "Metastable: default stable up to >= 90% of capacity",
                    measured: "stable up to \(FixedFormat.percent(row.highestStable, decimals: 0)) of capacity",
                    passed: row.highestStable >= 0.9 - 1e-9))
        }
        if let plain = report.tail.first(where: { $0.strategy == name }),
            let hedged = report.tail.first(where: { $0.strategy == name + " + hedging" }),
            let before = plain.p999, let after = hedged.p999
        {
            let cut = 1 - after.seconds / before.seconds
            let extra = hedged.load / max(plain.load, 1e-9) - 1
            checks.append(
                GoalCheck(
                    goal: "Hedging at p95 cuts p99.9 by >= 50% for <= 5% extra load",
                    measured: "p99.9 \(FixedFormat.milliseconds(before)) -> \(FixedFormat.milliseconds(after)) "
                        + "(-\(FixedFormat.percent(cut, decimals: 1))), extra load \(FixedFormat.percent(extra, decimals: 2))",
                    passed: cut >= 0.5 && extra <= 0.05))
        }
        return checks
    }
}
