import Foundation
import StormSimulation

/// `storm-simulator [--quick] [--seed N] [--output DIR]`: runs every scenario, prints the markdown report and
/// writes results.md, results.json and the SVG charts to DIR (default `Docs/Simulation`).
func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

var mode = RunMode.full
var seed: UInt64 = 42
var output = "Docs/Simulation"
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--quick":
        mode = .quick
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
    case "--help", "-h":
        print("usage: storm-simulator [--quick] [--seed N] [--output DIR]")
        exit(0)
    default:
        printError("unknown argument \(argument); try --help")
        exit(2)
    }
}

let report = StormReport.generate(mode: mode, seed: seed, catalog: StrategyCatalog.all)
let markdown = MarkdownReport.render(report)
print(markdown, terminator: "")

func write(_ text: String, to path: String) {
    do {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    } catch {
        printError("cannot write \(path): \(error)")
        exit(1)
    }
}

do {
    try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
} catch {
    printError("cannot create \(output): \(error)")
    exit(1)
}
let suffix = mode == .quick ? "-quick" : ""
write(markdown, to: "\(output)/results\(suffix).md")
write(JSONReport.render(report), to: "\(output)/results\(suffix).json")
if mode == .full {
    for chart in ReportCharts.render(report) {
        write(chart.svg, to: "\(output)/\(chart.name)")
    }
}
let failed = report.goals.filter { !$0.passed }
printError("\(report.goals.count - failed.count)/\(report.goals.count) goals hold")
