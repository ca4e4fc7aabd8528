import Foundation
import StormSimulation

// `storm-simulator [--quick] [--seed N] [--seeds N] [--output DIR] [--scenario NAME]… [--json] [scenario flags]`:
// runs every scenario (or only the named ones) over 20 seeds (2 with --quick) starting at N (default 1),
// prints the markdown report (or, with --json, the goal table as JSON) and writes results.md, results.json and
// the SVG charts to DIR (default `Docs/Simulation` for the full run of every scenario with default settings;
// any other run writes files only with --output). Exits 1 when a goal does not hold, 2 on a usage error.
// `--sweep` runs the sweep's grid instead (writes to `Docs/Simulation/sweep`, or `sweep-quick` with --quick,
// unless --output says otherwise); `--throughput [CLIENTS]` times the simulator.

/// Writes one line to standard error.
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

var mode = RunMode.full
var seed: UInt64 = 1
var output: String? = nil
var only: Set<String>? = nil
var parameters = ScenarioParameters()
var printsJSON = false
var sweeps = false
var throughputClients: Int? = nil
var arguments = CommandLine.arguments.dropFirst()
let usage = """
    usage: storm-simulator [--quick] [--seed N] [--output DIR] [--scenario NAME]… [--json] [scenario flags]
      --quick              fewer seeds, shorter runs, scaled-down traffic (CI)
      --seed N             the first seed (default 1)
      --output DIR         write results.md, results.json and the charts to DIR
      --scenario NAME      run only this scenario (repeatable): \(StormReport.scenarioNames.joined(separator: ", "))
      --json               print the goal table as JSON instead of the markdown report
      --sweep              run every point of the sweep's grid (Docs/Simulation.md); writes
                           Docs/Simulation/sweep (or sweep-quick with --quick) unless --output is given
      --throughput [N]     time N clients (default 10000) through Pipeline.standard; prints simulated
                           requests per processor-second (median of 3 runs)
    scenario flags:
    \(ScenarioParameters.usage)
    """
while let argument = arguments.popFirst() {
    do {
        if try parameters.read(argument, value: { arguments.popFirst() }) { continue }
    } catch {
        printError("\(error)")
        exit(2)
    }
    switch argument {
    case "--json":
        printsJSON = true
    case "--quick":
        mode = .quick
    case "--sweep":
        sweeps = true
    case "--throughput":
        throughputClients = 10_000
        if let next = arguments.first, let clients = Int(next) {
            guard clients >= 1 else {
                printError("--throughput needs a positive number of clients")
                exit(2)
            }
            throughputClients = clients
            arguments.removeFirst()
        }
    case "--seed":
        guard let value = arguments.popFirst(), let parsed = UInt64(value) else {
            printError("--seed needs a non-negative integer")
            exit(2)
        }
        seed = parsed
    case "--output":
        guard let value = arguments.popFirst() else {
            printError("--output needs a directory")
            exit(2)
        }
        output = value
    case "--scenario":
        guard let value = arguments.popFirst(), StormReport.scenarioNames.contains(value) else {
            printError("--scenario needs one of \(StormReport.scenarioNames.joined(separator: ", "))")
            exit(2)
        }
        only = (only ?? []).union([value])
    case "--help", "-h":
        print(usage)
        exit(0)
    default:
        printError("unknown argument \(argument); try --help")
        exit(2)
    }
}

guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *) else {
    printError("the storm simulator needs macOS 15 or later (task executor preferences)")
    exit(1)
}

if let clients = throughputClients {
    let run = ThroughputRun(clients: clients)
    var results: [ThroughputRun.Result] = []
    for repetition in 0..<3 {
        let result = run.measure(seed: seed + UInt64(repetition))
        results.append(result)
        print(
            "\(clients) clients, \(result.requests) requests in \(String(format: "%.2f", result.processorSeconds)) "
                + "processor-s: \(Int(result.requestsPerProcessorSecond)) requests per processor-second")
    }
    let median = results.map(\.requestsPerProcessorSecond).sorted()[1]
    print("median: \(Int(median)) simulated requests per processor-second")
    exit(0)
}

/// The output of `command` (its first line), or `unknown` when it cannot run.
func firstLine(of command: [String]) -> String {
    let process = Process()
    let pipe = Pipe()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = command
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return "unknown" }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
    return process.terminationStatus == 0 && !text.isEmpty ? text : "unknown"
}

if sweeps {
    let sweep = SweepReport.generate(mode: mode, firstSeed: seed, overrides: parameters) { index, point in
        printError("[\(index + 1)/\(SweepGrid.points(mode).count)] \(point.name)")
    }
    let commit = firstLine(of: ["git", "rev-parse", "HEAD"])
    let toolchain = firstLine(of: ["swift", "--version"])
    let provenance = "Produced by commit `\(commit)` with `\(toolchain)`."
    let markdown = SweepRender.markdown(sweep, provenance: provenance)
    print(printsJSON ? SweepRender.json(sweep) : markdown, terminator: "")
    let directory = output ?? (mode == .quick ? "Docs/Simulation/sweep-quick" : "Docs/Simulation/sweep")
    do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try markdown.write(toFile: "\(directory)/results.md", atomically: true, encoding: .utf8)
        try SweepRender.resultsJSON(sweep, commit: commit, toolchain: toolchain)
            .write(toFile: "\(directory)/results.json", atomically: true, encoding: .utf8)
    } catch {
        printError("cannot write \(directory): \(error)")
        exit(1)
    }
    let held = sweep.verdicts.filter(\.goal.summary.holds).count
    printError(
        "\(held)/\(sweep.verdicts.count) verdicts hold over \(sweep.points.count) points and \(sweep.seeds.count) seeds"
    )
    exit(sweep.allGoalsHold ? 0 : 1)
}

let report = StormReport.generate(mode: mode, firstSeed: seed, only: only, parameters: parameters)
let markdown = MarkdownReport.render(report)
print(printsJSON ? GoalTableJSON.render(report) : markdown, terminator: "")

func write(_ text: String, to path: String) {
    do {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
        printError("cannot write \(path): \(error)")
        exit(1)
    }
}

// The full run writes to Docs/Simulation unless told otherwise; the quick run (CI) writes only when asked.
let isDefaultRun = mode == .full && only == nil && parameters == ScenarioParameters()
if let directory = output ?? (isDefaultRun ? "Docs/Simulation" : nil) {
    do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    } catch {
        printError("cannot create \(directory): \(error)")
        exit(1)
    }
    let suffix = mode == .quick ? "-quick" : ""
    write(markdown, to: "\(directory)/results\(suffix).md")
    write(JSONReport.render(report), to: "\(directory)/results\(suffix).json")
    for (name, chart) in report.charts {
        let file = mode == .quick ? name.replacingOccurrences(of: ".svg", with: "-quick.svg") : name
        write(chart.render(), to: "\(directory)/\(file)")
    }
}
let held = report.goals.filter(\.summary.holds).count
printError("\(held)/\(report.goals.count) goals hold over \(report.seeds.count) seeds")
exit(report.allGoalsHold ? 0 : 1)
