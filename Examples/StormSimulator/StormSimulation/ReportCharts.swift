#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Musl)
import Musl
#endif

/// The SVG charts of a ``StormReport``: load over time, and success and load against p with the theory.
public enum ReportCharts {
    /// File names and SVG documents, in a fixed order.
    public static func render(_ report: StormReport) -> [(name: String, svg: String)] {
        [
            ("outage-load.svg", loadChart(report.outage, title: "Full outage: load on the server")),
            ("metastable-load.svg", loadChart(report.metastable, title: "Metastable case: load on the server")),
            ("metastable-goodput.svg", goodputChart(report.metastable, title: "Metastable case: goodput")),
            ("brownout-load.svg", loadChart(report.brownout, title: "Brownout: load on the server")),
            ("independent-success.svg", sweepChart(report, success: true)),
            ("independent-load.svg", sweepChart(report, success: false)),
            ("tail-latency.svg", tailChart(report)),
        ].map { (name: $0.0, svg: $0.1) }
    }

    static func series(_ run: ScenarioRun, values: (SimulationResult) -> [Int]) -> [SVGChart.Series] {
        let width = run.scenario.bucket.seconds
        let lastBucket = Int((run.scenario.workload.horizon.seconds / width).rounded(.up))
        return run.results.map { result in
            let counts = values(result)
            let points = counts.prefix(lastBucket).enumerated().map { (index, count) in
                (x: Double(index) * width, y: Double(count) / width)
            }
            return SVGChart.Series(name: result.strategy, points: points)
        }
    }

    static func loadChart(_ run: ScenarioRun, title: String) -> String {
        SVGChart(
            title: title, xLabel: "time (s)", yLabel: "attempts per second",
            series: series(run) { $0.attemptsPerBucket },
            shaded: (run.faultStart.seconds, run.faultEnd.seconds)
        ).render()
    }

    static func goodputChart(_ run: ScenarioRun, title: String) -> String {
        SVGChart(
            title: title, xLabel: "time (s)", yLabel: "successful requests per second",
            series: series(run) { $0.successesPerBucket },
            shaded: (run.faultStart.seconds, run.faultEnd.seconds)
        ).render()
    }

    static func tailChart(_ report: StormReport) -> String {
        let lines = report.tail.map { row in
            let points = zip(TailRow.chartQuantiles, row.quantileLatencies).compactMap { quantile, latency in
                latency.map { (x: nines(quantile), y: $0.seconds * 1000) }
            }
            return SVGChart.Series(name: row.strategy, points: points, dashed: row.hedgeDelay != nil)
        }
        return SVGChart(
            title: "Tail latency with and without hedging at p95",
            xLabel: "percentile in nines (1 = p90, 2 = p99, 3 = p99.9)", yLabel: "latency (ms)", series: lines
        ).render()
    }

    /// −log10(1 − q): 1 for p90, 2 for p99, 3 for p99.9.
    static func nines(_ quantile: Double) -> Double {
        -log10(max(1 - quantile, 1e-12))
    }

    static func sweepChart(_ report: StormReport, success: Bool) -> String {
        var lines: [SVGChart.Series] = []
        for name in MarkdownReport.sweepStrategies {
            let points = report.independent.filter { $0.strategy == name }
            guard !points.isEmpty else { continue }
            lines.append(
                SVGChart.Series(name: name, points: points.map { (x: $0.p, y: success ? $0.successRate : $0.load) }))
        }
        let ps = Array(Set(report.independent.map(\.p))).sorted()
        var theory: [Int] = []
        for point in report.independent
        where MarkdownReport.sweepStrategies.contains(point.strategy) && !theory.contains(point.maxAttempts) {
            theory.append(point.maxAttempts)
        }
        for n in theory.sorted() {
            let points = ps.map { p in
                (
                    x: p,
                    y: success
                        ? TheoreticalBounds.success(p: p, attempts: n) : TheoreticalBounds.load(p: p, attempts: n)
                )
            }
            let label = success ? "theory 1 - p^\(n)" : "theory (1 - p^\(n))/(1 - p)"
            lines.append(SVGChart.Series(name: label, points: points, dashed: true))
        }
        var chart = SVGChart(
            title: success ? "Independent failures: success rate" : "Independent failures: load (attempts per request)",
            xLabel: "failure probability p (log scale)", yLabel: success ? "success rate" : "attempts per request",
            series: lines)
        chart.logarithmicX = true
        return chart.render()
    }
}
