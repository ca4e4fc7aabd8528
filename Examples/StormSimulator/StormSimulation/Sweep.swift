import Foundation

/// One point of the sweep: a scenario with the traffic and fault that the flags in ``flags`` set.
public struct SweepPoint: Sendable, Hashable {
    /// The axis this point varies around its base point (`rate per client`, `clients`, `headroom`, …), or
    /// `corner`.
    public var axis: String
    /// The scenario it runs (a name of ``StormReport/scenarioNames``).
    public var scenario: String
    /// The traffic and fault.
    public var parameters: ScenarioParameters

    /// The point's label: its scenario and settings, as `storm-simulator` flags that reproduce it.
    public var name: String { (["--scenario", scenario] + parameters.flags).joined(separator: " ") }
}

/// Clients of one rate each against a server with some headroom: offered = rate × clients, capacity =
/// headroom × offered (exactly: whole workers of about 100 ms, the service time stretched to the capacity).
struct SweepTraffic: Hashable {
    var rate: Double
    var clients: Int
    var headroom: Double

    /// These settings on top of `parameters`.
    func applied(to parameters: ScenarioParameters = .init()) -> ScenarioParameters {
        var parameters = parameters
        parameters.ratePerClient = rate
        parameters.offered = rate * Double(clients)
        parameters.capacity = headroom * rate * Double(clients)
        return parameters
    }

    /// The server-facing base point (the report's default): 4 requests/s × 25 clients, 3× headroom.
    static let server = SweepTraffic(rate: 4, clients: 25, headroom: 3)
    /// The app-facing base point: 0.5 requests/s × 200 clients.
    static let app = SweepTraffic(rate: 0.5, clients: 200, headroom: 3)
    /// The quietest clients: one request every 50 s, 2,000 of them.
    static let quiet = SweepTraffic(rate: 0.02, clients: 2000, headroom: 3)
    /// Busy keys: 50 requests/s each, 2 of them.
    static let busy = SweepTraffic(rate: 50, clients: 2, headroom: 3)
    /// Bronson et al.'s metastable case: 280 requests/s (4/s × 70) against 300 (headroom 1.07).
    static let bronson = SweepTraffic(rate: 4, clients: 70, headroom: 300.0 / 280.0)
}

/// The sweep's grid: one axis varied at a time around a few base points, plus corners. See
/// `Docs/Simulation.md` ("The sweep") for why these points.
public enum SweepGrid {
    /// The seconds measured after every fault (the slowest recovery goal, `.background`'s, is 60 s).
    static let recovery = 60

    /// Every point of the full sweep, in report order.
    public static var points: [SweepPoint] { points(.full) }

