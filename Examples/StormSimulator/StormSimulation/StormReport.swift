/// Every scenario run with every strategy, the goals checked, ready to print as markdown, JSON and SVG.
public struct StormReport: Sendable {
    /// Quick or full.
    public var mode: RunMode
    /// The seed every run derives its randomness from.
    public var seed: UInt64
    /// Scenario 1 under steady load.
    public var outage: ScenarioRun
    /// Scenario 1 in AWS's contention setup, without an outage.
    public var aws: ScenarioRun
    /// Scenario 1 in AWS's contention setup, after an outage.
    public var awsOutage: ScenarioRun
    /// Scenario 2's sweep.
    public var independent: [SweepPoint]
    /// Scenario 3 at 280 req/s.
    public var metastable: ScenarioRun
    /// Scenario 3's offered-load sweep.
    public var stability: [StabilityRow]
    /// Scenario 4.
    public var brownout: ScenarioRun
    /// Scenario 5.
    public var tail: [TailRow]
    /// The goals for the default pipeline.
    public var goals: [GoalCheck] = []

    /// Runs everything with the strategies `catalog` builds for a schedule.
    public static func generate(
        mode: RunMode, seed: UInt64, catalog: @Sendable (RetrySchedule) -> [ClientStrategy]
    ) -> StormReport {
        let standard = catalog(StormScenarios.standardSchedule)
        let awsStrategies = catalog(StormScenarios.awsSchedule)

        func runAll(_ scenario: Scenario, _ strategies: [ClientStrategy], _ schedule: RetrySchedule) -> ScenarioRun {
            ScenarioRun(
                scenario: scenario, schedule: schedule,
                results: strategies.map { StormSimulator.run(scenario, strategy: $0, seed: seed) })
        }

        let outage = runAll(StormScenarios.outage(mode), standard, StormScenarios.standardSchedule)
        let aws = runAll(StormScenarios.awsContention(outage: .zero), awsStrategies, StormScenarios.awsSchedule)
        let awsOutage = runAll(
            StormScenarios.awsContention(outage: .seconds(5)), awsStrategies, StormScenarios.awsSchedule)

        // The quick run sweeps and stress-tests only the strategies its tables and goals need.
        let swept = mode.isQuick ? standard.filter { MarkdownReport.sweepStrategies.contains($0.name) } : standard
        let quickStability = [
            StrategyName.noRetry, StrategyName.immediate, StrategyName.withBudget, StrategyName.defaultPipeline,
        ]
        let stressed = mode.isQuick ? standard.filter { quickStability.contains($0.name) } : standard

        var independent: [SweepPoint] = []
        for p in StormScenarios.failureProbabilities(mode) {
            let scenario = StormScenarios.independent(p: p, mode: mode)
            for strategy in swept {
                let result = StormSimulator.run(scenario, strategy: strategy, seed: seed)
                independent.append(
                    SweepPoint(
                        strategy: strategy.name, p: p, maxAttempts: strategy.maxAttempts,
                        successRate: result.successRate, load: result.amplification))
            }
        }

        let metastable = runAll(StormScenarios.metastable(mode), standard, StormScenarios.standardSchedule)
        var stability: [StabilityRow] = []
        for strategy in stressed {
            var points: [StabilityPoint] = []
            for fraction in StormScenarios.stabilityLoads(mode) {
                let scenario = StormScenarios.metastable(mode, offeredFraction: fraction)
                let run = runAll(scenario, [strategy], StormScenarios.standardSchedule)
                let recovery = run.recovery(run.results[0])
                let limit = run.loadEnd - run.faultEnd - .seconds(10)
                points.append(
                    StabilityPoint(
                        fraction: fraction, recovery: recovery, recovered: recovery.map { $0 <= limit } ?? false))
            }
            stability.append(StabilityRow(strategy: strategy.name, loads: points))
        }

        let brownout = runAll(StormScenarios.brownout(mode), standard, StormScenarios.standardSchedule)

        var tail: [TailRow] = []
        let tailScenario = StormScenarios.tail(mode)
        for name in [StrategyName.noRetry, StrategyName.defaultPipeline] {
            guard let strategy = standard.first(where: { $0.name == name }) else { continue }
            let plain = StormSimulator.run(tailScenario, strategy: strategy, seed: seed)
            tail.append(TailRow(result: plain, hedgeDelay: nil))
            guard let p95 = plain.latency(at: 0.95) else { continue }
            let delay = Duration.milliseconds(Int64((p95.seconds * 1000).rounded(.up)))
            let hedged = strategy.hedged(after: delay, name: name + " + hedging")
            tail.append(
                TailRow(result: StormSimulator.run(tailScenario, strategy: hedged, seed: seed), hedgeDelay: delay))
        }

        var report = StormReport(
            mode: mode, seed: seed, outage: outage, aws: aws, awsOutage: awsOutage, independent: independent,
            metastable: metastable, stability: stability, brownout: brownout, tail: tail)
        report.goals = GoalEvaluator.evaluate(report)
        return report
    }
}
