import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

/// URLSessionTransport against the loopback FaultServer over real sockets (generous real-time bounds).
@Suite("URLSessionTransport over FaultServer")
struct URLSessionTransportTests {
    /// Each test gets its own session, so timing checks never queue behind another suite's connections.
    let transport = URLSessionTransport()

    func send(
        _ url: URL, headers: HTTPHeaders = [:], timeout: Duration = .seconds(10), using: URLSessionTransport? = nil
    )
        async throws -> HTTPResponse
    {
        try await (using ?? transport).send(
            HTTPRequest(url: url, headers: headers), context: realContext(timeout: timeout))
    }

    @Test("Every response is returned, whatever its status, with headers and body")
    func statusSequence() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .status(503), .rateLimited(retryAfter: "2"), .json(#"{"jobs":[]}"#))
        let first = try await send(server.url("/jobs"))
        let second = try await send(server.url("/jobs"))
        let third = try await send(server.url("/jobs"))
        let statuses: [Int] = [first.status, second.status, third.status]
        #expect(statuses == [503, 429, 200])
        #expect(second.headers["retry-after"] == "2")
        #expect(String(decoding: third.body, as: UTF8.self) == #"{"jobs":[]}"#)
        #expect(server.requestCount == 3)
    }

    @Test(
        "Connection faults get their classification",
        arguments: [
            ("/reset", FailureCode.connectionReset, FailureCategory.transient),
            ("/empty", FailureCode.emptyReply, FailureCategory.transient),
            ("/garbage", FailureCode.invalidResponse, FailureCategory.invalidResponse),
            ("/truncated", FailureCode.truncatedResponse, FailureCategory.transient),
        ])
    func connectionFaults(path: String, code: FailureCode, category: FailureCategory) async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/reset", .reset)
        server.script("/empty", .emptyReply)
        server.script("/garbage", .garbage())
        server.script("/truncated", .truncated(body: Data(#"{"jobs":["#.utf8), declaredLength: 1_000))
        let error = await thrownError { try await send(server.url(path)) }
        #expect(error is TransportError, "\(String(describing: error))")
        let classification = classify(error)
        #expect(classification?.code == code, "\(String(describing: error))")
        #expect(classification?.category == category)
    }

    @Test("A refused connection is transient and provably not sent")
    func refused() async throws {
        let server = try FaultServer()
        let url = server.url("/gone")
        server.stop()
        try await Task.sleep(for: .milliseconds(200))
        let classification = classify(await thrownError { try await send(url) })
        #expect(classification?.code == .connectionRefused)
        #expect(classification?.requestWasNotSent == true)
    }

    @Test("TLS against a plaintext server and an unresolvable host get their own codes")
    func tlsAndDNS() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/ok", .ok())
        let tls = URL(string: "https://127.0.0.1:\(server.port)/ok")!
        let tlsError = await thrownError { try await send(tls) }
        #expect(classify(tlsError)?.code == .certificateInvalid, "\(String(describing: tlsError))")
        #expect(classify(tlsError)?.isTransient == false)
        let dnsError = await thrownError { try await send(URL(string: "http://no-such-host.invalid/jobs")!) }
        #expect(classify(dnsError)?.code == .hostNotFound, "\(String(describing: dnsError))")
        #expect(classify(dnsError)?.requestWasNotSent == true)
    }

    @Test("A stalled server times out at the attempt deadline, not URLSession's idle timeout")
    func hangTimesOut() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/stall", .hang)
        let started = ContinuousClock.now
        let sink = RecordingTelemetrySink()
        let context = realContext(timeout: .milliseconds(300), telemetry: sink)
        let classification = classify(
            await thrownError { try await transport.send(HTTPRequest(url: server.url("/stall")), context: context) })
        let elapsed = ContinuousClock.now - started
        #expect(classification?.category == .timeout)
        #expect(classification?.code == .timedOut)
        #expect(elapsed >= .milliseconds(290))
        #expect(sink.kinds == [.timedOut])
        #expect(elapsed < .seconds(10), "the stall never ends: only the 300 ms deadline can end it")
    }