    /// The points `mode` runs, in report order: the quick form keeps the ends of every axis and drops most
    /// values between them (`Docs/Simulation.md` lists which).
    public static func points(_ mode: RunMode) -> [SweepPoint] {
        var points: [SweepPoint] = []
        func add(
            _ axis: String, _ scenario: String, _ traffic: SweepTraffic, quick: Bool = true,
            _ fault: (inout ScenarioParameters) -> Void
        ) {
            guard mode == .full || quick else { return }
            var parameters = traffic.applied()
            fault(&parameters)
            let point = SweepPoint(axis: axis, scenario: scenario, parameters: parameters)
            if !points.contains(point) { points.append(point) }
        }
        func outage(_ seconds: Int) -> (inout ScenarioParameters) -> Void {
            {
                $0.outage = seconds
                $0.recovery = recovery
            }
        }
        // Full outages: per-client rate at about 100 requests/s in all (clients 1…2,000), clients at 1/s,
        // headroom, outage length, and corners.
        for rate in [0.02, 0.1, 0.5, 1, 4, 20, 50] {
            let clients = min(2000, max(1, Int((100 / rate).rounded())))
            add(
                "rate per client", "outage", SweepTraffic(rate: rate, clients: clients, headroom: 3),
                quick: [0.02, 1, 50].contains(rate), outage(20))
        }
        for clients in [1, 10, 100, 500, 2000] {
            add(
                "clients", "outage", SweepTraffic(rate: 1, clients: clients, headroom: 3),
                quick: [1, 500].contains(clients), outage(20))
        }
        for headroom in [1.05, 1.5, 3, 10] {
            add(
                "headroom", "outage", SweepTraffic(rate: 4, clients: 25, headroom: headroom),
                quick: [1.05, 10].contains(headroom), outage(20))
        }
        for seconds in [2, 5, 20, 60, 300] {
            add("outage", "outage", .server, quick: [2, 300].contains(seconds), outage(seconds))
        }
        for seconds in [2, 300] { add("outage", "outage", .app, quick: false, outage(seconds)) }
        add("corner", "outage", SweepTraffic(rate: 0.02, clients: 2000, headroom: 1.05), outage(300))
        add("corner", "outage", SweepTraffic(rate: 50, clients: 2, headroom: 10), outage(2))
        add("corner", "outage", SweepTraffic(rate: 50, clients: 40, headroom: 1.05), quick: false, outage(60))
        add("corner", "outage", SweepTraffic(rate: 0.1, clients: 10, headroom: 10), outage(60))
        // Stalls (requests queue): past every preset's attempt timeout (10 s, 30 s, 60 s).
        for seconds in [5, 10, 20, 45, 90, 120] {
            add("stall", "metastable", .bronson, quick: [5, 45, 120].contains(seconds)) {
                $0.stall = seconds
                $0.recovery = recovery
            }
        }
        for traffic in [
            SweepTraffic(rate: 0.5, clients: 560, headroom: 300.0 / 280.0), SweepTraffic.server,
            SweepTraffic(rate: 4, clients: 25, headroom: 1.5),
        ] {
            add("stall", "metastable", traffic, quick: traffic.rate < 1) {
                $0.stall = 45
                $0.recovery = recovery
            }
        }
        // Flapping outages on top of a brownout.
        for p in [0, 0.2, 0.5, 0.7] {
            add("flap", "flap", .server, quick: [0, 0.7].contains(p)) {
                $0.flap = .init(up: 5, down: 5)
                $0.brownout = p
            }
        }
        for (up, down) in [(2, 8), (20, 10), (1, 1)] {
            add("flap", "flap", .server, quick: up == 1) {
                $0.flap = .init(up: up, down: down)
                $0.brownout = 0.2
            }
        }
        for traffic in [SweepTraffic.app, .quiet] {
            add("flap", "flap", traffic, quick: traffic == .quiet) {
                $0.flap = .init(up: 5, down: 5)
                $0.brownout = 0.2
            }
        }
        // Brownouts.
        for p in [0, 0.1, 0.3, 0.5, 0.7, 0.9] {
            add("brownout", "brownout", .server, quick: [0, 0.5, 0.9].contains(p)) { $0.brownout = p }
        }
        for traffic in [SweepTraffic.quiet, .app, .busy] {
            for p in [0.3, 0.7] {
                add("brownout", "brownout", traffic, quick: p == 0.7 && traffic != .app) { $0.brownout = p }
            }
        }
        // A healthy server and busy keys.
        for traffic in [
            SweepTraffic.busy, SweepTraffic(rate: 50, clients: 20, headroom: 3),
            SweepTraffic(rate: 50, clients: 2, headroom: 1.5), SweepTraffic(rate: 20, clients: 5, headroom: 3),
        ] {
            add("healthy", "healthy", traffic, quick: traffic.headroom == 3 && traffic.rate == 50) { _ in }
        }
        // Server-advertised waits: 429 + Retry-After, and a 200 that says the quota is spent.
        for rate in [1.0, 4, 20] {
            add(
                "rate limit", "rate-limit", SweepTraffic(rate: rate, clients: Int(100 / rate), headroom: 3),
                quick: rate == 4
            ) { _ in }
        }
        for rate in [0.1, 1, 4, 20] {
            add(
                "quota", "quota", SweepTraffic(rate: rate, clients: Int(100 / rate), headroom: 3),
                quick: [0.1, 20].contains(rate)
            ) { _ in }
        }
        points.append(SweepPoint(axis: "contention", scenario: "contention", parameters: ScenarioParameters()))
        return points
    }
}

