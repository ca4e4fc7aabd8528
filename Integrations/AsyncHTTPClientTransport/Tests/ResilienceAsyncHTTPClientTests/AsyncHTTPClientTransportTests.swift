import AsyncHTTPClient
import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

@testable import ResilienceAsyncHTTPClient

/// AsyncHTTPClientTransport against the loopback FaultServer over real sockets (generous real-time bounds):
/// the same cases as URLSessionTransport's suite, plus the ones FoundationNetworking gets wrong.
@Suite("AsyncHTTPClientTransport over FaultServer")
struct AsyncHTTPClientTransportTests {
    func send(
        _ url: URL, with transport: AsyncHTTPClientTransport, method: HTTPMethod = .get, headers: HTTPHeaders = [:],
        body: Data? = nil, timeout: Duration = .seconds(10)
    ) async throws -> HTTPResponse {
        try await transport.send(
            HTTPRequest(method: method, url: url, headers: headers, body: body), context: realContext(timeout: timeout))
    }

    @Test("Every response is returned, whatever its status, with headers and body")
    func statusSequence() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .status(503), .rateLimited(retryAfter: "2"), .json(#"{"jobs":[]}"#))
        try await withTransport { transport in
            let first = try await send(server.url("/jobs"), with: transport)
            let second = try await send(server.url("/jobs"), with: transport)
            let third = try await send(server.url("/jobs"), with: transport)
            let statuses: [Int] = [first.status, second.status, third.status]
            #expect(statuses == [503, 429, 200])
            #expect(second.headers["retry-after"] == "2")
            #expect(String(decoding: third.body, as: UTF8.self) == #"{"jobs":[]}"#)
            #expect(third.url == server.url("/jobs"))
        }
        #expect(server.requestCount == 3)
    }

