import ResilienceKit

/// The adaptive concurrency scenario: a server whose slots fall and come back, and a sudden load spike,
/// with the library's ``AdaptiveConcurrencyLimiter`` (each algorithm) beside a fixed bulkhead and no limit.
struct AdaptiveScenario: Sendable {
    /// A row of the scenario: a name, a colour and what stands in front of the server.
    struct Row: Sendable {
        var name: String
        var color: String
        var admission: ConcurrencyServerRun.Admission
        /// Whether the goals apply (the shipped default); the other rows are measured beside it.
        var isDefault = false
    }

    let slots: Int
    let slotsAfter: Int
    let changeAt: Double
    let overload: Double
    /// The run whose slots fall at `changeAt` and come back 60 s later, under a constant load of
    /// `overload` × the capacity after the fall.
    let drop: ConcurrencyServerRun
    /// The run with `slots` throughout, 80 % of capacity, and `overload` × capacity for 30 s from `changeAt`.
    let spike: ConcurrencyServerRun

    init(_ parameters: ScenarioParameters) {
        slots = parameters.slots ?? 100
        slotsAfter = parameters.slotsAfter ?? 40
        changeAt = Double(parameters.changeAt ?? 60)
        overload = parameters.overload ?? 2
        let meanService = 0.1
        drop = ConcurrencyServerRun(
            slotsBefore: slots, slotsAfter: slotsAfter, changeAt: changeAt, restoreAt: changeAt + 60,
            offered: [(0, parameters.offered ?? overload * Double(slotsAfter) / meanService)],
            duration: changeAt + 120)
        let capacity = Double(slots) / meanService
        spike = ConcurrencyServerRun(
            slotsBefore: slots, slotsAfter: slots,
            offered: [(0, 0.8 * capacity), (changeAt, overload * capacity), (changeAt + 30, 0.8 * capacity)],
            duration: changeAt + 60)
    }

    static let rows: [Row] = [
        Row(name: "no limit", color: "#7f7f7f", admission: .none),
        Row(name: "bulkhead (slots before)", color: "#8c564b", admission: .none),
        Row(
            name: "adaptive: gradient2 (default)", color: "#1f77b4",
            admission: .adaptive(.standard, usesPriorities: true), isDefault: true),
        Row(
            name: "adaptive: vegas", color: "#2ca02c",
            admission: .adaptive(configuration(.vegas()), usesPriorities: true)),
        Row(
            name: "adaptive: aimd", color: "#ff7f0e", admission: .adaptive(configuration(.aimd()), usesPriorities: true)
        ),
    ]

    static func configuration(_ algorithm: AdaptiveLimitAlgorithm) -> AdaptiveConcurrencyLimiter.Configuration {
        var configuration = AdaptiveConcurrencyLimiter.Configuration.standard
        configuration.algorithm = algorithm
        return configuration
    }

    /// The rows with the bulkhead sized to the slots before the change (the number somebody would type).
    var rows: [Row] {
        Self.rows.map { row in
            var row = row
            if row.name.hasPrefix("bulkhead") { row.admission = .bulkhead(slots) }
            return row
        }
    }

    /// What one seed of one row measured.
    struct Outcome: Sendable {
        var drop: ConcurrencyServerResult
        var spike: ConcurrencyServerResult
        /// Seconds after the fall until the limit stays within [0.9, 1.2] × the slots after it (999: never).
        var settle: Double
        /// Admitted p99 ÷ unloaded p99 from 10 s after the fall until the slots return.
        var overloadedP99: Double
        /// The same over the whole overloaded period, the fall's transient included.
        var overloadedP99WithTransient: Double
        /// Successes per second while overloaded (settled), as a share of the capacity after the fall.
        var overloadedGoodput: Double
        /// Requests rejected while offered ≤ 80 % of capacity (after a 10 s warm-up), both runs.
        var rejectedBelow80: Double
        /// Seconds after the slots return until the limit reaches the concurrency the offered load needs.
        var climbBack: Double
        /// Admitted p99 ÷ unloaded p99 during the spike.
        var spikeP99: Double
        /// Successes per second during the spike, as a share of capacity.
        var spikeGoodput: Double
    }

    /// Seconds after `start` from which every sample of the limit up to `end` lies in `band`; 999 (never) when
    /// the limit is out of the band at the period's last sample, or only comes into it for good at the end of
    /// the period (a limit that leaves the band 1 s before `end` has not settled, whatever it does in that
    /// last second).
    static func settleTime(
        _ limits: [(time: Double, limit: Double)], band: ClosedRange<Double>, from start: Double, until end: Double,
        sampleInterval: Double
    ) -> Double {
        let period = limits.filter { $0.time >= start && $0.time < end }
        guard let last = period.last, band.contains(last.limit) else { return 999 }
        guard let lastOutside = period.last(where: { !band.contains($0.limit) }) else { return 0 }
        let settledAt = lastOutside.time + sampleInterval
        // A limit must be seen in the band for at least a second before the period ends to count as settled.
        return end - settledAt < 1 ? 999 : settledAt - start
    }

