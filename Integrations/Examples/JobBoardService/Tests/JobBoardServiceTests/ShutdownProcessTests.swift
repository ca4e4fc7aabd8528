import Foundation
import ResilienceTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The `job-board-service` executable in a process of its own, shut down with SIGTERM as production does. Real
/// sockets on 127.0.0.1 and real time, generous bounds.
@Suite("job-board-service process", .serialized)
struct ShutdownProcessTests {
    /// The built `job-board-service` executable.
    static func binary() throws -> URL {
        try #require(BuiltExecutable.url(named: "job-board-service"), "build the package with --build-tests first")
    }

    /// Starts `job-board-service --port 0 --log-level info arguments` (with `--demo` first when `demo`), waits
    /// until it says where it serves, and returns the process, the port and the log file.
    static func start(_ arguments: [String], demo: Bool = true) throws -> (Process, Int, URL) {
        let (process, log) = try launch((demo ? ["--demo"] : []) + ["--port", "0", "--log-level", "info"] + arguments)
        var text = ""
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline && process.isRunning {
            Thread.sleep(forTimeInterval: 0.1)
            text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let range = text.range(
                of: #"serving the job board on http://127\.0\.0\.1:(\d+)/"#, options: .regularExpression)
            {
                let port = Int(text[range].split(separator: ":").last!.dropLast())!
                return (process, port, log)
            }
        }
        process.terminate()
        Issue.record("the server never said where it serves: \(text)")
        throw CancellationError()
    }

    /// Runs the executable with `arguments`, its standard output and error going to a new file (a file, not a
    /// pipe: a pipe nobody drains would block the server's logging).
    static func launch(_ arguments: [String]) throws -> (Process, URL) {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = arguments
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("job-board-service-\(UUID()).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        try process.run()
        return (process, log)
    }

    /// Sends SIGTERM and waits up to 30 s for the process to exit (SIGKILL after that); returns whether it
    /// exited by itself and its log.
    static func terminate(_ process: Process, log logURL: URL) async throws -> (exited: Bool, log: String) {
        kill(process.processIdentifier, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(30)
        while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        let exited = !process.isRunning
        if !exited { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let log = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: logURL)
        return (exited, log)
    }

    @Test("SIGTERM with a client that never reads: the process exits in bounded time, non-zero, saying so")
    func sigtermWithAClientThatNeverReads() async throws {
        let (process, port, logURL) = try Self.start(["--shutdown-timeout", "2"])
        // Thousands of pipelined requests, none of whose answers is read: the server's writes stall, so the
        // connection never finishes its requests and a graceful shutdown alone would wait for ever.
        let client = try PipeliningClient(port: port)
        defer { client.close() }
        client.send(String(repeating: "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", count: 3_000))
        try await Task.sleep(for: .seconds(2))
        let (exited, log) = try await Self.terminate(process, log: logURL)
        #expect(exited, "still running 30 s after SIGTERM (--shutdown-timeout 2)")
        #expect(
            process.terminationReason == .exit && process.terminationStatus != 0,
            "status \(process.terminationStatus): a forced stop must not look like a clean one")
        #expect(log.contains("requests in flight were cut off"), "\(log.suffix(2_000))")
        #expect(log.contains("demo upstreams stopped"), "\(log.suffix(2_000))")
    }

    @Test("SIGTERM with no request in flight: the process exits 0 and cuts nothing off")
    func cleanSigterm() async throws {
        let (process, port, logURL) = try Self.start(["--shutdown-timeout", "20"])
        let descriptor = try LoopbackSocket.open(port: port)
        let request = Array("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { sendBytes(descriptor, $0.baseAddress, $0.count) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4_096)
        while buffer.withUnsafeMutableBytes({ receiveBytes(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        closeSocket(descriptor)
        let (exited, log) = try await Self.terminate(process, log: logURL)
        #expect(exited, "still running 30 s after SIGTERM")
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(log.suffix(2_000))")
        #expect(!log.contains("cut off"), "\(log.suffix(2_000))")
        #expect(log.contains("demo upstreams stopped"), "\(log.suffix(2_000))")
    }

    @Test("SIGTERM under load: every request sent is answered whole or refused, none hangs, and the process exits 0")
    func sigtermUnderLoad() async throws {
        // Upstreams that take 1.5 s to answer: a page load lasts that long, so the signal finds page loads in
        // flight (each still waiting for the upstreams) as well as cheap requests.
        let upstream = try FaultServer(
            configuration: {
                var c = FaultServerConfiguration(); c.lifetime = .seconds(120); return c
            }())
        defer { upstream.stop() }
        for path in PageLoadSharingTests.upstreamPaths {
            upstream.script(path, .delayed(by: .milliseconds(1_500), then: .json("{}")))
        }
        let base = upstream.baseURL.absoluteString
        let (process, port, logURL) = try Self.start(
            ["--shutdown-timeout", "20", "--boards-url", base, "--plaintext-feeds-url", base], demo: false)
        let load = LoadClient(port: port, paths: ["/jobs", "/", "/health", "/jobs", "/metrics"])
        load.start(8)
        try await Task.sleep(for: .seconds(3))
        let signalled = ContinuousClock.now
        kill(process.processIdentifier, SIGTERM)
        let deadline = signalled + .seconds(25)
        while process.isRunning && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        let exitedWithin = signalled.duration(to: .now)
        let requests = try await load.stop()
        let (exited, log) = try await Self.terminate(process, log: logURL)
        #expect(exited, "still running 25 s after SIGTERM (--shutdown-timeout 20)")
        #expect(exitedWithin < .seconds(20), "the shutdown took \(exitedWithin)")
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(log.suffix(2_000))")
        #expect(!log.contains("cut off"), "\(log.suffix(2_000))")
        // Before the signal, every request is answered whole; after it, a request is answered whole or finds no
        // server (refused, or its connection closed before a byte of an answer: never processed, safe to resend).
        // None is cut off in the middle of its answer, and none hangs.
        let answeredBefore = requests.filter { $0.ended <= signalled }
        #expect(answeredBefore.count >= 8, "\(LoadClient.summary(requests))")
        #expect(answeredBefore.allSatisfy { $0.outcome == .answered(200) }, "\(LoadClient.summary(answeredBefore))")
        let broken = requests.filter {
            switch $0.outcome {
            case .answered(let status): status != 200
            case .refused, .notAnswered: $0.sent < signalled
            case .cutOff, .hung: true
            }
        }
        #expect(broken.isEmpty, "\(LoadClient.summary(broken))")
        // The page loads in flight at the signal were answered (after it, once their fetch ended).
        let straddling = requests.filter { $0.sent < signalled && $0.ended > signalled }
        #expect(straddling.contains { $0.path == "/jobs" || $0.path == "/" }, "\(LoadClient.summary(requests))")
        #expect(straddling.allSatisfy { $0.outcome == .answered(200) }, "\(LoadClient.summary(straddling))")
    }

    @Test("On an IPv6 address the server says where it serves as a URL that works: the address in brackets")
    func ipv6AddressInTheURL() async throws {
        let (process, logURL) = try Self.launch(["--demo", "--port", "0", "--hostname", "::1"])
        var log = ""
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning && ContinuousClock.now < deadline && !log.contains("serving the job board on") {
            try await Task.sleep(for: .milliseconds(100))
            log = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
        }
        let (_, finalLog) = try await Self.terminate(process, log: logURL)
        // A host without IPv6 cannot bind ::1; the process then says why and there is no URL to check.
        if finalLog.contains("bind(") { return }
        let line = try #require(finalLog.split(separator: "\n").first { $0.contains("serving the job board on") })
        #expect(
            line.range(of: #"serving the job board on http://\[::1\]:\d+/$"#, options: .regularExpression) != nil,
            "\(line)")
    }
}

/// A blocking loopback client that writes requests and never reads.
final class PipeliningClient {
    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = try LoopbackSocket.open(port: port, receiveBufferSize: 4_096)
    }

    /// Writes as much of `text` as the socket takes within a second, without blocking longer.
    func send(_ text: String) {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes { sendBytes(descriptor, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            sent += written
        }
    }

    func close() { closeSocket(descriptor) }
}

#if canImport(Glibc)
private func closeSocket(_ descriptor: Int32) { _ = Glibc.close(descriptor) }
private func sendBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    Glibc.send(descriptor, bytes, count, 0)
}
private func receiveBytes(_ descriptor: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    Glibc.recv(descriptor, bytes, count, 0)
}
#else
private func closeSocket(_ descriptor: Int32) { _ = Darwin.close(descriptor) }
private func sendBytes(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    Darwin.send(descriptor, bytes, count, 0)
}
private func receiveBytes(_ descriptor: Int32, _ bytes: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    Darwin.recv(descriptor, bytes, count, 0)
}
#endif
