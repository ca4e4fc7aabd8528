import Foundation
import ResilienceKit
import ResilienceTesting
import Synchronization

/// Everything the storm simulator measured: goals over seeds, calibrations, tables and charts.
public struct StormReport: Sendable {
    /// The mode it ran in.
    public var mode: RunMode
    /// The seeds every goal was evaluated over.
    public var seeds: [UInt64]
    /// The traffic and server settings the scenarios ran with.
    public var parameters = ScenarioParameters()
    /// The goals for the shipped presets, each over every seed.
    public var goals: [Goal] = []
    /// The published anchors, reproduced.
    public var calibrations: [Calibration] = []
    /// One table per scenario.
    public var tables: [ReportTable] = []
    /// The charts, by file name.
    public var charts: [(name: String, chart: SVGChart)] = []
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension StormReport {
    /// Runs every scenario (or those in `only`) over the seeds starting at `firstSeed`, with `parameters`;
    /// the same arguments give the same report.
    public static func generate(
        mode: RunMode, firstSeed: UInt64, only: Set<String>? = nil, parameters: ScenarioParameters = .init()
    ) -> StormReport {
        var report = StormReport(mode: mode, seeds: mode.seeds(from: firstSeed, count: parameters.seedCount))
        report.parameters = parameters
        let wanted = { (name: String) in only?.contains(name) ?? true }
        if wanted("outage") { report.addOutage() }
        if wanted("brownout") { report.addBrownout() }
        if wanted("flap") { report.addFlap() }
        if wanted("metastable") { report.addMetastable() }
        if wanted("rate-limit") { report.addRateLimit() }
        if wanted("contention") { report.addContention() }
        if wanted("hedging") { report.addHedging() }
        if wanted("healthy") { report.addHealthy() }
        if wanted("quota") { report.addQuota() }
        if wanted("adaptive") { report.addAdaptive() }
        if wanted("priority") { report.addPriority() }
        if wanted("coalescing") { report.addCoalescing() }
        return report
    }

    /// The scenario names ``generate(mode:firstSeed:only:)`` accepts.
    public static let scenarioNames = [
        "outage", "brownout", "flap", "metastable", "rate-limit", "contention", "hedging", "healthy", "quota",
        "adaptive", "priority", "coalescing",
    ]

    /// Whether every goal holds (each in at least 19 of 20 seeds).
    public var allGoalsHold: Bool { goals.allSatisfy(\.summary.holds) }

    /// Runs `body` for every seed, two at a time on separate threads; results come back in seed order.
    func perSeed<T: Sendable>(_ body: @escaping @Sendable (UInt64) -> T) -> [T] {
        let seeds = seeds
        let results = Mutex<[T?]>(Array(repeating: nil, count: seeds.count))
        DispatchQueue.concurrentPerform(iterations: seeds.count) { index in
            let value = body(seeds[index])
            results.withLock { $0[index] = value }
        }
        return results.withLock { $0.map { $0! } }
    }

    /// The rows of `strategies` that run with this report's parameters (`--preset`).
    /// When `--rate-per-client` gives every row the same traffic, the app-facing baseline would repeat the
    /// server-facing one, so it is left out and ``baseline(of:in:)`` falls back to the other.
    func selected(_ strategies: [Strategy]) -> [Strategy] {
        strategies.filter { strategy in
            // With one rate per client for both kinds of traffic, the app-facing copy of the no-retry row is the
            // server-facing one again.
            parameters.runs(strategy)
                && !(parameters.ratePerClient != nil && strategy.name == StrategyCatalog.noRetryApp.name
                    && strategies.contains { $0.name == StrategyCatalog.noRetry.name })
        }
    }

    /// The baseline row of `strategies` with the traffic of `strategy` (any baseline when none has it: all
    /// rows then share one rate per client).
    static func baseline(of strategy: Strategy, in strategies: [Strategy]) -> Int? {
        strategies.firstIndex { $0.role == .baseline && $0.profile == strategy.profile }
            ?? strategies.firstIndex { $0.role == .baseline }
    }

    /// The goals every fault scenario checks for a shipped preset against its no-retry baseline, seed by
    /// seed: success over the fault and the recovery after it no worse than not retrying (− 1 pp), and
    /// (`recoveryFrom` given) ≥ 95 % of each second's requests succeeding again within the preset's
    /// recovery time (``StrategyCatalog/recoveryGoal(of:)``).
    mutating func addFaultGoals(
        _ scenario: String, strategy: Strategy, _ measurements: [Measurement], baseline: [Measurement],
        measured: Range<Int>, recoveryFrom: Int?
    ) {
        let success = measurements.map { $0.successRate(measured) }
        let floor = baseline.map { $0.successRate(measured) - 0.01 }
        goals.append(
            Goal(
                name: "\(scenario): success over the fault and the recovery ≥ no retry − 1 pp",
                strategy: strategy.name, target: "≥ no retry − 1 pp",
                summary: SeedSummary(values: success, passed: zip(success, floor).map { $0 >= $1 }),
                format: Self.percent))
        guard let recoveryFrom else { return }
        let limit = StrategyCatalog.recoveryGoal(of: strategy)
        let recovery = measurements.map { Double($0.recovery(after: recoveryFrom, until: measured.upperBound) ?? 999) }
        goals.append(
            Goal(
                name:
                    "\(scenario): ≥ 95 % of each second's requests succeed within \(limit) s of the server's recovery",
                strategy: strategy.name, target: "≤ \(limit) s",
                summary: SeedSummary(recovery) { $0 <= Double(limit) }, format: Self.seconds))
    }

    /// Every strategy's measurement per seed.
    func measure(_ run: TrafficRun, _ strategies: [Strategy]) -> [[Measurement]] {
        let perSeed = perSeed { seed in strategies.map { run.measure($0, seed: seed) } }
        return strategies.indices.map { index in perSeed.map { $0[index] } }
    }

    static func ratio(_ value: Double) -> String { FixedFormat.number(value) + "×" }
    static func percent(_ value: Double) -> String { FixedFormat.percent(value) }
    static func seconds(_ value: Double) -> String {
        value >= 999 ? "never" : FixedFormat.number(value, decimals: 0) + " s"
    }
    static func milliseconds(_ value: Double) -> String { FixedFormat.number(value * 1000, decimals: 1) + " ms" }

    static func cell(_ summary: SeedSummary, _ format: (Double) -> String) -> String {
        "\(format(summary.median)) [\(format(summary.minimum)) – \(format(summary.maximum))]"
    }

    static func series(_ strategy: Strategy, _ values: [Int], upTo end: Int) -> SVGChart.Series {
        SVGChart.Series(
            name: strategy.name, points: (0..<min(end, values.count)).map { (Double($0), Double(values[$0])) },
            dashed: strategy.isAppFacingBaseline, color: strategy.color)
    }

    // MARK: Scenarios

    mutating func addOutage() {
        let (run, window) = Scenarios.outage(mode, parameters)
        let strategies = selected([
            StrategyCatalog.noRetry, StrategyCatalog.standard, StrategyCatalog.background, StrategyCatalog.noRetryApp,
            StrategyCatalog.interactive, StrategyCatalog.budgetOnly,
        ])
        let results = measure(run, strategies)
        let measured = window.fault.lowerBound..<window.end
        var rows: [[String]] = []
        for (strategy, measurements) in zip(strategies, results) {
            let load = SeedSummary(measurements.map { $0.loadRatio(window.fault) })
            let success = SeedSummary(measurements.map { $0.successRate(measured) })
            let recovery = SeedSummary(
                measurements.map { Double($0.recovery(after: window.fault.upperBound, until: window.end) ?? 999) })
            rows.append([
                strategy.name, strategy.role.rawValue, strategy.profile.rawValue, Self.cell(load, Self.ratio),
                Self.cell(success, Self.percent), Self.cell(recovery, Self.seconds),
            ])
            if strategy.role == .shipped {
                let bound = OutageLoadBound.maximum(rate: run.rate(strategy.profile))
                goals.append(
                    Goal(
                        name: "Full outage: load ≤ bound(rate per pipeline) × offered while it lasts",
                        strategy: strategy.name, target: "≤ \(Self.ratio(bound))",
                        summary: SeedSummary(load.values) { $0 <= bound + 1e-9 }, format: Self.ratio))
                if let budget = Self.preset(strategy)?.retryBudget {
                    // The bound the preset's budget guarantees at this rate and outage length (its breaker
                    // only lowers the load further).
                    let guaranteed = RetryBudgetBound.outageLoad(
                        budget, rate: run.rate(strategy.profile), outage: Double(window.fault.count),
                        age: Double(window.fault.lowerBound), attempts: Self.maxAttempts(strategy))
                    goals.append(
                        Goal(
                            name: "Full outage: load ≤ the budget's derived bound " + RetryBudgetBound.formula,
                            strategy: strategy.name, target: "≤ \(Self.ratio(guaranteed))",
                            summary: SeedSummary(load.values) { $0 <= guaranteed + 1e-9 }, format: Self.ratio))
                }
                if let baseline = Self.baseline(of: strategy, in: strategies) {
                    addFaultGoals(
                        "Full outage", strategy: strategy, measurements, baseline: results[baseline],
                        measured: measured, recoveryFrom: window.fault.upperBound)
                }
            }
            if strategy.name == StrategyCatalog.budgetOnly.name {
                let configuration = RetryBudgetConfiguration.standard
                // The documented bound, at the rate each client really sends and the outage's length: the
                // window's credit from before the outage (W ÷ T) plus the slide's n ÷ (n − 1), at most the
                // standard policy's 3 attempts.
                let rate = run.rate(strategy.profile)
                let slices = Double(configuration.buckets)
                let credit = configuration.window.seconds / Double(window.fault.count)
                let perRequest = configuration.ratio + configuration.minimumPerSecond / rate
                let share = perRequest * (slices / (slices - 1) + credit)
                let bound = 1 + min(Double(StandardRetryPolicy.standard.maxAttempts - 1), share)
                goals.append(
                    Goal(
                        name: "Retry budget alone, full outage: load ≤ documented bound "
                            + "1 + min(attempts − 1, (ratio + min/s ÷ rate) × (n ÷ (n − 1) + W ÷ T))",
                        strategy: strategy.name, target: "≤ \(Self.ratio(bound))",
                        summary: SeedSummary(load.values) { $0 <= bound + 1e-9 }, format: Self.ratio))
            }
        }
        var profiles: [TrafficProfile] = []
        for strategy in strategies where !profiles.contains(strategy.profile) { profiles.append(strategy.profile) }
        let perClient = profiles.map {
            "\($0.rawValue) \(FixedFormat.number(run.rate($0)))/s per client (\(run.clients($0)) clients)"
        }
        tables.append(
            ReportTable(
                title: "Full outage",
                notes: [
                    "server: \(run.server.workers) workers × exponential \(Scenarios.meanServiceMilliseconds(run.server)) ms = \(FixedFormat.number(run.server.capacity, decimals: 0)) requests/s, network |N(10 ms, 2 ms)| each way",
                    "fault: every request answered 503 at once from \(window.fault.lowerBound) s to \(window.fault.upperBound) s; recovery measured until \(window.end) s",
                    "clients: \(FixedFormat.number(run.offeredPerSecond, decimals: 0)) requests/s (Poisson); "
                        + perClient.joined(separator: ", ")
                        + "; each client calls \(TrafficRun.keysPerClient) keys of one host, a preset row's keys share one PresetScope",
                    "outage load goal per scope rate r: \(OutageLoadBound.formula); the budget's derived bound: "
                        + RetryBudgetBound.formula,
                    "load = server arrivals ÷ requests offered during the outage; success over the outage and the recovery; recovery = seconds after the outage from which every second's requests succeed ≥ 95 %; median [min – max] over \(seeds.count) seeds",
                ],
                header: ["strategy", "role", "traffic", "load during outage", "success", "recovery"], rows: rows))
        var chart = SVGChart(
            title: "Full outage: server arrivals per second (seed \(seeds[0]))", xLabel: "time (s)",
            yLabel: "requests/s",
            series: zip(strategies, results).map { Self.series($0, $1[0].arrivals, upTo: Int(run.duration.seconds)) },
            shaded: (Double(window.fault.lowerBound), Double(window.fault.upperBound)))
        chart.references = [
            ("capacity \(FixedFormat.number(run.server.capacity, decimals: 0))/s", run.server.capacity),
            ("offered \(FixedFormat.number(run.offeredPerSecond, decimals: 0))/s", run.offeredPerSecond),
        ]
        charts.append(("outage-load.svg", chart))
    }

    mutating func addFlap() {
        let (run, flap, p) = Scenarios.flap(mode, parameters)
        let strategies = selected([
            StrategyCatalog.noRetry, StrategyCatalog.standard, StrategyCatalog.background, StrategyCatalog.noRetryApp,
            StrategyCatalog.interactive,
        ])
        let results = measure(run, strategies)
        let measured = 0..<Int(run.duration.seconds)
        var rows: [[String]] = []
        for (strategy, measurements) in zip(strategies, results) {
            let success = SeedSummary(measurements.map { $0.successRate(measured) })
            let load = SeedSummary(measurements.map { $0.loadRatio(measured) })
            rows.append([
                strategy.name, strategy.role.rawValue, strategy.profile.rawValue, Self.cell(load, Self.ratio),
                Self.cell(success, Self.percent),
            ])
            if strategy.role == .shipped, let baseline = Self.baseline(of: strategy, in: strategies) {
                addFaultGoals(
                    "Flapping server", strategy: strategy, measurements, baseline: results[baseline],
                    measured: measured, recoveryFrom: nil)
            }
        }
        tables.append(
            ReportTable(
                title: "Flapping server",
                notes: [
                    "server: as in the outage; down (503 at once) \(flap.down) s in every \(flap.up + flap.down) s from \(flap.up) s, and a brownout of p = \(FixedFormat.number(p)) throughout",
                    "clients: \(FixedFormat.number(run.offeredPerSecond, decimals: 0)) requests/s for \(FixedFormat.number(run.duration.seconds, decimals: 0)) s; success over the whole run; median [min – max] over \(seeds.count) seeds",
                ],
                header: ["strategy", "role", "traffic", "load", "success"], rows: rows))
    }

    mutating func addBrownout() {
        let strategies = selected([
            StrategyCatalog.noRetry, StrategyCatalog.standard, StrategyCatalog.background, StrategyCatalog.noRetryApp,
            StrategyCatalog.interactive,
        ])
        let levels = Scenarios.brownoutLevels(mode, parameters)
        var rows: [[String]] = []
        var medians: [[Double]] = Array(repeating: [], count: strategies.count)
        var budgetLimited: [String] = []
        for p in levels {
            let run = Scenarios.brownout(mode, p: p, parameters)
            let results = measure(run, strategies)
            for (index, strategy) in strategies.enumerated() {
                let success = results[index].map(\.successRate)
                let summary = SeedSummary(success)
                medians[index].append(summary.median)
                let attempts = Self.maxAttempts(strategy)
                let ideal = 1 - pow(p, Double(attempts))
                rows.append([
                    FixedFormat.number(p), strategy.name, "\(attempts)", Self.percent(ideal),
                    Self.cell(summary, Self.percent),
                ])
                guard strategy.role == .shipped, let baselineIndex = Self.baseline(of: strategy, in: strategies) else {
                    continue
                }
                let baseline = results[baselineIndex]
                goals.append(
                    Goal(
                        name: "Brownout p = \(FixedFormat.number(p)): success ≥ no retry", strategy: strategy.name,
                        target: "≥ no retry",
                        summary: SeedSummary(
                            values: success, passed: zip(success, baseline).map { $0 >= $1.successRate }),
                        format: Self.percent))
                // Every retry the budget allows goes to a request that failed and succeeds with probability
                // 1 − p, so success = (1 − p)(1 + min(a, p + … + pⁿ⁻¹)): 1 − pⁿ where the budget allows n
                // attempts, (1 − p)(1 + a) where it allows a retries per request; each seed is judged against
                // the formula at the failures the server produced in it (`BrownoutBound`).
                let bound = BrownoutBound(p: p, attempts: attempts, model: Self.budgetRuleModel(strategy, run))
                if bound.isBudgetLimited {
                    budgetLimited.append(
                        "\(strategy.name) at p = \(FixedFormat.number(p)) (needs \(FixedFormat.number(bound.retriesNeeded)) retries per request, "
                            + "the budget allows \(FixedFormat.number(bound.retriesAllowed)): bound \(Self.percent(bound.success)))"
                    )
                }
                goals.append(
                    Goal(
                        name:
                            "Brownout p = \(FixedFormat.number(p)): success within 0.5 pp of (1 − p)(1 + min(a, p + … + pⁿ⁻¹))",
                        strategy: strategy.name, target: Self.percent(bound.success) + " ± 0.5 pp",
                        summary: SeedSummary(
                            values: success,
                            passed: results[index].map { seed in
                                let expected = bound.expectedSuccess(given: seed.attempts, requests: seed.totalOffered)
                                return abs(seed.successRate - expected) <= 0.005
                            }),
                        format: Self.percent))
            }
        }
        tables.append(
            ReportTable(
                title: "Brownout",
                notes: [
                    "server: as in the outage; each request fails with probability p (503 after service) for the whole run",
                    "n = the preset's attempts; 1 − pⁿ is the success of n independent attempts; median [min – max] over \(seeds.count) seeds",
                    "the bound is 1 − pⁿ where the retry budget allows n attempts, else (1 − p)(1 + a) with a = the retries per request the budget's rule grants a scope of the client's rate run alone (BudgetRuleModel: Poisson arrivals, the server's round trips, the preset's backoff, 200,000 requests); each seed is judged at the failures the server produced in it (BrownoutBound); budget-limited: "
                        + (budgetLimited.isEmpty ? "none" : budgetLimited.joined(separator: "; ")),
                ],
                header: ["p", "strategy", "n", "1 − pⁿ", "success"], rows: rows))
        charts.append(
            (
                "brownout-success.svg",
                SVGChart(
                    title: "Brownout: success rate against p (median of \(seeds.count) seeds)",
                    xLabel: "failure probability p",
                    yLabel: "success rate",
                    series: zip(strategies, medians).map { strategy, values in
                        SVGChart.Series(
                            name: strategy.name, points: zip(levels, values).map { ($0, $1) },
                            dashed: strategy.isAppFacingBaseline, color: strategy.color)
                    })
            ))
    }

    /// The shipped preset a strategy runs (nil for the baselines and tuned rows).
    static func preset(_ strategy: Strategy) -> PipelinePreset? {
        switch strategy.name {
        case StrategyCatalog.standard.name: .standard
        case StrategyCatalog.background.name: .background
        case StrategyCatalog.interactive.name: .interactive
        default: nil
        }
    }

    /// The budget's rule alone for a shipped preset's scope in `run` (nil without a budget): the preset's budget,
    /// retry policy and total deadline, the client's rate, and the server's round trips.
    static func budgetRuleModel(_ strategy: Strategy, _ run: TrafficRun) -> BudgetRuleModel? {
        guard let preset = preset(strategy), let budget = preset.retryBudget,
            let policy = preset.retry as? StandardRetryPolicy
        else { return nil }
        let server = run.server
        return BudgetRuleModel(
            budget: budget, policy: policy, deadline: preset.totalDeadline?.seconds, rate: run.rate(strategy.profile),
            duration: run.duration.seconds,
            answer: { generator in
                (server.networkDelay.sample(using: &generator) + server.serviceTime.sample(using: &generator)
                    + server.networkDelay.sample(using: &generator)).seconds
            })
    }

    static func maxAttempts(_ strategy: Strategy) -> Int {
        (preset(strategy)?.retry as? StandardRetryPolicy)?.maxAttempts ?? 1
    }

    mutating func addMetastable() {
        let (run, stallEnd, end) = Scenarios.metastable(mode, parameters)
        let strategies = selected([
            StrategyCatalog.noRetry, Scenarios.bronson, StrategyCatalog.standard, StrategyCatalog.background,
            StrategyCatalog.noRetryAppDeadline, StrategyCatalog.interactive,
        ])
        let results = measure(run, strategies)
        var rows: [[String]] = []
        for (strategy, measurements) in zip(strategies, results) {
            let tail = SeedSummary(measurements.map { $0.meanArrivals((end - 20)..<end) })
            let recovery = SeedSummary(measurements.map { Double($0.recovery(after: stallEnd, until: end) ?? 999) })
            rows.append([
                strategy.name, strategy.role.rawValue, Self.cell(tail, { FixedFormat.number($0, decimals: 0) + "/s" }),
                Self.cell(recovery, Self.seconds),
            ])
            if strategy.role == .calibration && parameters.stall == nil && parameters.offered == nil
                && parameters.capacity == nil
            {
                calibrations.append(
                    Calibration(
                        name: "Bronson et al. metastable case: load in the last 20 s (requests/s)",
                        anchor: 2 * run.offeredPerSecond,
                        tolerance: 0.10, summary: tail))
            }
            if strategy.role == .shipped {
                goals.append(
                    Goal(
                        name: "Stall: ≥ 95 % of offered served within 20 s of the stall's end",
                        strategy: strategy.name, target: "≤ 20 s",
                        summary: SeedSummary(recovery.values) { $0 <= 20 }, format: Self.seconds))
            }
        }
        tables.append(
            ReportTable(
                title: "Metastable case (Bronson et al.)",
                notes: [
                    "server: \(run.server.workers) workers × \(Scenarios.meanServiceMilliseconds(run.server)) ms = \(FixedFormat.number(run.server.capacity, decimals: 0)) requests/s; it stops serving from 10 s to \(stallEnd) s (requests queue) and finishes work clients gave up on",
                    "the calibration row reproduces the published loop; the no-retry row is the baseline, and the no-retry row with a 10 s deadline is what `.interactive`'s deadline alone allows (every row's traffic: \(FixedFormat.number(run.rate(.serverFacing)))/s per server-facing client, \(FixedFormat.number(run.rate(.appFacing)))/s per app-facing client)",
                    "clients: \(FixedFormat.number(run.offeredPerSecond, decimals: 0)) requests/s for \(end) s; recovery = seconds after \(stallEnd) s from which every second's requests succeed ≥ 95 %",
                ],
                header: ["strategy", "role", "load, last 20 s", "recovery"], rows: rows))
        var load = SVGChart(
            title: "Metastable case: server arrivals per second (seed \(seeds[0]))", xLabel: "time (s)",
            yLabel: "requests/s",
            series: zip(strategies, results).map { Self.series($0, $1[0].arrivals, upTo: end) },
            shaded: (10, Double(stallEnd)))
        load.references = [
            ("capacity \(FixedFormat.number(run.server.capacity, decimals: 0))/s", run.server.capacity),
            ("offered \(FixedFormat.number(run.offeredPerSecond, decimals: 0))/s", run.offeredPerSecond),
        ]
        charts.append(("metastable-load.svg", load))
        var success = SVGChart(
            title: "Metastable case: share of each second's requests that succeed (seed \(seeds[0]))",
            xLabel: "time (s)",
            yLabel: "success",
            series: zip(strategies, results).map { strategy, measurements in
                SVGChart.Series(
                    name: strategy.name,
                    points: (0..<end).map { (Double($0), measurements[0].successRate(second: $0)) },
                    dashed: strategy.isAppFacingBaseline, color: strategy.color)
            }, shaded: (10, Double(stallEnd)))
        success.references = [("95 %", 0.95)]
        charts.append(("metastable-success.svg", success))
    }

    mutating func addRateLimit() {
        let run = Scenarios.rateLimit(mode, parameters)
        let strategies = selected([
            StrategyCatalog.noRetry, StrategyCatalog.standard, StrategyCatalog.background, StrategyCatalog.noRetryApp,
            StrategyCatalog.interactive,
        ])
        let results = measure(run, strategies)
        var rows: [[String]] = []
        let count: @Sendable (Double) -> String = { FixedFormat.number($0, decimals: 0) }
        for (strategy, measurements) in zip(strategies, results) {
            let sent = SeedSummary(measurements.map { Double($0.sentEarly) })
            let early = SeedSummary(measurements.map { Double($0.earlyRequests) })
            let load = SeedSummary(measurements.map { $0.loadRatio(0..<Int(run.duration.seconds)) })
            let success = SeedSummary(measurements.map(\.successRate))
            rows.append([
                strategy.name, strategy.role.rawValue, strategy.profile.rawValue, Self.cell(sent, count),
                Self.cell(early, count), Self.cell(load, Self.ratio), Self.cell(success, Self.percent),
            ])
            if strategy.role == .shipped {
                goals.append(
                    Goal(
                        name: "Rate limit: zero requests sent before the time Retry-After asked for",
                        strategy: strategy.name,
                        target: "0", summary: SeedSummary(sent.values) { $0 == 0 }, format: count))
            }
        }
        tables.append(
            ReportTable(
                title: "Rate limit with Retry-After",
                notes: [
                    "server: each client may send 2 requests/s; beyond that 429 with Retry-After: 30, and the client is blocked 30 s",
                    "sent early = requests a client sent after it had received a Retry-After that had not passed yet (the goal)",
                    "arrived early = requests that arrived while their client was blocked, including those already on the wire when the server answered 429 (at most one network round trip's worth)",
                ],
                header: ["strategy", "role", "traffic", "sent early", "arrived early", "load", "success"], rows: rows))
    }

    mutating func addContention() {
        let entries = Scenarios.contention
        let perSeed = perSeed { seed in entries.map { ContentionRun().measure($0.policy, seed: seed) } }
        let results = entries.indices.map { index in perSeed.map { $0[index] } }
        let fullJitter = results[0]
        var rows: [[String]] = []
        for (entry, measured) in zip(entries, results) {
            let calls = SeedSummary(measured.map { Double($0.calls) })
            let completion = SeedSummary(measured.map { $0.completion.seconds })
            let completed = measured.map(\.completed).min() ?? 0
            rows.append([
                entry.name, FixedFormat.number(calls.mean, decimals: 0),
                Self.cell(calls, { FixedFormat.number($0, decimals: 0) }),
                Self.cell(completion, { FixedFormat.number($0, decimals: 2) + " s" }), "\(completed)/100",
            ])
            if let anchor = entry.anchor {
                calibrations.append(
                    Calibration(
                        name: "AWS backoff study, \(entry.name): calls", anchor: anchor, tolerance: 0.05, summary: calls
                    ))
            } else {
                let ratios = zip(measured, fullJitter).map { Double($0.calls) / Double(max($1.calls, 1)) }
                goals.append(
                    Goal(
                        name: "Contention (AWS model): calls ≤ 1.05× full jitter's, all 100 clients complete",
                        strategy: entry.name, target: "≤ 1.05×",
                        summary: SeedSummary(
                            values: ratios, passed: zip(ratios, measured).map { $0 <= 1.05 && $1.completed == 100 }),
                        format: Self.ratio))
            }
        }
        // The shipped presets' own pipelines (retry, budget, breaker, limiter, timeouts) in the same model.
        let presets = selected(StrategyCatalog.shipped)
        let presetRuns = self.perSeed { seed in
            presets.map { ContentionRun().measure(seed: seed, makePipeline: $0.makePipeline) }
        }
        for (index, strategy) in presets.enumerated() {
            let measured = presetRuns.map { $0[index] }
            let calls = SeedSummary(measured.map { Double($0.calls) })
            let completion = SeedSummary(measured.map { $0.completion.seconds })
            rows.append([
                strategy.name + " (its own pipeline)", FixedFormat.number(calls.mean, decimals: 0),
                Self.cell(calls, { FixedFormat.number($0, decimals: 0) }),
                Self.cell(completion, { FixedFormat.number($0, decimals: 2) + " s" }),
                "\(measured.map(\.completed).min() ?? 0)/100",
            ])
            let callRatios = zip(measured, fullJitter).map { Double($0.calls) / Double(max($1.calls, 1)) }
            goals.append(
                Goal(
                    name:
                        "Contention (AWS model), the preset's own pipeline: calls ≤ 1.05× full jitter's, all 100 complete",
                    strategy: strategy.name, target: "≤ 1.05×",
                    summary: SeedSummary(
                        values: callRatios, passed: zip(callRatios, measured).map { $0 <= 1.05 && $1.completed == 100 }),
                    format: Self.ratio))
            for quantile in [0.5, 0.99] {
                let ratios = zip(measured, fullJitter).map { preset, jitter in
                    (preset.completion(at: quantile)?.seconds ?? .infinity)
                        / max(jitter.completion(at: quantile)?.seconds ?? .infinity, 1e-9)
                }
                goals.append(
                    Goal(
                        name: "Contention (AWS model), the preset's own pipeline: completion p\(Int(quantile * 100)) "
                            + "≤ 1.5× full jitter's",
                        strategy: strategy.name, target: "≤ 1.50×", summary: SeedSummary(ratios) { $0 <= 1.5 },
                        format: Self.ratio))
            }
        }
        tables.append(
            ReportTable(
                title: "Contention (AWS backoff study)",
                notes: [
                    "100 clients update one row once under optimistic concurrency (read, then write; retry until success); every message |N(10 ms, 2 ms)|",
                    "backoff base 5 ms (the study's first retry waits 2 × base: the library's base is 10 ms), cap 2 s",
                    "a preset's own pipeline: each client calls through the preset as shipped, and calls again when the pipeline gives up (after the time a rejection names), until its write lands; completion p50/p99 = when the clients' writes landed, against full jitter's, seed by seed",
                ],
                header: ["backoff", "mean calls", "calls", "completion", "completed (worst seed)"], rows: rows))
    }

    mutating func addHedging() {
        let run = Scenarios.tail(mode, parameters)
        let strategies = selected([StrategyCatalog.standard, Scenarios.hedged, Scenarios.unboundedHedged])
        guard let plainIndex = strategies.firstIndex(where: { $0.name == StrategyCatalog.standard.name }),
            let hedgedIndex = strategies.firstIndex(where: { $0.name == Scenarios.hedged.name })
        else { return }
        let results = measure(run, strategies)
        let seconds = 0..<Int(run.duration.seconds)
        var rows: [[String]] = []
        for (strategy, measurements) in zip(strategies, results) {
            let p50 = SeedSummary(measurements.map { $0.latency(at: 0.5)?.seconds ?? .nan })
            let p999 = SeedSummary(measurements.map { $0.latency(at: 0.999)?.seconds ?? .nan })
            let load = SeedSummary(measurements.map { $0.loadRatio(seconds) })
            rows.append([
                strategy.name, strategy.role.rawValue, Self.cell(p50, Self.milliseconds),
                Self.cell(p999, Self.milliseconds), Self.cell(load, Self.ratio),
            ])
        }
        // The hedged row against the same pipeline without hedging, seed by seed.
        let (plain, hedged) = (results[plainIndex], results[hedgedIndex])
        let reduction = zip(plain, hedged).map { plain, hedged in
            1 - (hedged.latency(at: 0.999)?.seconds ?? .infinity) / (plain.latency(at: 0.999)?.seconds ?? .infinity)
        }
        let extra = zip(plain, hedged).map { $1.loadRatio(seconds) / max($0.loadRatio(seconds), 1e-9) - 1 }
        goals.append(
            Goal(
                name: "Hedging (real HedgingStrategy): p99.9 −50 % for ≤ 5 % extra load",
                strategy: strategies[hedgedIndex].name, target: "≥ 50 % and ≤ 5 %",
                summary: SeedSummary(
                    values: reduction, passed: zip(reduction, extra).map { $0 >= 0.5 && $1 <= 0.05 }),
                format: { Self.percent($0) + " shorter" }))
        tables.append(
            ReportTable(
                title: "Tail latency and hedging",
                notes: [
                    "server: 60 workers, service exponential 20 ms except 1 % of requests 1–2 s longer; \(FixedFormat.number(run.offeredPerSecond, decimals: 0)) requests/s; server-facing clients (4 requests/s each)",
                    "the hedged row is compared with Pipeline.standard, seed by seed; extra load (median): \(Self.percent(SeedSummary(extra).median))",
                    "the calibration row hedges without the stage's load bound (maxExtraLoad: .infinity); on a server with little headroom (--capacity 110) every call outlasts the delay and it sends each twice",
                    "Pipeline.standard's token bucket (10 burst, 10/s) runs at 40 % of its rate here, so neither requests nor hedges wait for it: the p99.9 is the server's tail",
                ],
                header: ["strategy", "role", "p50", "p99.9", "load"], rows: rows))
    }
}