    @Test("A slow drip cannot outlive the deadline")
    func slowDripHitsDeadline() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script(
            "/drip", .slowDrip(body: Data(repeating: 0x61, count: 600), chunkSize: 1, interval: .milliseconds(50)))
        let started = ContinuousClock.now
        let classification = classify(
            await thrownError { try await send(server.url("/drip"), timeout: .milliseconds(400)) })
        #expect(classification?.category == .timeout)
        #expect(ContinuousClock.now - started < .seconds(15), "the drip lasts 30 s; the 400 ms deadline must end it")
    }

    @Test("The deadline runs on the injected clock: a ManualClock decides when a stalled attempt times out")
    func deadlineOnInjectedClock() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/stall", .hang)
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let context = ResilienceContext(key: "manual", deadline: clock.now().advanced(by: .seconds(30)), clock: clock)
        let transport = transport
        let task = Task { try await transport.send(HTTPRequest(url: server.url("/stall")), context: context) }
        await manual.waitForSleepers(count: 1)
        #expect(await eventually(seconds: 5) { server.requestCount == 1 })
        manual.advance(by: .seconds(30))
        let classification = classify(await thrownError { try await task.value })
        #expect(classification?.code == .timedOut)
    }

    @Test("A gzip bomb and a 200 MB body fail fast with responseTooLarge")
    func sizeCap() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/bomb", .gzipBomb(decompressedSize: 200 * 1024 * 1024))
        server.script("/huge", .hugeBody(size: 200 * 1024 * 1024))
        server.script("/small-cap", .ok(String(repeating: "x", count: 2_000)))
        server.script("/small-bomb", .gzipBomb(decompressedSize: 3_000_000))
        var configuration = URLSessionTransportConfiguration()
        configuration.maximumResponseSize = 1_000
        let capped = URLSessionTransport(configuration: configuration)
        let inflated = try await send(server.url("/small-bomb"))
        #expect(inflated.body.count == 3_000_000)
        #expect(inflated.body.allSatisfy { $0 == 0 })
        // A plain 200 MB body is refused from its Content-Length, before the body is read.
        var started = ContinuousClock.now
        let huge = await thrownError { try await send(server.url("/huge"), timeout: .seconds(20)) }
        #expect(classify(huge)?.code == .responseTooLarge, "\(String(describing: huge))")
        #expect(ContinuousClock.now - started < .seconds(15))
        // A 200 MB gzip bomb fails fast with the typed error and never yields a body. (On Linux, libcurl inflates
        // ahead of the delegate without backpressure, so the transient peak can exceed the cap: Docs/Transport.md.)
        started = ContinuousClock.now
        let bomb = await thrownError { try await send(server.url("/bomb"), timeout: .seconds(20)) }
        #expect(classify(bomb)?.code == .responseTooLarge, "\(String(describing: bomb))")
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(
            classify(await thrownError { try await send(server.url("/small-cap"), using: capped) })?.code
                == .responseTooLarge)
        #expect(
            classify(await thrownError { try await send(server.url("/huge"), using: capped) })?.code
                == .responseTooLarge)
    }

    @Test("Same-origin redirects keep credentials; cross-origin redirects carry none")
    func redirectsAndCredentials() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/same", .redirect(to: "/landing"))
        server.script("/landing", .ok("here"))
        server.script("/cross", .redirect(to: other.url("/landing").absoluteString))
        other.script("/landing", .ok("there"))
        let secrets: HTTPHeaders = ["Authorization": "Bearer secret", "Cookie": "session=s3cr3t", "X-Trace": "t1"]
        let same = try await send(server.url("/same"), headers: secrets)
        #expect(String(decoding: same.body, as: UTF8.self) == "here")
        let landed = try #require(server.requests(to: "/landing").first)
        #expect(landed.headers["Authorization"] == "Bearer secret")
        #expect(landed.headers["Cookie"] == "session=s3cr3t")
        let cross = try await send(server.url("/cross"), headers: secrets)
        #expect(String(decoding: cross.body, as: UTF8.self) == "there")
        let elsewhere = try #require(other.requests(to: "/landing").first)
        #expect(elsewhere.headers["Authorization"] == nil)
        #expect(elsewhere.headers["Cookie"] == nil)
        #expect(elsewhere.headers["X-Trace"] == "t1")
    }

    @Test("Redirect loops and long chains are classified, not followed forever")
    func redirectLoopsAndLimits() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/a", .redirect(to: "/b"))
        server.script("/b", .redirect(to: "/a"))
        for hop in 0..<15 { server.script("/hop\(hop)", .redirect(to: "/hop\(hop + 1)")) }
        let loop = await thrownError { try await send(server.url("/a")) }
        #expect(classify(loop)?.code == .tooManyRedirects)
        #expect((loop as? TransportError)?.classification.message?.contains("loop") == true)
        #expect(server.requestCount(for: "/a") == 1)
        let chain = await thrownError { try await send(server.url("/hop0")) }
        #expect(classify(chain)?.code == .tooManyRedirects)
        #expect(server.requestCount == 2 + 11)
    }

    @Test("Malformed JSON and XML arrive as 200 responses; decoding is the caller's job")
    func malformedBodies() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/json", .malformedJSON)
        let response = try await send(server.url("/json"))
        #expect(response.status == 200)
        #expect((try? JSONSerialization.jsonObject(with: response.body)) == nil)
    }

    @Test("Cancellation mid-flight, while reading and before start ends promptly as cancelled")
    func cancellation() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/stall", .hang)
        server.script(
            "/drip", .slowDrip(body: Data(repeating: 0x61, count: 100), chunkSize: 1, interval: .milliseconds(100)))
        for path in ["/stall", "/drip"] {
            let url = server.url(path)
            let before = server.requestCount
            let transport = transport
            let task = Task {
                try await transport.send(HTTPRequest(url: url), context: realContext(timeout: .seconds(30)))
            }
            #expect(await eventually(seconds: 5) { server.requestCount == before + 1 })
            try await Task.sleep(for: .milliseconds(150))
            let started = ContinuousClock.now
            task.cancel()
            let error = await thrownError { try await task.value }
            #expect(classify(error)?.category == .cancelled, "\(path): \(String(describing: error))")
            #expect(ContinuousClock.now - started < .seconds(8), "the request had 30 s left when it was cancelled")
        }
        let transport = transport
        let before = server.requestCount
        let early = Task { () async throws -> HTTPResponse in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(HTTPRequest(url: server.url("/stall")), context: realContext())
        }
        #expect(classify(await thrownError { try await early.value })?.category == .cancelled)
        try await Task.sleep(for: .milliseconds(100))
        #expect(server.requestCount == before)
    }
}
