import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a person reads, and how the next request is paced, after real loopback servers answer with rate
/// limits or fail TLS. Real sockets and real time, generous bounds.
@Suite("Hostile servers: presentation and quota pacing (loopback)", .serialized)
struct HostileServerPresentationTests {
    static let presenters = PresentationStrings.bundledLanguages.map {
        ($0, DefaultErrorPresenter(strings: .bundled(language: $0)))
    }

    func context(_ timeout: Duration = .seconds(10)) -> ResilienceContext {
        ResilienceContext(
            key: "loopback", deadline: ResilienceClock.continuous.now().advanced(by: timeout),
            classifier: TransportErrorClassifier.standard)
    }

    func failure(of url: URL, transport: URLSessionTransport = URLSessionTransport()) async -> FailureClassification? {
        let resilient = ResilientTransport(wrapping: transport) { _ in PassthroughPipeline() }
        do {
            _ = try await resilient.send(HTTPRequest(url: url), context: context())
            return nil
        } catch {
            return TransportErrorClassifier.standard.classify(error) ?? context().classify(error)
        }
    }

    @Test("GitHub's rate-limit 403 reads as a rate limit with the reset time, never 'Access Denied'")
    func gitHub403IsPresentedAsRateLimit() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        let reset = Int(Date().timeIntervalSince1970) + 300
        server.script(
            "/repos",
            .json(
                #"{"message":"API rate limit exceeded"}"#, status: 403,
                headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": String(reset)]))
        let failure = try #require(await failure(of: server.url("/repos")))
        for (language, presenter) in Self.presenters {
            let shown = presenter.present(failure, context: PresentationContext())
            let forbidden = PresentationStrings.bundled(language: language).string("forbidden.title")
            #expect(shown.title != forbidden, "\(language)")
            #expect(shown.title == PresentationStrings.bundled(language: language).string("rateLimited.title"))
            #expect(shown.retryAfter != nil && shown.retryAfter! > .seconds(200))
            #expect(shown.showsRetry)
        }
    }

    @Test("TLS to a plain HTTP port: an honest security message and no retry action, in every locale")
    func tlsToPlainPort() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .ok("[]"))
        let url = URL(string: "https://127.0.0.1:\(server.port)/jobs")!
        let failure = try #require(await failure(of: url))
        #expect(failure.code == .certificateInvalid)
        #expect(!failure.isTransient)
        try expectSecurityPresentation(failure)
    }

    @Test("A self-signed certificate: an honest security message and no retry action, in every locale")
    func selfSignedCertificate() async throws {
        let tls = try SelfSignedTLSServer()
        defer { tls.stop() }
        let failure = try #require(await failure(of: URL(string: "https://127.0.0.1:\(tls.port)/")!))
        #expect(failure.code == .certificateInvalid)
        #expect(!failure.isTransient)
        try expectSecurityPresentation(failure)
    }

    func expectSecurityPresentation(_ failure: FailureClassification) throws {
        for (language, presenter) in Self.presenters {
            let strings = PresentationStrings.bundled(language: language)
            for context in [PresentationContext(), multiSourceContext(failure)] {
                let shown = presenter.present(failure, context: context)
                #expect(shown.title == strings.string("security.title"), "\(language)")
                #expect(shown.message == strings.string("security.message"), "\(language)")
                #expect(!shown.showsRetry, "\(language)")
                #expect(!shown.isRecoverable, "\(language)")
                #expect(shown.suggestedAction == nil, "\(language)")
                #expect(shown.title != strings.string("unreadable.title"))
            }
        }
    }

    func multiSourceContext(_ failure: FailureClassification) -> PresentationContext {
        PresentationContext(
            itemNoun: "jobs",
            sources: [
                .init(id: "a", displayName: "A", failure: failure), .init(id: "b", displayName: "B", failure: failure),
            ])
    }

    @Test(
        "X-RateLimit-Remaining: 0 on a 200 makes the next request wait for the reset; past the deadline it is refused locally"
    )
    func quotaOnSuccessPacesTheNextRequest() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script(
            "/feed", .ok("[]", headers: ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "2"]))
        let limiter = ServerQuotaLimiter()
        let transport = ResilientTransport(wrapping: URLSessionTransport()) { _ in
            Pipeline { ServerQuotaStrategy(limiter: limiter) }
        }
        let request = HTTPRequest(url: server.url("/feed"))
        _ = try await transport.send(request, context: context())
        #expect(server.requests(to: "/feed").count == 1)

        // A caller with a 500 ms deadline is refused locally at once, with the time left; nothing is sent.
        let clock = ContinuousClock()
        let refusedAt = clock.now
        let error = await #expect(throws: ResilienceError.self) {
            try await transport.send(request, context: context(.milliseconds(500)))
        }
        #expect(clock.now - refusedAt < .milliseconds(400))
        #expect(error?.retryAfter.map { $0 > .milliseconds(500) && $0 <= .seconds(2) } == true)
        #expect(server.requests(to: "/feed").count == 1)

        // A patient caller waits for the advertised reset, then is sent.
        let start = clock.now
        _ = try await transport.send(request, context: context(.seconds(20)))
        #expect(clock.now - start >= .milliseconds(1_200))
        #expect(server.requests(to: "/feed").count == 2)
    }
}

/// `openssl s_server` on 127.0.0.1 with a freshly made self-signed certificate.
final class SelfSignedTLSServer {
    let port: UInt16
    private let process: Process
    private let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = directory.appendingPathComponent("key.pem").path
        let certificate = directory.appendingPathComponent("cert.pem").path
        let make = Process()
        make.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        make.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
            "-subj", "/CN=127.0.0.1",
        ]
        make.standardError = FileHandle.nullDevice
        try make.run()
        make.waitUntilExit()
        // A free port: bind an ephemeral one, note it, release it for openssl.
        let probe = try FaultServer()
        port = probe.port
        probe.stop()
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = [
            "s_server", "-accept", "127.0.0.1:\(port)", "-key", key, "-cert", certificate, "-www",
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        try Self.waitUntilAccepting(output.fileHandleForReading, process: process)
    }

    /// The server did not say it listens (it exited, or stayed silent for 10 s); `output` is what it printed.
    struct DidNotStart: Error {
        var output: String
    }

    /// Blocks until `s_server` prints `ACCEPT` (it listens from then on), then keeps draining its output so it
    /// never blocks on a full pipe. Throws ``DidNotStart`` when it exits first or stays silent for 10 s.
    private static func waitUntilAccepting(_ output: FileHandle, process: Process) throws {
        let printed = LockedBox((text: Data(), accepting: false))
        let ready = DispatchSemaphore(value: 0)
        output.readabilityHandler = { handle in
            let chunk = handle.availableData
            if chunk.isEmpty { handle.readabilityHandler = nil }
            // Until ACCEPT: collect, and signal when it appears or the output ends. After it: drop what comes.
            let signals = printed.mutate { printed -> Bool in
                guard !printed.accepting else { return false }
                printed.text.append(chunk)
                printed.accepting = String(decoding: printed.text, as: UTF8.self).contains("ACCEPT")
                return printed.accepting || chunk.isEmpty
            }
            if signals { ready.signal() }
        }
        let signalled = ready.wait(timeout: .now() + 10) == .success
        let (text, accepting) = printed.value
        guard signalled, accepting, process.isRunning else {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            throw DidNotStart(output: String(decoding: text, as: UTF8.self))
        }
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
