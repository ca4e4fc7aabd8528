// fault-server: runs a FaultServer in its own process so tests and demos in other processes can use it.
//
//   swift run fault-server [--port N] [--script standard|mutation-sink|chaos] [--lifetime SECONDS] [--seed N]
//
// Prints the bound port on the first line of stdout, then serves until its lifetime ends or it is killed.
import Foundation
import ResilienceTesting

struct Options {
    var configuration = FaultServerConfiguration()
    var script = "standard"

    init(arguments: [String]) throws {
        configuration.lifetime = .seconds(300)
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--port":
                guard let value = iterator.next().flatMap(UInt16.init) else { throw UsageError() }
                configuration.port = value
            case "--script":
                guard let value = iterator.next() else { throw UsageError() }
                script = value
            case "--lifetime":
                guard let value = iterator.next().flatMap(Double.init), value > 0 else { throw UsageError() }
                configuration.lifetime = .seconds(value)
            case "--seed":
                guard let value = iterator.next().flatMap(UInt64.init) else { throw UsageError() }
                configuration.seed = value
            default:
                throw UsageError()
            }
        }
    }
}

struct UsageError: Error, CustomStringConvertible {
    var description: String {
        """
        usage: fault-server [--port N] [--script standard|mutation-sink|chaos] [--lifetime SECONDS] [--seed N]
        paths (standard): /ok /flaky (503, 503, 200) /rate-limited (429 Retry-After: 1, then 200) /reset /empty
          /garbage /hang /slow (1 s) /drip /truncated /bomb /huge /malformed-json /malformed-xml /redirect
          /loop-a /loop-b /chaos /mutations (idempotent mutation sink)
        mutation-sink: /mutations loses the response (reset) after first applying each key
        chaos: every path of standard, plus /jobs with the demo chaos profile
        """
    }
}

func applyStandardScript(to server: FaultServer) {
    server.script("/ok", .json(#"{"ok":true}"#))
    server.script("/flaky", .status(503), .status(503), .json(#"{"ok":true}"#))
    server.script("/rate-limited", .rateLimited(retryAfter: "1"), .json(#"{"ok":true}"#))
    server.script("/reset", .reset)
    server.script("/empty", .emptyReply)
    server.script("/garbage", .garbage())
    server.script("/hang", .hang)
    server.script("/slow", .delayed(by: .seconds(1), then: .json(#"{"ok":true}"#)))
    server.script(
        "/drip", .slowDrip(body: Data(repeating: 0x61, count: 100), chunkSize: 1, interval: .milliseconds(200)))
    server.script("/truncated", .truncated(body: Data(#"{"jobs":["#.utf8), declaredLength: 1000))
    server.script("/bomb", .gzipBomb())
    server.script("/huge", .hugeBody())
    server.script("/malformed-json", .malformedJSON)
    server.script("/malformed-xml", .malformedXML)
    server.script("/redirect", .redirect(to: "/ok"))
    server.script("/loop-a", .redirect(to: "/loop-b"))
    server.script("/loop-b", .redirect(to: "/loop-a"))
    server.script("/chaos", .chaos(.demo))
    server.script("/mutations", .mutationSink())
}

do {
    let options = try Options(arguments: CommandLine.arguments)
    let server = try FaultServer(configuration: options.configuration)
    applyStandardScript(to: server)
    switch options.script {
    case "standard":
        break
    case "mutation-sink":
        server.script("/mutations", .mutationSink(afterFirstApply: .reset))
    case "chaos":
        server.script("/jobs", .chaos(.demo))
    default:
        throw UsageError()
    }
    FileHandle.standardOutput.write(Data("\(server.port)\n".utf8))
    while server.isRunning { Thread.sleep(forTimeInterval: 0.2) }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}
