import Foundation
import ResilienceTesting
import Testing

/// The response cap bounds memory: each case runs in a child process (`transport-memory-probe`) that
/// downloads one oversized body from a loopback FaultServer through `URLSessionTransport` with a 10 MB cap
/// and reports its own peak resident memory (`VmHWM`). Real sockets, real time.
@Suite("URLSessionTransport memory bound (FaultServer, child process)", .serialized)
struct TransportMemoryTests {
    static let capMegabytes = 10
    /// The goal: peak growth ≤ cap + 32 MB (the probe's in-process server is counted against it).
    static let allowedGrowthMegabytes = capMegabytes + 32

    static func probeBinary() -> URL? { BuiltExecutable.url(named: "transport-memory-probe") }

    /// Runs the probe for `name` and returns its `key=value` report.
    static func probe(_ name: String) async throws -> [String: String] {
        let binary = try #require(probeBinary(), "transport-memory-probe is not built beside the tests")
        let process = Process()
        process.executableURL = binary
        process.arguments = [name, String(capMegabytes)]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let start = ContinuousClock.now
        while process.isRunning {
            if ContinuousClock.now - start > .seconds(180) {
                process.terminate()
                Issue.record("probe \(name) did not finish within 180 s")
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        var report: [String: String] = [:]
        for field in output.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let pair = field.split(separator: "=", maxSplits: 1)
            if pair.count == 2 { report[String(pair[0])] = String(pair[1]) }
        }
        return report
    }

    @Test(
        "Peak memory stays within cap + 32 MB for every body size and encoding",
        arguments: ["gzip-1g", "gzip-64m", "chunked-1g", "chunked-200m", "chunked-gzip-1g", "length-200m"])
    func boundedPeak(name: String) async throws {
        let report = try await Self.probe(name)
        let growth = try #require(report["growth_mb"].flatMap { Int($0) }, "no report: \(report)")
        #expect(report["outcome"] == "NET_011", "\(name): \(report)")
        #expect(growth <= Self.allowedGrowthMegabytes, "\(name) grew \(growth) MB: \(report)")
    }
}
