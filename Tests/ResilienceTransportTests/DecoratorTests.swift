import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

/// Idempotency keys, secure transport and the resilient transport, against FaultServer over real sockets.
@Suite("Transport decorators over FaultServer")
struct DecoratorTests {
    @Test("A POST gets one Idempotency-Key that survives every retry; the sink applies it once")
    func idempotencyKeyStableAcrossRetries() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/events", .status(503), .mutationSink(status: 201, afterFirstApply: .reset))
        // Each attempt gets its own deadline: on Linux, after the reset of a reused keep-alive connection,
        // FoundationNetworking resends the POST on a new connection without its body and waits; the attempt
        // deadline turns that into a timeout, retried with the same key (Docs/Transport.md, Linux quirks).
        let pipeline = TestOnlyRetryPipeline(maximumAttempts: 4, attemptTimeout: .seconds(5))
        let transport = IdempotencyKeyTransport(
            wrapping: ResilientTransport(wrapping: sharedTransport) { _ in pipeline })
        let request = HTTPRequest(method: .post, url: server.url("/events"), body: Data(#"{"title":"x"}"#.utf8))
        let response = try await transport.send(request, context: realContext())
        #expect(response.status == 201)
        let keys = server.requests(to: "/events").compactMap { $0.headers["Idempotency-Key"] }
        #expect(keys.count == 3)
        #expect(Set(keys).count == 1)
        #expect(UUID(uuidString: keys[0]) != nil)
        #expect(server.appliedEffects == [keys[0]: 1])
        #expect(pipeline.attempts.value == 3)
    }

    @Test("The key is visible to the retry guard; GET and existing keys are left alone")
    func keyedRequests() {
        let transport = IdempotencyKeyTransport(wrapping: sharedTransport, makeKey: { "fixed" })
        let url = URL(string: "https://example.com/x")!
        let post = transport.keyed(HTTPRequest(method: .post, url: url))
        #expect(post.idempotency == .keyed("fixed"))
        #expect(post.idempotency.isSafeToRepeat)
        #expect(post.headers["Idempotency-Key"] == "fixed")
        #expect(transport.keyed(HTTPRequest(method: .patch, url: url)).idempotency.key == "fixed")
        let get = transport.keyed(HTTPRequest(url: url))
        #expect(get.headers["Idempotency-Key"] == nil)
        let existing = transport.keyed(HTTPRequest(method: .post, url: url, headers: ["Idempotency-Key": "mine"]))
        #expect(existing.idempotency.key == "mine")
    }

    @Test("A blank key is no key: the request gets a fresh one instead of being marked safe to repeat with none")
    func blankKeysReplaced() {
        let transport = IdempotencyKeyTransport(wrapping: sharedTransport, makeKey: { "fixed" })
        let url = URL(string: "https://example.com/x")!
        for headers: HTTPHeaders in [["Idempotency-Key": ""], ["idempotency-key": "  "]] {
            let keyed = transport.keyed(HTTPRequest(method: .post, url: url, headers: headers))
            #expect(keyed.idempotency == .keyed("fixed"), "\(headers)")
            #expect(keyed.headers["Idempotency-Key"] == "fixed")
            #expect(keyed.headers.fields.count == 1)
        }
        let blankKey = transport.keyed(HTTPRequest(method: .post, url: url, idempotency: .keyed("")))
        #expect(blankKey.idempotency == .keyed("fixed"))
        #expect(blankKey.headers["Idempotency-Key"] == "fixed")
    }

    @Test("A bare POST is not retried after a failure that may have reached the server")
    func bareNonIdempotentNotRetried() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/events", .reset, .status(201))
        let pipeline = TestOnlyRetryPipeline()
        let transport = ResilientTransport(wrapping: sharedTransport) { _ in pipeline }
        let error = await #expect(throws: (any Error).self) {
            try await transport.send(HTTPRequest(method: .post, url: server.url("/events")), context: realContext())
        }
        #expect(classify(error)?.code == .connectionReset)
        #expect(server.requestCount == 1)
    }

    @Test("Secure transport upgrades or blocks plaintext, never downgrades, and says why")
    func secureTransport() async throws {
        let recorder = LockedBox<[URL]>([])
        struct Recording: HTTPTransport {
            let recorder: LockedBox<[URL]>
            func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
                recorder.mutate { $0.append(request.url) }
                return HTTPResponse(status: 200)
            }
        }
        let sink = RecordingTelemetrySink()
        let context = ResilienceContext(key: "feeds", telemetry: sink)
        let upgrading = SecureTransport(wrapping: Recording(recorder: recorder), policy: .upgrade)
        _ = try await upgrading.send(
            HTTPRequest(url: URL(string: "http://jobs.example.com:80/feed?q=1")!), context: context)
        _ = try await upgrading.send(HTTPRequest(url: URL(string: "https://jobs.example.com/feed")!), context: context)
        #expect(
            recorder.value.map(\.absoluteString) == [
                "https://jobs.example.com/feed?q=1", "https://jobs.example.com/feed",
            ])
        let blocking = SecureTransport(wrapping: Recording(recorder: recorder), policy: .block)
        let error = await #expect(throws: (any Error).self) {
            try await blocking.send(
                HTTPRequest(url: URL(string: "http://jobs.example.com/feed?token=s3cret")!), context: context)
        }
        let classification = classify(error)
        #expect(classification?.category == .insecureTransport)
        #expect(classification?.code == .insecureTransportBlocked)
        #expect(classification?.message?.contains("jobs.example.com") == true)
        #expect(recorder.value.count == 2)
        let blocked = try #require(sink.events.first { $0.kind == .insecureTransportBlocked })
        #expect(blocked.detail == "http://jobs.example.com/feed")
    }

    @Test("A request made other than by send runs under the policy: secured, with the policy in effect, reported")
    func enforcingOtherRequests() async throws {
        let sink = RecordingTelemetrySink()
        let context = ResilienceContext(key: "feeds", telemetry: sink)
        let secure = SecureTransport(wrapping: ScriptedHTTPTransport(), policy: .upgrade)
        let (url, inEffect) = try await secure.enforcing(
            HTTPRequest(url: URL(string: "http://jobs.example.com/events")!), context: context
        ) { request in
            (request.url, SecureTransportPolicy.inEffect)
        }
        #expect(url.absoluteString == "https://jobs.example.com/events")
        #expect(inEffect == [.upgrade])
        #expect(SecureTransportPolicy.inEffect.isEmpty)
        let ran = LockedBox(false)
        let error = await #expect(throws: (any Error).self) {
            try await SecureTransport(wrapping: ScriptedHTTPTransport(), policy: .block).enforcing(
                HTTPRequest(url: URL(string: "http://jobs.example.com/events")!), context: context
            ) { _ in ran.mutate { $0 = true } }
        }
        #expect(classify(error)?.code == .insecureTransportBlocked)
        #expect(ran.value == false, "a refused request is not made")
        #expect(sink.events.filter { $0.kind == .insecureTransportBlocked }.count == 1)
    }

    @Test("Loopback is allowed in the standard policy, so FaultServer stays reachable")
    func standardPolicyAllowsLoopback() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/ok", .ok())
        let transport = SecureTransport(wrapping: sharedTransport)
        #expect(try await transport.send(HTTPRequest(url: server.url("/ok")), context: realContext()).status == 200)
    }

    @Test("Resilient transport validates statuses inside the pipeline: 503, 503, 200 succeeds on attempt 3")
    func resilientRetriesServerErrors() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .status(503), .status(503), .json("[]"))
        server.script("/missing", .json(#"{"detail":"no such board","code":"BOARD_NOT_FOUND"}"#, status: 404))
        let pipeline = TestOnlyRetryPipeline()
        let hosts = LockedBox<[String]>([])
        let transport = ResilientTransport(wrapping: sharedTransport) { host in
            hosts.mutate { $0.append(host) }
            return pipeline
        }
        #expect(try await transport.send(HTTPRequest(url: server.url("/jobs")), context: realContext()).status == 200)
        #expect(server.requestCount(for: "/jobs") == 3)
        #expect(hosts.value == ["127.0.0.1"])
        let error = await #expect(throws: (any Error).self) {
            try await transport.send(HTTPRequest(url: server.url("/missing")), context: realContext())
        }
        #expect(error is HTTPStatusError)
        let classification = classify(error)
        #expect(classification?.category == .notFound)
        #expect(classification?.message == "[BOARD_NOT_FOUND] no such board")
        #expect(server.requestCount(for: "/missing") == 1)
        let lenient = ResilientTransport(wrapping: sharedTransport, validation: .successfulOrNotFound) { _ in pipeline }
        #expect(try await lenient.send(HTTPRequest(url: server.url("/missing")), context: realContext()).status == 404)
    }

    @Test("A 429 that outlasts the retries surfaces as rateLimited with the server's Retry-After")
    func rateLimitedThroughTheStack() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .rateLimited(retryAfter: "2", headers: ["X-Error-Code": "SLOW_DOWN"]))
        let pipeline = TestOnlyRetryPipeline()
        let transport = ResilientTransport(wrapping: sharedTransport) { _ in pipeline }
        let error = await #expect(throws: (any Error).self) {
            try await transport.send(HTTPRequest(url: server.url("/jobs")), context: realContext())
        }
        let classification = classify(error)
        #expect(classification?.category == .rateLimited)
        #expect(classification?.retryAfter == .seconds(2))
        #expect(classification?.httpStatus == 429)
        #expect(classification?.message == "[SLOW_DOWN]")
        #expect(server.requestCount == 3)
    }

    /// The retry stage's own rule (cancellation is never retried) is tested on a manual clock in
    /// ResiliencePoliciesTests; this test checks what the transport contributes over real sockets: a send
    /// cancelled mid-flight ends as a cancellation, and the server saw one request.
    @Test("A send cancelled mid-flight ends as a cancellation after one request, and is not retried")
    func cancellationNeverRetried() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/stall", .hang)
        let pipeline = TestOnlyRetryPipeline(maximumAttempts: 5)
        let transport = ResilientTransport(wrapping: sharedTransport) { _ in pipeline }
        let url = server.url("/stall")
        let task = Task { try await transport.send(HTTPRequest(url: url), context: realContext(timeout: .seconds(30))) }
        #expect(await eventually(seconds: 30) { server.requestCount == 1 })
        task.cancel()
        #expect(classify(await #expect(throws: (any Error).self) { try await task.value })?.category == .cancelled)
        // The pipeline has returned: every attempt it made is counted, and none can follow.
        #expect(pipeline.attempts.value == 1)
        #expect(server.requestCount == 1)
    }
}
