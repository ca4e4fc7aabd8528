import Foundation
import JobBoardService
import ResilienceKit
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `job-board-service` command line: an option the service could not work with is refused before anything
/// starts, with the option and the reason, and a non-zero exit status. The real executable in a process of its
/// own; generous bounds.
@Suite("job-board-service command line", .serialized)
struct CommandLineTests {
    /// Runs the executable with `arguments` (and `--port 0`) and returns its exit status and output, or `nil`
    /// when it started serving instead (then it is stopped).
    static func refusal(_ arguments: [String]) async throws -> (status: Int32, output: String)? {
        let (process, logURL) = try ShutdownProcessTests.launch(["--port", "0"] + arguments)
        let deadline = ContinuousClock.now + .seconds(60)
        var output = ""
        while process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            output = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
            if output.contains("serving the job board on") { break }
        }
        if process.isRunning {
            _ = try await ShutdownProcessTests.terminate(process, log: logURL)
            return nil
        }
        output = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: logURL)
        return (process.terminationStatus, output)
    }

    @Test(
        "An upstream URL the service cannot fetch from is refused at start-up, naming the option",
        arguments: [
            ("--boards-url", "http://h:99999"),
            ("--boards-url", "https://boards.example.com:0"),
            ("--boards-url", "https://boards example.com"),
            ("--boards-url", "https://boards.example.com/?page=2"),
            ("--boards-url", "https://boards.example.com/#top"),
            ("--boards-url", "http://boards.example.com"),
            ("--boards-url", "ftp://boards.example.com"),
            ("--plaintext-feeds-url", "http://feeds.example.com"),
            ("--plaintext-feeds-url", "https://feeds.example.com:65536"),
            ("--plaintext-feeds-url", "http://plaintext-feeds.invalid:8081"),
            ("--plaintext-feeds-url", "http://127.0.0.2:8081"),
        ])
    func badUpstreamURL(option: String, value: String) async throws {
        var arguments = [
            "--boards-url", "https://boards.example.com", "--plaintext-feeds-url", "https://feeds.example.com",
        ]
        arguments[arguments.firstIndex(of: option)! + 1] = value
        let refusal = try #require(try await Self.refusal(arguments), "\(option) \(value) was accepted")
        #expect(refusal.status != 0)
        #expect(refusal.output.contains(option), "\(refusal.output)")
    }

    @Test(
        "Ports and timeouts out of range are refused at start-up, naming the option",
        arguments: [
            ["--port", "65536"], ["--port", "-1"], ["--shutdown-timeout", "0"], ["--shutdown-timeout", "3601"],
            ["--chaos", "1"],
        ])
    func outOfRange(arguments: [String]) async throws {
        let refusal = try #require(try await Self.refusal(["--demo"] + arguments), "\(arguments) was accepted")
        #expect(refusal.status != 0)
        #expect(refusal.output.contains(arguments[0]), "\(refusal.output)")
    }

    @Test("--chaos without --demo, which it would not change, is refused at start-up")
    func chaosWithoutDemo() async throws {
        let refusal = try #require(
            try await Self.refusal([
                "--boards-url", "https://boards.example.com", "--plaintext-feeds-url", "https://feeds.example.com",
                "--chaos", "0.5",
            ]), "--chaos without --demo was accepted")
        #expect(refusal.status != 0)
        #expect(refusal.output.contains("--chaos"), "\(refusal.output)")
    }

    @Test(
        "Loopback, by name or address, passes the sources' plaintext policy as the library's standard policy says",
        arguments: ["http://127.0.0.1:8081", "http://localhost:8081", "http://LOCALHOST:8081/", "http://[::1]:8081"])
    func loopbackUpstreamURL(text: String) throws {
        #expect(throws: Never.self) { try JobBoardServiceConfiguration.upstreamURL(text) }
        let host = try #require(URL(string: text)?.host?.lowercased())
        #expect(SecureTransportPolicy.standard.allowedInsecureHosts.contains(host), "\(host)")
    }

    @Test("https upstreams and plaintext to loopback start the server")
    func goodUpstreamURLs() async throws {
        let (process, _, logURL) = try ShutdownProcessTests.start(
            ["--boards-url", "http://127.0.0.1:1/api/", "--plaintext-feeds-url", "http://[::1]:8443"],
            demo: false)
        let (exited, log) = try await ShutdownProcessTests.terminate(process, log: logURL)
        #expect(exited && process.terminationStatus == 0, "\(log)")
    }
}