/// What the sweep found: every goal at every point.
public struct SweepReport: Sendable {
    /// One goal for one strategy at one point.
    public struct Verdict: Sendable {
        /// The point.
        public var point: SweepPoint
        /// The goal and its result over the seeds.
        public var goal: Goal
    }

    /// The mode every point ran in.
    public var mode: RunMode
    /// The seeds every goal was evaluated over.
    public var seeds: [UInt64]
    /// The points, in order.
    public var points: [SweepPoint] = []
    /// Every verdict, point by point.
    public var verdicts: [Verdict] = []
    /// Each point's tables (the settings and rows behind its goals), by point.
    public var tables: [[ReportTable]] = []

    /// Whether every goal holds at every point.
    public var allGoalsHold: Bool { verdicts.allSatisfy(\.goal.summary.holds) }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension SweepReport {
    /// Runs every point of ``SweepGrid/points`` over the seeds from `firstSeed`; `overrides` supplies the seed
    /// count and the preset filter (`--seeds`, `--preset`). The same arguments give the same report.
    public static func generate(
        mode: RunMode, firstSeed: UInt64, overrides: ScenarioParameters = .init(),
        progress: (Int, SweepPoint) -> Void = { _, _ in }
    ) -> SweepReport {
        var report = SweepReport(mode: mode, seeds: mode.seeds(from: firstSeed, count: overrides.seedCount))
        for (index, point) in SweepGrid.points(mode).enumerated() {
            progress(index, point)
            var parameters = point.parameters
            parameters.seedCount = overrides.seedCount
            parameters.preset = overrides.preset
            let result = StormReport.generate(
                mode: mode, firstSeed: firstSeed, only: [point.scenario], parameters: parameters)
            report.points.append(point)
            report.verdicts += result.goals.map { Verdict(point: point, goal: $0) }
            report.tables.append(result.tables)
        }
        return report
    }
}

extension ScenarioParameters {
    /// The flags that set these parameters (scenario defaults left out), in ``usage`` order.
    public var flags: [String] {
        var flags: [String] = []
        func number(_ value: Double) -> String {
            let text = FixedFormat.number(value, decimals: 4)
            var trimmed = Substring(text)
            while trimmed.contains("."), trimmed.last == "0" { trimmed.removeLast() }
            if trimmed.last == "." { trimmed.removeLast() }
            return String(trimmed)
        }
        if let ratePerClient { flags += ["--rate-per-client", number(ratePerClient)] }
        if let offered { flags += ["--offered", number(offered)] }
        if let capacity { flags += ["--capacity", number(capacity)] }
        if let outage { flags += ["--outage", "\(outage)"] }
        if let stall { flags += ["--stall", "\(stall)"] }
        if let flap { flags += ["--flap", "\(flap.up),\(flap.down)"] }
        if let brownout { flags += ["--brownout", number(brownout)] }
        if let recovery { flags += ["--recovery", "\(recovery)"] }
        return flags
    }
}

/// Renders a ``SweepReport`` as markdown and JSON (byte-identical for the same report, apart from the
/// `provenance` line: the commit and toolchain that produced it).
public enum SweepRender {
    /// The report as markdown: the verdicts per goal and strategy over the points, then every verdict, then
    /// each point's settings.
    public static func markdown(_ report: SweepReport, provenance: String) -> String {
        var lines = [
            "# Storm simulator sweep", "",
            provenance, "",
            "Mode `\(report.mode.rawValue)`, seeds \(report.seeds.first ?? 0)–\(report.seeds.last ?? 0) "
                + "(\(report.seeds.count)) at each of \(report.points.count) points; a goal holds at a point when it "
                + "holds in ≥ 19 of 20 seeds (95 %, rounded up, of the seeds run). Every verdict is against baselines "
                + "run at the same point with the same seeds. The grid and the goals are described in "
                + "`Docs/Simulation.md` (\"The sweep\").",
            "", "## Each goal over the points", "",
            "| goal | strategy | holds at | fails at |", "|---|---|---:|---|",
        ]
        var keys: [String] = []
        var byKey: [String: [SweepReport.Verdict]] = [:]
        for verdict in report.verdicts {
            let key = verdict.goal.name + "\u{1F}" + verdict.goal.strategy
            if byKey[key] == nil { keys.append(key) }
            byKey[key, default: []].append(verdict)
        }
        for key in keys {
            let verdicts = byKey[key] ?? []
            let failing = verdicts.filter { !$0.goal.summary.holds }.map { "`\(shortName($0.point))`" }
            lines.append(
                "| \(verdicts[0].goal.name) | \(verdicts[0].goal.strategy) | "
                    + "\(verdicts.count - failing.count)/\(verdicts.count) | "
                    + (failing.isEmpty ? "–" : failing.joined(separator: ", ")) + " |")
        }
        lines += [
            "", "## Every verdict", "",
            "| point | goal | strategy | target | passed | median | holds |", "|---|---|---|---|---:|---:|---|",
        ]
        for verdict in report.verdicts {
            let summary = verdict.goal.summary
            lines.append(
                "| `\(shortName(verdict.point))` | \(verdict.goal.name) | \(verdict.goal.strategy) | "
                    + "\(verdict.goal.target) | \(summary.passCount)/\(summary.values.count) | "
                    + "\(verdict.goal.format(summary.median)) | \(summary.holds ? "yes" : "**no**") |")
        }
        lines += ["", "## The points", ""]
        for (point, tables) in zip(report.points, report.tables) {
            lines.append("- `\(shortName(point))` (\(point.axis)): `storm-simulator \(point.name)`")
            for table in tables {
                lines += table.notes.map { "  - \(table.title): \($0)" }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The point's label without the repeated `--`: `outage rate-per-client 4 offered 100 …`.
    static func shortName(_ point: SweepPoint) -> String {
        ([point.scenario] + point.parameters.flags.map { $0.hasPrefix("--") ? String($0.dropFirst(2)) : $0 })
            .joined(separator: " ")
    }

    /// One JSON object per goal, strategy and point: `goal`, `strategy`, `point`, `target`, `passed` (seeds that
    /// passed), `seeds`, `median` and `holds`.
    public static func verdictsJSON(_ report: SweepReport) -> [String] {
        report.verdicts.map { verdict in
            let summary = verdict.goal.summary
            return "{\"goal\": \(FixedFormat.jsonString(verdict.goal.name)), "
                + "\"strategy\": \(FixedFormat.jsonString(verdict.goal.strategy)), "
                + "\"point\": \(FixedFormat.jsonString(verdict.point.name)), "
                + "\"target\": \(FixedFormat.jsonString(verdict.goal.target)), \"passed\": \(summary.passCount), "
                + "\"seeds\": \(summary.values.count), \"median\": \(FixedFormat.jsonNumber(summary.median, decimals: 6)), "
                + "\"holds\": \(summary.holds)}"
        }
    }

    /// The verdicts as a JSON array (`storm-simulator --sweep --json`).
    public static func json(_ report: SweepReport) -> String {
        "[\n" + verdictsJSON(report).map { "  " + $0 }.joined(separator: ",\n") + "\n]\n"
    }

    /// The results file: the commit and toolchain, each on a line of its own, then the mode, the seeds and
    /// the verdicts.
    public static func resultsJSON(_ report: SweepReport, commit: String, toolchain: String) -> String {
        "{\n  \"commit\": \(FixedFormat.jsonString(commit)),\n  \"toolchain\": \(FixedFormat.jsonString(toolchain)),\n"
            + "  \"mode\": \"\(report.mode.rawValue)\",\n"
            + "  \"seeds\": [\(report.seeds.map { "\($0)" }.joined(separator: ", "))],\n"
            + "  \"verdicts\": [\n" + verdictsJSON(report).map { "    " + $0 }.joined(separator: ",\n") + "\n  ]\n}\n"
    }
}
