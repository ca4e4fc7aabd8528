// Measures the peak memory of one capped download through `URLSessionTransport` in this process.
//
// Usage: transport-memory-probe <case> [cap-megabytes]
// Cases: gzip-1g (gzip inflating to 1 GiB), gzip-64m, chunked-1g, chunked-200m, chunked-gzip-1g,
// length-200m (Content-Length declared). Prints one line:
// The server runs in this process too (it builds a gzip bomb in memory: about 7 MB for 1 GiB), so the growth
// it reports is an upper bound for the client alone.
// `case=<case> baseline_kb=<VmHWM before> peak_kb=<VmHWM after> growth_mb=<difference> outcome=<code or status>`.
import Foundation
import ResilienceCore
import ResilienceTesting
import ResilienceTransport

func highWaterMarkKilobytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }
    return -1
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: transport-memory-probe <case> [cap-megabytes]\n".utf8))
    exit(2)
}
let name = arguments[1]
let megabytes = arguments.count > 2 ? Int(arguments[2]) ?? 10 : 10
let gibibyte = 1024 * 1024 * 1024
let fault: Fault
switch name {
case "gzip-1g": fault = .gzipBomb(decompressedSize: gibibyte)
case "gzip-64m": fault = .gzipBomb(decompressedSize: 64 * 1024 * 1024)
case "chunked-1g": fault = .chunkedBody(size: gibibyte)
case "chunked-200m": fault = .chunkedBody(size: 200 * 1024 * 1024)
case "chunked-gzip-1g": fault = .chunkedBody(size: gibibyte, gzip: true)
case "length-200m": fault = .hugeBody(size: 200 * 1024 * 1024)
default:
    FileHandle.standardError.write(Data("unknown case \(name)\n".utf8))
    exit(2)
}

let server = try FaultServer()
server.script("/warm", .ok("warm"))
server.script("/body", fault)
var configuration = URLSessionTransportConfiguration()
configuration.maximumResponseSize = megabytes * 1024 * 1024
configuration.defaultAttemptTimeout = .seconds(120)
let transport = URLSessionTransport(configuration: configuration)
let context = ResilienceContext(key: "probe")
_ = try await transport.send(HTTPRequest(url: server.url("/warm")), context: context)
let baseline = highWaterMarkKilobytes()
let outcome: String
do {
    let response = try await transport.send(HTTPRequest(url: server.url("/body")), context: context)
    outcome = "HTTP \(response.status) \(response.body.count) bytes"
} catch let error as any ClassifiedError {
    outcome = error.classification.code.rawValue
} catch {
    outcome = "\(error)"
}
let peak = highWaterMarkKilobytes()
server.stop()
print(
    "case=\(name) cap_mb=\(megabytes) baseline_kb=\(baseline) peak_kb=\(peak) growth_mb=\((peak - baseline) / 1024) outcome=\(outcome)"
)