    func measure(_ row: Row, seed: UInt64) -> Outcome {
        let dropResult = drop.run(row.admission, seed: seed)
        let spikeResult = spike.run(row.admission, seed: seed &+ 10_000)
        let restoreAt = changeAt + 60
        let low = 0.9 * Double(slotsAfter)
        let high = 1.2 * Double(slotsAfter)
        let settle = Self.settleTime(
            dropResult.limits, band: low...high, from: changeAt, until: restoreAt, sampleInterval: drop.sampleInterval)
        let unloaded = dropResult.unloaded(at: 0.99)
        let settled = (changeAt + 10)..<restoreAt
        let change = Int(changeAt)
        let meanService = (drop.service.lowerBound + drop.service.upperBound) / 2
        let needed = min(drop.rate(at: restoreAt) * meanService, Double(slots))
        let climb =
            dropResult.limits.first { $0.time >= restoreAt && $0.limit >= needed }.map { $0.time - restoreAt } ?? 999
        var rejectedBelow80 = Double(spikeResult.rejected[10..<change].reduce(0, +))
        if drop.rate(at: 0) <= 0.8 * drop.capacity(at: 0) {
            rejectedBelow80 += Double(dropResult.rejected[10..<change].reduce(0, +))
        }
        let spikeUnloaded = spikeResult.unloaded(at: 0.99)
        return Outcome(
            drop: dropResult, spike: spikeResult, settle: settle,
            overloadedP99: dropResult.latency(at: 0.99, in: settled) / unloaded,
            overloadedP99WithTransient: dropResult.latency(at: 0.99, in: changeAt..<restoreAt) / unloaded,
            overloadedGoodput: dropResult.goodput((change + 10)..<(change + 60)) / drop.capacity(at: changeAt),
            rejectedBelow80: rejectedBelow80,
            climbBack: climb,
            spikeP99: spikeResult.latency(at: 0.99, in: changeAt..<(changeAt + 30)) / spikeUnloaded,
            spikeGoodput: spikeResult.goodput(change..<(change + 30)) / spike.capacity(at: changeAt))
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension StormReport {
    mutating func addAdaptive() {
        let scenario = AdaptiveScenario(parameters)
        let rows = scenario.rows
        let perSeed = perSeed { seed in rows.map { scenario.measure($0, seed: seed) } }
        let results = rows.indices.map { index in perSeed.map { $0[index] } }
        let count: @Sendable (Double) -> String = { FixedFormat.number($0, decimals: 0) }
        var table: [[String]] = []
        for (row, outcomes) in zip(rows, results) {
            let settle = SeedSummary(outcomes.map(\.settle))
            let p99 = SeedSummary(outcomes.map(\.overloadedP99))
            let transient = SeedSummary(outcomes.map(\.overloadedP99WithTransient))
            let goodput = SeedSummary(outcomes.map(\.overloadedGoodput))
            let rejected = SeedSummary(outcomes.map(\.rejectedBelow80))
            let climb = SeedSummary(outcomes.map(\.climbBack))
            let spikeP99 = SeedSummary(outcomes.map(\.spikeP99))
            let spikeGoodput = SeedSummary(outcomes.map(\.spikeGoodput))
            let isAdaptive = row.name.hasPrefix("adaptive")
            table.append([
                row.name, isAdaptive ? Self.cell(settle, Self.seconds) : "–", Self.cell(p99, Self.ratio),
                Self.cell(transient, Self.ratio), Self.cell(goodput, Self.percent), Self.cell(rejected, count),
                isAdaptive ? Self.cell(climb, Self.seconds) : "–", Self.cell(spikeP99, Self.ratio),
                Self.cell(spikeGoodput, Self.percent),
            ])
            guard row.isDefault else { continue }
            // The band as judged: [7.2, 9.6] for 8 slots, not rounded outwards to a [7, 10] the check does not use.
            func bound(_ share: Double) -> String {
                let value = share * Double(scenario.slotsAfter)
                return FixedFormat.number(value, decimals: value == value.rounded() ? 0 : 1)
            }
            let range = "[\(bound(0.9)), \(bound(1.2))]"
            goals.append(
                Goal(
                    name:
                        "Adaptive: slots \(scenario.slots) → \(scenario.slotsAfter): the limit settles in \(range) within 10 s",
                    strategy: row.name, target: "≤ 10 s", summary: SeedSummary(settle.values) { $0 <= 10 },
                    format: Self.seconds))
            goals.append(
                Goal(
                    name: "Adaptive: admitted p99 ≤ 1.5× unloaded while overloaded (from 10 s after the fall)",
                    strategy: row.name, target: "≤ 1.5×", summary: SeedSummary(p99.values) { $0 <= 1.5 },
                    format: Self.ratio))
            goals.append(
                Goal(
                    name: "Adaptive: below 80 % of capacity nothing is rejected (after a 10 s warm-up)",
                    strategy: row.name, target: "0", summary: SeedSummary(rejected.values) { $0 == 0 }, format: count))
            goals.append(
                Goal(
                    name: "Adaptive: the limit climbs back to the offered concurrency within 30 s of the slots' return",
                    strategy: row.name, target: "≤ 30 s", summary: SeedSummary(climb.values) { $0 <= 30 },
                    format: Self.seconds))
            goals.append(
                Goal(
                    name: "Adaptive: \(FixedFormat.number(scenario.overload))× load spike: admitted p99 ≤ 2× unloaded",
                    strategy: row.name, target: "≤ 2×", summary: SeedSummary(spikeP99.values) { $0 <= 2 },
                    format: Self.ratio))
            goals.append(
                Goal(
                    name: "Adaptive: \(FixedFormat.number(scenario.overload))× load spike: goodput ≥ 90 % of capacity",
                    strategy: row.name, target: "≥ 90 %", summary: SeedSummary(spikeGoodput.values) { $0 >= 0.9 },
                    format: Self.percent))
        }
        let drop = scenario.drop
        tables.append(
            ReportTable(
                title: "Adaptive concurrency limit",
                notes: [
                    "server: \(scenario.slots) concurrent slots, \(scenario.slotsAfter) from \(Int(scenario.changeAt)) s to \(Int(scenario.changeAt) + 60) s, then \(scenario.slots) again; service 80–120 ms; requests beyond the slots queue FIFO at the server; clients give up after 1 s",
                    "offered \(FixedFormat.number(drop.rate(at: 0), decimals: 0)) requests/s (\(FixedFormat.number(scenario.overload))× the capacity after the fall); the spike run: \(scenario.slots) slots, 80 % of capacity, \(FixedFormat.number(scenario.overload))× capacity from \(Int(scenario.changeAt)) s for 30 s",
                    "p99 ratios are admitted requests' p99 ÷ the unloaded round trip's p99 (the service time's, \(FixedFormat.number(drop.service.upperBound * 990, decimals: 1)) ms nominal); the limiters reject instead of waiting (a load shedder); the bulkhead is sized to the slots before the fall",
                    "median [min – max] over \(seeds.count) seeds; goals apply to the default (gradient2) row",
                ],
                header: [
                    "row", "settle", "p99 overloaded", "p99 incl. transient", "goodput overloaded", "rejected < 80 %",
                    "climb back", "spike p99", "spike goodput",
                ], rows: table))
        let end = Int(drop.duration)
        var limitChart = SVGChart(
            title: "Adaptive limit: learned limit over time (seed \(seeds[0]))", xLabel: "time (s)",
            yLabel: "limit (concurrent calls)",
            series: zip(rows, results).filter { $0.0.name.hasPrefix("adaptive") }.map { row, outcomes in
                SVGChart.Series(
                    name: row.name, points: outcomes[0].drop.limits.map { ($0.time, $0.limit) }, color: row.color)
            }, shaded: (scenario.changeAt, scenario.changeAt + 60))
        limitChart.references = [
            ("slots \(scenario.slots)", Double(scenario.slots)),
            ("slots \(scenario.slotsAfter)", Double(scenario.slotsAfter)),
        ]
        charts.append(("adaptive-limit.svg", limitChart))
        var latencyChart = SVGChart(
            title: "Adaptive limit: p99 latency of each second's answered requests (seed \(seeds[0]))",
            xLabel: "time (s)", yLabel: "p99 latency (ms)",
            series: zip(rows, results).map { row, outcomes in
                SVGChart.Series(
                    name: row.name, points: Self.p99PerSecond(outcomes[0].drop, upTo: end), color: row.color)
            }, shaded: (scenario.changeAt, scenario.changeAt + 60))
        latencyChart.references = [("1.5× unloaded", 1500 * (results.first?.first?.drop.unloaded(at: 0.99) ?? 0))]
        charts.append(("adaptive-latency.svg", latencyChart))
    }

    /// The p99 latency of each second's answered requests, in milliseconds.
    static func p99PerSecond(_ result: ConcurrencyServerResult, upTo end: Int) -> [(x: Double, y: Double)] {
        var perSecond = Array(repeating: [Double](), count: end + 1)
        for entry in result.latencies where Int(entry.time) <= end { perSecond[Int(entry.time)].append(entry.latency) }
        return perSecond.enumerated().compactMap { second, values in
            values.isEmpty ? nil : (Double(second), 1000 * ConcurrencyServerResult.quantile(values, 0.99))
        }
    }
}
