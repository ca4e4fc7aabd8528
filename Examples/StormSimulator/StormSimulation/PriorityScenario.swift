import ResilienceKit

/// The priority scenario: a server offered `overload` × its capacity by a mix of critical, default and
/// sheddable requests, with the ``AdaptiveConcurrencyLimiter`` shedding by priority beside the same limiter
/// blind to priorities, a fixed bulkhead and no limit.
struct PriorityScenario: Sendable {
    let slots: Int
    let overload: Double
    let run: ConcurrencyServerRun
    static let mix = (critical: 0.2, default: 0.5, sheddable: 0.3)

    init(_ parameters: ScenarioParameters) {
        slots = parameters.slots ?? 100
        overload = parameters.overload ?? 2
        var run = ConcurrencyServerRun(
            slotsBefore: slots, slotsAfter: parameters.slotsAfter ?? slots,
            offered: [(0, parameters.offered ?? overload * Double(slots) / 0.1)], duration: 70)
        if let changeAt = parameters.changeAt { run.changeAt = Double(changeAt) }
        run.mix = Self.mix
        run.measuredFrom = 10
        self.run = run
    }

    var rows: [AdaptiveScenario.Row] {
        [
            AdaptiveScenario.Row(name: "no limit", color: "#7f7f7f", admission: .none),
            AdaptiveScenario.Row(name: "bulkhead (slots)", color: "#8c564b", admission: .bulkhead(slots)),
            AdaptiveScenario.Row(
                name: "adaptive, priorities ignored", color: "#ff7f0e",
                admission: .adaptive(.standard, usesPriorities: false)),
            AdaptiveScenario.Row(
                name: "adaptive with priorities (default)", color: "#1f77b4",
                admission: .adaptive(.standard, usesPriorities: true), isDefault: true),
        ]
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension StormReport {
    mutating func addPriority() {
        let scenario = PriorityScenario(parameters)
        let rows = scenario.rows
        let run = scenario.run
        let perSeed = perSeed { seed in rows.map { run.run($0.admission, seed: seed) } }
        let results = rows.indices.map { index in perSeed.map { $0[index] } }
        var table: [[String]] = []
        let measured = 10..<Int(run.duration)
        for (row, outcomes) in zip(rows, results) {
            let critical = SeedSummary(outcomes.map { $0.success(ofClass: 2) })
            let ordinary = SeedSummary(outcomes.map { $0.success(ofClass: 1) })
            let sheddable = SeedSummary(outcomes.map { $0.success(ofClass: 0) })
            let goodput = SeedSummary(outcomes.map { $0.goodput(measured) / run.capacity(at: 10) })
            let shedFirst = outcomes.map { outcome in
                outcome.rejection(ofClass: 0) > outcome.rejection(ofClass: 1)
                    && outcome.rejection(ofClass: 1) >= outcome.rejection(ofClass: 2)
            }
            table.append([
                row.name, Self.cell(critical, Self.percent), Self.cell(ordinary, Self.percent),
                Self.cell(sheddable, Self.percent), Self.cell(goodput, Self.percent),
                "\(shedFirst.filter { $0 }.count)/\(shedFirst.count)",
            ])
            guard row.isDefault else { continue }
            let overload = FixedFormat.number(scenario.overload)
            goals.append(
                Goal(
                    name: "Priority at \(overload)× overload: critical requests ≥ 99 % success", strategy: row.name,
                    target: "≥ 99 %", summary: SeedSummary(critical.values) { $0 >= 0.99 }, format: Self.percent))
            goals.append(
                Goal(
                    name:
                        "Priority at \(overload)× overload: sheddable shed first (rejected share sheddable > default ≥ critical)",
                    strategy: row.name, target: "in order",
                    summary: SeedSummary(values: outcomes.map { $0.rejection(ofClass: 0) }, passed: shedFirst),
                    format: { Self.percent($0) + " of sheddable rejected" }))
            goals.append(
                Goal(
                    name: "Priority at \(overload)× overload: goodput ≥ 90 % of capacity", strategy: row.name,
                    target: "≥ 90 %", summary: SeedSummary(goodput.values) { $0 >= 0.9 }, format: Self.percent))
        }
        tables.append(
            ReportTable(
                title: "Priorities under overload",
                notes: [
                    "server: \(scenario.slots) concurrent slots, service 80–120 ms, FIFO queue, clients give up after 1 s; offered \(FixedFormat.number(run.rate(at: 0), decimals: 0)) requests/s (\(FixedFormat.number(scenario.overload))× capacity): 20 % critical, 50 % default, 30 % sheddable",
                    "success = answered within the timeout, per class, over \(measured.lowerBound)–\(measured.upperBound) s; goodput = successes per second ÷ capacity; shed first = seeds where sheddable requests were rejected more than default ones and default ones at least as much as critical ones",
                    "the adaptive rows use the default configuration (gradient2; sheddable 75 %, critical 125 % of the limit); median [min – max] over \(seeds.count) seeds",
                ],
                header: ["row", "critical success", "default success", "sheddable success", "goodput", "shed first"],
                rows: table))
        charts.append(
            (
                "priority-limit.svg",
                SVGChart(
                    title:
                        "Priorities at \(FixedFormat.number(scenario.overload))× overload: p99 latency of each second (seed \(seeds[0]))",
                    xLabel: "time (s)", yLabel: "p99 latency (ms)",
                    series: zip(rows, results).map { row, outcomes in
                        SVGChart.Series(
                            name: row.name, points: Self.p99PerSecond(outcomes[0], upTo: Int(run.duration)),
                            color: row.color)
                    })
            ))
    }
}