    @Test("A 429's Retry-After reaches the classifier through HTTPStatusError")
    func retryAfter() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/limited", .rateLimited(retryAfter: "7"))
        let response = try await withTransport { try await send(server.url("/limited"), with: $0) }
        let classification = classify(HTTPStatusError(response: response))
        #expect(classification?.code == .rateLimited)
        #expect(classification?.retryAfter == .seconds(7))
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
        let error = await thrownError { try await withTransport { try await send(server.url(path), with: $0) } }
        #expect(error is TransportError, "\(String(describing: error))")
        let classification = classify(error)
        #expect(classification?.code == code, "\(String(describing: error))")
        #expect(classification?.category == category)
    }

    @Test("A refused connection fails at once, transient and provably not sent")
    func refused() async throws {
        let server = try FaultServer()
        let url = server.url("/gone")
        server.stop()
        try await Task.sleep(for: .milliseconds(200))
        let started = ContinuousClock.now
        let error = await thrownError { try await withTransport { try await send(url, with: $0) } }
        let classification = classify(error)
        #expect(classification?.code == .connectionRefused, "\(String(describing: error))")
        #expect(classification?.requestWasNotSent == true)
        #expect(ContinuousClock.now - started < .seconds(5), "no silent connection retries until the connect timeout")
    }

    @Test("TLS against a plaintext server and an unresolvable host get their own codes")
    func tlsAndDNS() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/ok", .ok())
        try await withTransport { transport in
            let tls = URL(string: "https://127.0.0.1:\(server.port)/ok")!
            let tlsError = await thrownError { try await send(tls, with: transport) }
            #expect(classify(tlsError)?.code == .certificateInvalid, "\(String(describing: tlsError))")
            #expect(classify(tlsError)?.isTransient == false)
            let dnsError = await thrownError {
                try await send(URL(string: "http://no-such-host.invalid/jobs")!, with: transport)
            }
            #expect(classify(dnsError)?.code == .hostNotFound, "\(String(describing: dnsError))")
            #expect(classify(dnsError)?.requestWasNotSent == true)
        }
    }

    @Test("A stalled server times out at the attempt deadline")
    func hangTimesOut() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/stall", .hang)
        let sink = RecordingTelemetrySink()
        let started = ContinuousClock.now
        let error = await thrownError {
            try await withTransport { transport in
                try await transport.send(
                    HTTPRequest(url: server.url("/stall")),
                    context: realContext(timeout: .milliseconds(300), telemetry: sink))
            }
        }
        let elapsed = ContinuousClock.now - started
        #expect(classify(error)?.category == .timeout)
        #expect(classify(error)?.code == .timedOut)
        #expect(elapsed >= .milliseconds(290))
        #expect(sink.kinds == [.timedOut])
        #expect(elapsed < .seconds(10), "the stall never ends: only the 300 ms deadline can end it")
    }

    @Test("Sub-second deadlines are honoured, not fired at once")
    func subSecondDeadline() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/slow", .delayed(by: .milliseconds(150), then: .ok("late but in time")))
        let response = try await withTransport {
            try await send(server.url("/slow"), with: $0, timeout: .milliseconds(900))
        }
        #expect(String(decoding: response.body, as: UTF8.self) == "late but in time")
    }

    @Test("A slow drip cannot outlive the deadline: the body is covered too")
    func slowDripHitsDeadline() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script(
            "/drip", .slowDrip(body: Data(repeating: 0x61, count: 600), chunkSize: 1, interval: .milliseconds(50)))
        let started = ContinuousClock.now
        let error = await thrownError {
            try await withTransport { try await send(server.url("/drip"), with: $0, timeout: .milliseconds(400)) }
        }
        #expect(classify(error)?.category == .timeout, "\(String(describing: error))")
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
        try await withTransport { transport in
            let task = Task { try await transport.send(HTTPRequest(url: server.url("/stall")), context: context) }
            await manual.waitForSleepers(count: 1)
            #expect(await eventually(seconds: 5) { server.requestCount == 1 })
            manual.advance(by: .seconds(30))
            #expect(classify(await thrownError { try await task.value })?.code == .timedOut)
        }
    }

    @Test("A gzip bomb and a 200 MB body fail fast with responseTooLarge; a small gzip body inflates")
    func sizeCap() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/bomb", .gzipBomb(decompressedSize: 200 * 1024 * 1024))
        server.script("/huge", .hugeBody(size: 200 * 1024 * 1024))
        server.script("/small-cap", .ok(String(repeating: "x", count: 2_000)))
        server.script("/small-bomb", .gzipBomb(decompressedSize: 3_000_000))
        try await withTransport { transport in
            let inflated = try await send(server.url("/small-bomb"), with: transport)
            #expect(inflated.body.count == 3_000_000)
            #expect(inflated.body.allSatisfy { $0 == 0 })
            var started = ContinuousClock.now
            let huge = await thrownError { try await send(server.url("/huge"), with: transport, timeout: .seconds(20)) }
            #expect(classify(huge)?.code == .responseTooLarge, "\(String(describing: huge))")
            #expect(ContinuousClock.now - started < .seconds(15))
            started = ContinuousClock.now
            let bomb = await thrownError { try await send(server.url("/bomb"), with: transport, timeout: .seconds(20)) }
            #expect(classify(bomb)?.code == .responseTooLarge, "\(String(describing: bomb))")
            #expect(ContinuousClock.now - started < .seconds(10))
        }
        var small = AsyncHTTPClientTransportConfiguration()
        small.maximumResponseSize = 1_000
        try await withTransport(small) { capped in
            #expect(
                classify(await thrownError { try await send(server.url("/small-cap"), with: capped) })?.code
                    == .responseTooLarge)
            #expect(
                classify(await thrownError { try await send(server.url("/small-bomb"), with: capped) })?.code
                    == .responseTooLarge)
        }
    }

    @Test("A huge body without a usable Content-Length is cut while streaming, at the cap")
    func capWhileStreaming() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        // The decompressor is off, so the gzip body is counted as it arrives (650 KB on the wire for 100 MB).
        server.script("/bomb", .gzipBomb(decompressedSize: 100 * 1024 * 1024))
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.decompressesResponses = false
        configuration.maximumResponseSize = 100_000
        let error = await thrownError {
            try await withTransport(configuration) { try await send(server.url("/bomb"), with: $0) }
        }
        #expect(classify(error)?.code == .responseTooLarge, "\(String(describing: error))")
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
        server.script("/cross-back", .redirect(to: other.url("/back").absoluteString))
        other.script("/back", .redirect(to: server.url("/landing").absoluteString))
        other.script("/landing", .ok("there"))
        let secrets: HTTPHeaders = [
            "Authorization": "Bearer secret", "Cookie": "session=s3cr3t", "X-API-Key": "k", "X-Trace": "t1",
        ]
        try await withTransport { transport in
            let same = try await send(server.url("/same"), with: transport, headers: secrets)
            #expect(String(decoding: same.body, as: UTF8.self) == "here")
            #expect(same.url == server.url("/landing"))
            let landed = try #require(server.requests(to: "/landing").first)
            #expect(landed.headers["Authorization"] == "Bearer secret")
            #expect(landed.headers["Cookie"] == "session=s3cr3t")
            let cross = try await send(server.url("/cross"), with: transport, headers: secrets)
            #expect(String(decoding: cross.body, as: UTF8.self) == "there")
            let elsewhere = try #require(other.requests(to: "/landing").first)
            #expect(elsewhere.headers["Authorization"] == nil)
            #expect(elsewhere.headers["Cookie"] == nil)
            #expect(elsewhere.headers["X-API-Key"] == nil)
            #expect(elsewhere.headers["X-Trace"] == "t1")
            // Coming back to the original origin does not restore them: the chain left it once.
            _ = try await send(server.url("/cross-back"), with: transport, headers: secrets)
            let returned = try #require(server.requests(to: "/landing").last)
            #expect(returned.headers["Authorization"] == nil)
            #expect(server.requests(to: "/landing").count == 2)
        }
    }

    @Test("A 303 after a POST becomes a GET without the body; a 307 keeps both")
    func redirectMethods() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/see-other", .redirect(to: "/result", status: 303))
        server.script("/temporary", .redirect(to: "/result", status: 307))
        server.script("/result", .ok())
        let body = Data(#"{"title":"x"}"#.utf8)
        try await withTransport { transport in
            _ = try await send(server.url("/see-other"), with: transport, method: .post, body: body)
            _ = try await send(server.url("/temporary"), with: transport, method: .post, body: body)
        }
        let results = server.requests(to: "/result")
        #expect(results.map(\.method) == ["GET", "POST"])
        #expect(results.map(\.body) == [Data(), body])
    }

    @Test("Redirect loops, long chains and https→http are classified, not followed")
    func redirectLoopsAndLimits() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/a", .redirect(to: "/b"))
        server.script("/b", .redirect(to: "/a"))
        for hop in 0..<15 { server.script("/hop\(hop)", .redirect(to: "/hop\(hop + 1)")) }
        try await withTransport { transport in
            let loop = await thrownError { try await send(server.url("/a"), with: transport) }
            #expect(classify(loop)?.code == .tooManyRedirects)
            #expect((loop as? TransportError)?.classification.message?.contains("loop") == true)
            #expect(server.requestCount(for: "/a") == 1)
            let chain = await thrownError { try await send(server.url("/hop0"), with: transport) }
            #expect(classify(chain)?.code == .tooManyRedirects)
            #expect(server.requestCount == 2 + 11)
        }
    }

    @Test("An https→http redirect is refused as insecure (decided before any request to the target)")
    func downgradeRefused() {
        let source = URL(string: "https://api.example.com/a")!
        var rules = RedirectPolicy(originalURL: source, maximumRedirects: 5, allowsDowngrade: false)
        guard case .refuse(let failure) = rules.evaluate(from: source, to: URL(string: "http://api.example.com/b")!)
        else {
            Issue.record("an https→http hop must be refused")
            return
        }
        #expect(failure.code == .insecureTransportBlocked)
        #expect(failure.classification.requestWasNotSent)
        var allowing = RedirectPolicy(originalURL: source, maximumRedirects: 5, allowsDowngrade: true)
        #expect(
            allowing.evaluate(from: source, to: URL(string: "http://api.example.com/b")!)
                == .follow(stripCredentials: true))
    }

    @Test("Malformed JSON arrives as a 200 response; decoding is the caller's job")
    func malformedBodies() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/json", .malformedJSON)
        let response = try await withTransport { try await send(server.url("/json"), with: $0) }
        #expect(response.status == 200)
        #expect((try? JSONSerialization.jsonObject(with: response.body)) == nil)
    }

    @Test("A POST on a reused keep-alive connection that the server resets is never re-sent, with or without body")
    func resetKeepAlivePost() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/events", .status(201), .reset, .status(201))
        let body = Data(#"{"title":"keep-alive"}"#.utf8)
        try await withTransport { transport in
            let first = try await send(server.url("/events"), with: transport, method: .post, body: body)
            #expect(first.status == 201)
            let error = await thrownError {
                try await send(server.url("/events"), with: transport, method: .post, body: body)
            }
            #expect(classify(error)?.code == .connectionReset, "\(String(describing: error))")
            #expect(classify(error)?.requestWasNotSent == false)
        }
        try await Task.sleep(for: .milliseconds(200))
        let posts = server.requests(to: "/events")
        #expect(posts.count == 2, "\(posts)")
        #expect(posts.allSatisfy { $0.body == body }, "every POST the server saw carried its body")
    }

    @Test("64 concurrent requests on one transport all succeed")
    func concurrency() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .json(#"{"jobs":[1,2,3]}"#))
        let statuses = try await withTransport { transport in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<64 { group.addTask { try await send(server.url("/jobs"), with: transport).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        #expect(statuses == Array(repeating: 200, count: 64))
    }

    @Test("Cancellation mid-flight, while reading and before start ends promptly as cancelled")
    func cancellation() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/stall", .hang)
        server.script(
            "/drip", .slowDrip(body: Data(repeating: 0x61, count: 100), chunkSize: 1, interval: .milliseconds(100)))
        try await withTransport { transport in
            for path in ["/stall", "/drip"] {
                let url = server.url(path)
                let before = server.requestCount
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

    @Test("A client passed in is used and never shut down by the transport")
    func borrowedClient() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/ok", .ok("borrowed"))
        let client = HTTPClient(
            configuration: AsyncHTTPClientTransport.clientConfiguration(for: .standard))
        let transport = AsyncHTTPClientTransport(client: client)
        let response = try await send(server.url("/ok"), with: transport)
        #expect(String(decoding: response.body, as: UTF8.self) == "borrowed")
        try await transport.shutdown()
        let again = try await send(server.url("/ok"), with: transport)
        #expect(again.status == 200, "the borrowed client is still running")
        try await client.shutdown()
    }
}
