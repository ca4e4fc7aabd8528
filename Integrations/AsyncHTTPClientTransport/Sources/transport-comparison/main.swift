// transport-comparison: AsyncHTTPClientTransport and URLSessionTransport side by side, in one run, each
// measured in its own child process against a FaultServer in this (parent) process.
//
//   swift run -c release --package-path Integrations/AsyncHTTPClientTransport transport-comparison
//
// Options: --requests N (load test, per transport; default 4000), --concurrency N (default 64),
// --rounds N (reset-keep-alive POST rounds; default 5), --bomb-mb N (default 200).
import Foundation
import ResilienceTesting

let arguments = Array(CommandLine.arguments.dropFirst())

func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count,
        let parsed = Int(arguments[index + 1])
    else { return value }
    return parsed
}

func stringOption(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

if let mode = stringOption("--child") {
    let kind = TransportKind(rawValue: stringOption("--transport") ?? "") ?? .asyncHTTPClient
    let url = URL(string: stringOption("--url") ?? "")!
    let report: [String: Double]
    switch mode {
    case "bomb": report = await ChildMeasurements.bomb(kind, url: url)
    case "load":
        report = await ChildMeasurements.load(
            kind, url: url, requests: option("--requests", default: 4000),
            concurrency: option("--concurrency", default: 64))
    default: report = await ChildMeasurements.resetPost(kind, url: url)
    }
    let json = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
    print(String(decoding: json, as: UTF8.self))
    exit(0)
}

let requests = option("--requests", default: 4000)
let concurrency = option("--concurrency", default: 64)
let rounds = option("--rounds", default: 5)
let bombMB = option("--bomb-mb", default: 200)

/// Runs this executable as a child and parses the JSON line it prints.
func child(_ mode: String, _ kind: TransportKind, url: URL) throws -> [String: Double] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments = [
        "--child", mode, "--transport", kind.rawValue, "--url", url.absoluteString, "--requests", "\(requests)",
        "--concurrency", "\(concurrency)",
    ]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? "{}"
    return (try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Double]) ?? [:]
}

func megabytes(_ kilobytes: Double?) -> String {
    guard let kilobytes else { return "–" }
    return String(format: "%.1f MB", kilobytes / 1024)
}

let server = try FaultServer(
    configuration: {
        var configuration = FaultServerConfiguration()
        configuration.lifetime = .seconds(1800)
        return configuration
    }())
server.script("/warm", .ok("warm"))
server.script("/bomb", .gzipBomb(decompressedSize: bombMB * 1024 * 1024))
server.script("/jobs", .json(#"{"jobs":[{"id":1,"title":"Swift"},{"id":2,"title":"NIO"}]}"#))

var rows: [TransportKind: [String: String]] = [:]
for kind in TransportKind.allCases {
    var row: [String: String] = [:]
    let bomb = try child("bomb", kind, url: server.url("/bomb"))
    row["bombPeak"] = megabytes(bomb["peakKB"])
    row["bombGrowth"] = megabytes(bomb["peakKB"].flatMap { peak in bomb["baselineKB"].map { peak - $0 } })
    row["bombOutcome"] = bomb["tooLarge"] == 1 ? "NET_011 in \(Int(bomb["milliseconds"] ?? 0)) ms" : "not refused"
    let load = try child("load", kind, url: server.url("/jobs"))
    row["rps"] = String(format: "%.0f", load["requestsPerSecond"] ?? 0)
    row["p50"] = String(format: "%.2f ms", load["p50Milliseconds"] ?? 0)
    row["p99"] = String(format: "%.2f ms", load["p99Milliseconds"] ?? 0)
    row["loadErrors"] = "\(Int(load["errors"] ?? 0))"
    rows[kind] = row
}

// Reset keep-alive POST: a fresh server per round; the second POST goes out on the reused connection, which
// the server resets after reading it. What did the server see, and what did the client get?
for kind in TransportKind.allCases {
    var withoutBody = 0
    var resent = 0
    var outcomes: [String: Int] = [:]
    var worst = 0.0
    for _ in 0..<rounds {
        let resetServer = try FaultServer()
        resetServer.script("/events", .status(201), .reset, .status(201))
        let report = try child("reset", kind, url: resetServer.url("/events"))
        try await Task.sleep(for: .milliseconds(300))
        let posts = resetServer.requests(to: "/events")
        withoutBody += posts.filter { $0.body.isEmpty }.count
        resent += max(0, posts.count - 2)
        // A resend whose body never comes is not recorded (the server is still reading it): the client then
        // ends at its attempt deadline with NET_002, which the outcome column shows.
        let code = report["code"].map { String(format: "NET_%03.0f", $0) } ?? "none"
        outcomes[code, default: 0] += 1
        worst = max(worst, report["milliseconds"] ?? 0)
        resetServer.stop()
    }
    let outcome = outcomes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    rows[kind]?["reset"] =
        "\(outcome); slowest \(Int(worst)) ms; recorded resends \(resent), recorded without body \(withoutBody)"
}
server.stop()

let columns: [(String, String)] = [
    ("bombPeak", "gzip bomb: peak RSS (VmHWM)"), ("bombGrowth", "growth over warm baseline"),
    ("bombOutcome", "bomb outcome"), ("rps", "req/s (\(concurrency) concurrent)"), ("p50", "p50"), ("p99", "p99"),
    ("loadErrors", "errors"), ("reset", "reset keep-alive POST (\(rounds) rounds)"),
]
print("transport-comparison: \(bombMB) MB gzip bomb, 10 MB cap; \(requests) GETs at \(concurrency) concurrent\n")
print("| | " + TransportKind.allCases.map(\.title).joined(separator: " | ") + " |")
print("|---|" + TransportKind.allCases.map { _ in "---" }.joined(separator: "|") + "|")
for (key, title) in columns {
    print("| \(title) | " + TransportKind.allCases.map { rows[$0]?[key] ?? "–" }.joined(separator: " | ") + " |")
}
if let ahc = Double(rows[.asyncHTTPClient]?["rps"] ?? ""), let session = Double(rows[.urlSession]?["rps"] ?? ""),
    session > 0
{
    print(String(format: "\nthroughput ratio AsyncHTTPClient / URLSession: %.2f×", ahc / session))
}
