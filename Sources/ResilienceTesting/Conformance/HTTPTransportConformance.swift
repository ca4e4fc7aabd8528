import Foundation
import ResilienceCore

/// A conformance kit for ``HTTPTransport`` implementations (URLSession, AsyncHTTPClient, your own), run over
/// real loopback sockets against ``FaultServer``'s fault catalogue.
///
/// Each case starts from a fresh script on a FaultServer bound to 127.0.0.1 and checks one rule of the
/// transport contract: statuses (and malformed bodies) are returned, never thrown; connection resets, empty
/// replies, garbage and truncated bodies, a refused connection, a failed TLS handshake and an unknown host are
/// thrown as typed errors with their own ``FailureCode``; a stalled or dripping server cannot outlive the
/// context's deadline, which runs on the context's clock; redirects are followed, credentials stay within
/// their origin, loops are recognised and chains are cut after ``Configuration/maximumRedirects``; a 429
/// keeps its `Retry-After`; gzip is inflated, and a gzip bomb or a huge body is refused with
/// ``FailureCode/responseTooLarge``; cancellation, before the request or while it waits or reads, ends it
/// promptly as cancellation; concurrent requests are safe; a request whose header fields cannot be sent as they
/// are (a name that is not an HTTP token, a value with CR, LF, NUL or another control character) is refused
/// before anything is sent, as the caller's invalid request (`clientError`, ``FailureCode/invalidFormat``, not
/// transient), never passed on with its line breaks.
///
/// ```swift
/// @Test func conforms() async throws {
///     let transport = MyTransport(maximumResponseSize: 1 << 20)
///     let kit = HTTPTransportConformance(transport, classifier: MyClassifier(), configuration: .init(responseCap: 1 << 20))
///     let report = await kit.run()
///     #expect(report.conforms, "\(report)")
/// }
/// ```
///
/// Real time is involved (sockets); every bound is generous (a loaded 2-core machine passes) yet far below
/// what the fault itself would take without the rule.
public struct HTTPTransportConformance: ConformanceKit {
    /// What the kit needs to know about the transport under test.
    public struct Configuration: Sendable {
        /// The largest body the transport accepts (its own setting); bombs and huge bodies are sized from it.
        public var responseCap: Int
        /// The deadline given to the stall, drip and cancellation cases.
        public var stallDeadline: Duration
        /// The deadline of every other request.
        public var requestDeadline: Duration
        /// How much later than a deadline (or a cancellation) a request may end; generous for loaded machines.
        public var slack: Duration
        /// How many requests the concurrency case sends at once.
        public var concurrentRequests: Int
        /// How many redirects the transport follows before it fails with ``FailureCode/tooManyRedirects``.
        public var maximumRedirects: Int

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - responseCap: The transport's response size limit in bytes.
        ///   - stallDeadline: The deadline of the stall, drip and cancellation cases.
        ///   - requestDeadline: The deadline of every other request.
        ///   - slack: How much later than a deadline or a cancellation a request may end.
        ///   - concurrentRequests: How many requests the concurrency case sends at once.
        ///   - maximumRedirects: How many redirects the transport follows (its own setting).
        public init(
            responseCap: Int = 4 << 20, stallDeadline: Duration = .milliseconds(500),
            requestDeadline: Duration = .seconds(20), slack: Duration = .seconds(8), concurrentRequests: Int = 16,
            maximumRedirects: Int = 10
        ) {
            self.responseCap = responseCap
            self.stallDeadline = stallDeadline
            self.requestDeadline = requestDeadline
            self.slack = slack
            self.concurrentRequests = concurrentRequests
            self.maximumRedirects = maximumRedirects
        }
    }

    /// The transport under test.
    public var transport: any HTTPTransport
    /// Classifies the transport's errors (its own classifier; ``ClassifiedError``s classify themselves).
    public var classifier: any ErrorClassifier
    /// What the kit knows about the transport.
    public var configuration: Configuration
    /// The cases to run (all by default; see ``allCases``).
    public var cases: [String]

    /// Every case, in the order they run.
    public static let allCases = [
        "statuses-returned", "malformed-body-returned", "reset", "empty-reply", "garbage", "truncated",
        "connection-refused", "tls-handshake-failure", "host-not-found", "stall-deadline", "drip-deadline",
        "expired-deadline", "deadline-on-context-clock", "redirect-same-origin",
        "redirect-cross-origin-strips-credentials", "redirect-loop", "redirect-chain", "rate-limited-retry-after",
        "server-quota-reported", "gzip-inflated", "gzip-bomb", "huge-body", "cancellation",
        "cancellation-while-reading",
        "cancelled-before-start", "concurrent-requests", "invalid-header-field",
    ]

    /// Creates the kit.
    ///
    /// - Parameters:
    ///   - transport: The transport under test, configured with `configuration.responseCap` as its size limit.
    ///   - classifier: Classifies the transport's errors.
    ///   - configuration: The cap, the deadlines and the slack.
    ///   - cases: The cases to run; all of them by default.
    public init(
        _ transport: any HTTPTransport, classifier: any ErrorClassifier,
        configuration: Configuration = Configuration(), cases: [String] = HTTPTransportConformance.allCases
    ) {
        self.transport = transport
        self.classifier = classifier
        self.configuration = configuration
        self.cases = cases
    }

    /// `"HTTPTransport"`.
    public var subject: String { "HTTPTransport" }

    /// Runs the cases, each on a fresh pair of loopback servers.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        for name in cases {
            await run.run(name) {
                let server: FaultServer
                let other: FaultServer
                do {
                    server = try FaultServer()
                    other = try FaultServer()
                } catch {
                    return [ConformanceViolation(rule: name, detail: "could not start a FaultServer: \(error)")]
                }
                defer {
                    server.stop()
                    other.stop()
                }
                let probe = Probe(kit: self, server: server, other: other, rule: name)
                return await probe.run()
            }
        }
        return run.report(subject)
    }

    fileprivate func classification(of error: any Error) -> FailureClassification {
        CompositeErrorClassifier([classifier]).classification(of: error)
    }
}

/// One case's run against its servers.
private struct Probe: Sendable {
    let kit: HTTPTransportConformance
    let server: FaultServer
    let other: FaultServer
    let rule: String

    private var configuration: HTTPTransportConformance.Configuration { kit.configuration }

    private func context(
        deadline: Duration? = nil, clock: ResilienceClock = .continuous, telemetry: (any TelemetrySink)? = nil
    ) -> ResilienceContext {
        ResilienceContext(
            key: "conformance", operation: "GET",
            deadline: clock.now().advanced(by: deadline ?? configuration.requestDeadline), telemetry: telemetry,
            clock: clock, classifier: kit.classifier)
    }

    private func send(
        _ path: String, on target: FaultServer? = nil, headers: HTTPHeaders = [:], deadline: Duration? = nil
    ) async -> Result<HTTPResponse, any Error> {
        await send(HTTPRequest(url: (target ?? server).url(path), headers: headers), context(deadline: deadline))
    }

    private func send(_ request: HTTPRequest, _ context: ResilienceContext) async -> Result<HTTPResponse, any Error> {
        do {
            return .success(try await kit.transport.send(request, context: context))
        } catch {
            return .failure(error)
        }
    }

    private func violation(_ detail: String) -> ConformanceViolation {
        ConformanceViolation(rule: rule, detail: detail)
    }

    /// A thrown, classified error of `category` (any category when `nil`) and, when given, `code`, transience
    /// and whether the request provably never reached the server.
    private func expectFailure(
        _ result: Result<HTTPResponse, any Error>, category: FailureCategory? = nil, code: FailureCode? = nil,
        transient: Bool? = nil, notSent: Bool? = nil, _ what: String
    ) -> [ConformanceViolation] {
        switch result {
        case .success(let response):
            return [violation("\(what): returned \(response) instead of throwing")]
        case .failure(let error):
            let classification = kit.classification(of: error)
            var found: [ConformanceViolation] = []
            if classification.category == .unknown {
                found.append(violation("\(what): the error is not classifiable: \(error)"))
            }
            if let category, classification.category != category {
                found.append(
                    violation("\(what): classified \(classification.category), expected \(category) (\(error))"))
            }
            if let code, classification.code != code {
                found.append(violation("\(what): code \(classification.code), expected \(code) (\(error))"))
            }
            if let transient, classification.isTransient != transient {
                found.append(violation("\(what): transient is \(classification.isTransient), expected \(transient)"))
            }
            if let notSent, classification.requestWasNotSent != notSent {
                found.append(
                    violation("\(what): requestWasNotSent is \(classification.requestWasNotSent), expected \(notSent)"))
            }
            return found
        }
    }

    private func timed(
        _ body: () async -> Result<HTTPResponse, any Error>
    ) async -> (
        Result<HTTPResponse, any Error>, Duration
    ) {
        let started = ContinuousClock.now
        let result = await body()
        return (result, ContinuousClock.now - started)
    }

    func run() async -> [ConformanceViolation] {
        switch rule {
        case "statuses-returned": return await statusesReturned()
        case "malformed-body-returned": return await malformedBodyReturned()
        case "reset":
            server.script("/f", .reset)
            return expectFailure(await send("/f"), code: .connectionReset, transient: true, "a connection reset")
        case "empty-reply":
            server.script("/f", .emptyReply)
            return expectFailure(await send("/f"), code: .emptyReply, transient: true, "an empty reply")
        case "garbage":
            server.script("/f", .garbage())
            return expectFailure(
                await send("/f"), category: .invalidResponse, code: .invalidResponse, "a reply that is not HTTP")
        case "truncated":
            server.script("/f", .truncated(body: Data(#"{"jobs":["#.utf8), declaredLength: 1_000))
            return expectFailure(
                await send("/f"), code: .truncatedResponse, transient: true, "a body shorter than its Content-Length")
        case "connection-refused": return await connectionRefused()
        case "tls-handshake-failure":
            server.script("/f", .ok())
            let url = URL(string: "https://127.0.0.1:\(server.port)/f")!
            return expectFailure(
                await send(HTTPRequest(url: url), context()), code: .certificateInvalid, transient: false,
                "TLS to a plaintext server")
        case "host-not-found":
            let url = URL(string: "http://no-such-host.invalid/f")!
            return expectFailure(
                await send(HTTPRequest(url: url), context()), code: .hostNotFound, notSent: true, "an unknown host")
        case "stall-deadline":
            server.script("/f", .hang)
            return await stallDeadline()
        case "drip-deadline":
            server.script(
                "/f", .slowDrip(body: Data(repeating: 0x61, count: 10_000), chunkSize: 1, interval: .milliseconds(50)))
            return await deadlineCase("a server dripping one byte per 50 ms")
        case "expired-deadline": return await expiredDeadline()
        case "deadline-on-context-clock": return await deadlineOnContextClock()
        case "redirect-same-origin": return await redirectSameOrigin()
        case "redirect-cross-origin-strips-credentials": return await redirectCrossOrigin()
        case "redirect-loop": return await redirectLoop()
        case "redirect-chain": return await redirectChain()
        case "rate-limited-retry-after": return await rateLimited()
        case "server-quota-reported": return await serverQuotaReported()
        case "gzip-inflated": return await gzipInflated()
        case "gzip-bomb":
            server.script("/f", .gzipBomb(decompressedSize: configuration.responseCap * 16))
            return await tooLarge("a gzip bomb inflating to 16 × the cap")
        case "huge-body":
            server.script("/f", .hugeBody(size: configuration.responseCap * 16))
            return await tooLarge("a body of 16 × the cap")
        case "cancellation":
            server.script("/f", .hang)
            return await cancellation("a request cancelled while it waits for the response")
        case "cancellation-while-reading":
            server.script(
                "/f", .slowDrip(body: Data(repeating: 0x61, count: 100), chunkSize: 1, interval: .milliseconds(100)))
            return await cancellation("a request cancelled while it reads a dripping body")
        case "cancelled-before-start": return await cancelledBeforeStart()
        case "concurrent-requests": return await concurrentRequests()
        case "invalid-header-field": return await invalidHeaderField()
        default: return [violation("unknown case")]
        }
    }

    private func statusesReturned() async -> [ConformanceViolation] {
        var found: [ConformanceViolation] = []
        for status in [200, 201, 204, 304, 400, 404, 409, 500, 503] {
            let body = status == 204 || status == 304 ? "" : "body-\(status)"
            server.script("/s\(status)", .status(status, headers: ["X-Probe": "\(status)"], body: body))
            switch await send("/s\(status)") {
            case .success(let response):
                if response.status != status { found.append(violation("\(status) arrived as \(response.status)")) }
                if response.url != server.url("/s\(status)") {
                    let named = String(describing: response.url)
                    found.append(violation("\(status): the response names \(named), not the request's URL"))
                }
                if server.requestCount(for: "/s\(status)") != 1 {
                    found.append(violation("\(status) was requested \(server.requestCount(for: "/s\(status)")) times"))
                }
                if response.headers["X-Probe"] != "\(status)" {
                    found.append(violation("\(status): the X-Probe header was lost"))
                }
                if String(decoding: response.body, as: UTF8.self) != body {
                    found.append(violation("\(status): the body was not returned intact"))
                }
            case .failure(let error):
                found.append(violation("\(status) was thrown (\(error)); statuses must be returned"))
            }
        }
        return found
    }

    private func malformedBodyReturned() async -> [ConformanceViolation] {
        server.script("/f", .malformedJSON)
        switch await send("/f") {
        case .failure(let error): return [violation("a 200 with malformed JSON was thrown (\(error))")]
        case .success(let response):
            if response.status != 200 || response.body.isEmpty
                || (try? JSONSerialization.jsonObject(with: response.body)) != nil
            {
                return [violation("a 200 with malformed JSON arrived as \(response) (decoding is the caller's job)")]
            }
            return []
        }
    }

    private func connectionRefused() async -> [ConformanceViolation] {
        let url = other.url("/f")
        other.stop()
        try? await Task.sleep(for: .milliseconds(200))
        let (result, elapsed) = await timed { await send(HTTPRequest(url: url), context()) }
        var found = expectFailure(
            result, code: .connectionRefused, transient: true, notSent: true, "a refused connection")
        if elapsed > configuration.slack / 2 {
            found.append(violation("a refused connection took \(elapsed) to fail (silent connection retries?)"))
        }
        return found
    }

    /// A stalled server: a timeout with ``FailureCode/timedOut`` at the deadline, reported once to telemetry.
    private func stallDeadline() async -> [ConformanceViolation] {
        let sink = RecordingTelemetrySink()
        var found = await deadlineCase("a stalled server", code: .timedOut, telemetry: sink)
        if sink.kinds != [.timedOut] {
            found.append(violation("a stalled server's timeout was reported as \(sink.kinds), expected [timedOut]"))
        }
        return found
    }

    private func deadlineCase(
        _ what: String, code: FailureCode? = nil, telemetry: (any TelemetrySink)? = nil
    ) async -> [ConformanceViolation] {
        let deadline = configuration.stallDeadline
        let (result, elapsed) = await timed {
            await send(HTTPRequest(url: server.url("/f")), context(deadline: deadline, telemetry: telemetry))
        }
        var found = expectFailure(
            result, category: .timeout, code: code, "\(what) with a \(deadline) deadline")
        if elapsed > deadline + configuration.slack {
            found.append(violation("\(what) ended after \(elapsed), deadline \(deadline)"))
        }
        if elapsed < deadline * 0.9 {
            found.append(violation("\(what) ended after \(elapsed), before its \(deadline) deadline"))
        }
        return found
    }

    private func expiredDeadline() async -> [ConformanceViolation] {
        server.script("/f", .hang)
        let clock = ResilienceClock.continuous
        let context = ResilienceContext(
            key: "conformance", deadline: clock.now().advanced(by: .milliseconds(-100)), clock: clock,
            classifier: kit.classifier)
        let (result, elapsed) = await timed { await send(HTTPRequest(url: server.url("/f")), context) }
        var found = expectFailure(result, category: .timeout, "a request whose deadline has passed")
        if elapsed > configuration.slack { found.append(violation("an expired deadline still took \(elapsed)")) }
        return found
    }

    /// The deadline counts on the context's clock: a stalled request on a ``ManualClock`` times out when that
    /// clock is advanced, not before and not by the platform's own timers.
    private func deadlineOnContextClock() async -> [ConformanceViolation] {
        server.script("/f", .hang)
        let manual = ManualClock()
        let context = context(deadline: .seconds(30), clock: .manual(manual))
        let transport = kit.transport
        let request = HTTPRequest(url: server.url("/f"))
        let task = Task { try await transport.send(request, context: context) }
        guard await arrived("/f") else {
            task.cancel()
            return [violation("the request never reached the server")]
        }
        // The transport waits for its deadline on the context's clock (bounded: a transport that never does
        // must not hang the kit).
        let asleepBy = ContinuousClock.now.advanced(by: configuration.slack)
        while manual.sleeperCount == 0, ContinuousClock.now < asleepBy {
            try? await Task.sleep(for: .milliseconds(10))
        }
        guard manual.sleeperCount > 0 else {
            task.cancel()
            return [violation("the transport never waited on the context's clock for its deadline")]
        }
        manual.advance(by: .seconds(30))
        let (result, elapsed) = await timed { await outcome(of: task) }
        var found = expectFailure(
            result, code: .timedOut, "a stalled request whose context clock passed its deadline")
        if elapsed > configuration.slack {
            found.append(violation("the timeout came \(elapsed) after the context's clock passed the deadline"))
        }
        return found
    }

    /// Waits (real time, up to the slack) until `path` has been requested.
    private func arrived(_ path: String) async -> Bool {
        let end = ContinuousClock.now.advanced(by: configuration.slack)
        while server.requestCount(for: path) == 0, ContinuousClock.now < end {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return server.requestCount(for: path) > 0
    }

    private func outcome(of task: Task<HTTPResponse, any Error>) async -> Result<HTTPResponse, any Error> {
        do {
            return .success(try await task.value)
        } catch {
            return .failure(error)
        }
    }

    /// Header fields no transport may send: each is refused before any byte reaches the server.
    private func invalidHeaderField() async -> [ConformanceViolation] {
        server.script("/f", .ok())
        let fields = [
            ("X-Note", "a\r\nX-Injected: yes"), ("X-Note", "a\nb"), ("X-Note", "a\u{0}b"), ("X-Note", "a\u{7}b"),
            ("X Note", "a"), ("X-Note:", "a"), ("", "a"), ("X-Nöte", "a"),
        ]
        var found: [ConformanceViolation] = []
        for (name, value) in fields {
            var headers = HTTPHeaders()
            headers.add(name: name, value: value)
            let what = "the header field \(name.debugDescription): \(value.debugDescription)"
            found += expectFailure(
                await send("/f", headers: headers), category: .clientError, code: .invalidFormat, transient: false,
                notSent: true, what)
        }
        if server.requestCount(for: "/f") > 0 {
            found.append(violation("the server received \(server.requestCount(for: "/f")) of the invalid requests"))
        }
        return found
    }

    private static let secrets: HTTPHeaders = [
        "Authorization": "Bearer conformance-secret", "Cookie": "session=conformance", "X-Trace": "t1",
    ]

    private func redirectSameOrigin() async -> [ConformanceViolation] {
        server.script("/from", .redirect(to: "/landing"))
        server.script("/landing", .ok("here"))
        switch await send("/from", headers: Self.secrets) {
        case .failure(let error): return [violation("a same-origin redirect failed: \(error)")]
        case .success(let response):
            var found: [ConformanceViolation] = []
            if response.status != 200 || String(decoding: response.body, as: UTF8.self) != "here" {
                found.append(violation("a same-origin redirect was not followed: \(response)"))
            }
            if server.requestCount(for: "/landing") != 1 {
                found.append(violation("the redirect target got \(server.requestCount(for: "/landing")) requests"))
            }
            if let landed = server.requests(to: "/landing").first {
                for name in ["Authorization", "Cookie"] where landed.headers[name] != Self.secrets[name] {
                    found.append(violation("\(name) was not kept on a same-origin redirect"))
                }
            }
            return found
        }
    }

    private func redirectCrossOrigin() async -> [ConformanceViolation] {
        server.script("/from", .redirect(to: other.url("/landing").absoluteString))
        other.script("/landing", .ok("there"))
        switch await send("/from", headers: Self.secrets) {
        case .failure(let error): return [violation("a cross-origin redirect failed: \(error)")]
        case .success(let response):
            var found: [ConformanceViolation] = []
            if response.status != 200 || String(decoding: response.body, as: UTF8.self) != "there" {
                found.append(violation("a cross-origin redirect was not followed: \(response)"))
            }
            guard let landed = other.requests(to: "/landing").first else {
                return found + [violation("the other origin got no request")]
            }
            for name in ["Authorization", "Cookie"] where landed.headers[name] != nil {
                found.append(violation("\(name) was sent to another origin after a redirect"))
            }
            if landed.headers["X-Trace"] != Self.secrets["X-Trace"] {
                found.append(violation("X-Trace, not a credential, was dropped on a cross-origin redirect"))
            }
            return found
        }
    }

    /// A loop is recognised as one (its first URL requested once, the error saying so), not followed until the
    /// redirect limit.
    private func redirectLoop() async -> [ConformanceViolation] {
        server.script("/a", .redirect(to: "/b"))
        server.script("/b", .redirect(to: "/a"))
        let (result, elapsed) = await timed { await send("/a") }
        var found = expectFailure(result, code: .tooManyRedirects, "a redirect loop")
        if elapsed > configuration.slack { found.append(violation("a redirect loop took \(elapsed)")) }
        if server.requestCount(for: "/a") != 1 {
            found.append(violation("the loop's first URL was requested \(server.requestCount(for: "/a")) times"))
        }
        if case .failure(let error) = result, kit.classification(of: error).message?.contains("loop") != true {
            found.append(violation("the error does not say it is a loop: \(error)"))
        }
        return found
    }

    /// A chain longer than the limit fails after following exactly ``Configuration/maximumRedirects`` hops.
    private func redirectChain() async -> [ConformanceViolation] {
        let limit = configuration.maximumRedirects
        for hop in 0...(limit + 4) { server.script("/hop\(hop)", .redirect(to: "/hop\(hop + 1)")) }
        var found = expectFailure(await send("/hop0"), code: .tooManyRedirects, "a chain of \(limit + 5) redirects")
        if server.requestCount != limit + 1 {
            found.append(
                violation("the chain cost \(server.requestCount) requests; \(limit) redirects make \(limit + 1)"))
        }
        return found
    }

    private func rateLimited() async -> [ConformanceViolation] {
        server.script("/f", .rateLimited(retryAfter: "30"))
        let request = HTTPRequest(url: server.url("/f"))
        switch await send("/f") {
        case .failure(let error): return [violation("a 429 was thrown (\(error)); statuses must be returned")]
        case .success(let response):
            var found: [ConformanceViolation] = []
            if response.status != 429 { found.append(violation("a 429 arrived as \(response.status)")) }
            if response.headers["Retry-After"] != "30" {
                found.append(violation("Retry-After was lost: \(String(describing: response.headers["Retry-After"]))"))
            }
            let classification = kit.classification(of: HTTPStatusError(response: response, request: request))
            if classification.category != .rateLimited {
                found.append(violation("the classifier reads a 429 as \(classification.category)"))
            }
            if classification.retryAfter != .seconds(30) {
                found.append(
                    violation(
                        "the classifier reads Retry-After: 30 as \(String(describing: classification.retryAfter))"))
            }
            return found
        }
    }

    /// A quota the server advertises reaches the context's ``ServerQuotaObserver``, once per response.
    private func serverQuotaReported() async -> [ConformanceViolation] {
        server.script(
            "/f", .status(200, headers: ["X-RateLimit-Remaining": "7", "X-RateLimit-Reset": "30"], body: "ok"))
        let observer = QuotaRecorder()
        var context = context()
        context.quotaObserver = observer
        if case .failure(let error) = await send(HTTPRequest(url: server.url("/f")), context) {
            return [violation("a 200 with a quota failed: \(error)")]
        }
        let expected = ServerQuota(remaining: 7, resetAfter: .seconds(30))
        let seen = observer.quotas.value
        return seen == [expected] ? [] : [violation("the context's quota observer saw \(seen), expected [\(expected)]")]
    }

    private func gzipInflated() async -> [ConformanceViolation] {
        let size = max(1, configuration.responseCap / 4)
        server.script("/f", .gzipBomb(decompressedSize: size))
        switch await send("/f") {
        case .failure(let error): return [violation("a gzip body of \(size) bytes (under the cap) failed: \(error)")]
        case .success(let response):
            if response.body.count != size || !response.body.allSatisfy({ $0 == 0 }) {
                return [violation("a gzip body inflating to \(size) bytes arrived as \(response.body.count) bytes")]
            }
            return []
        }
    }

    private func tooLarge(_ what: String) async -> [ConformanceViolation] {
        let (result, elapsed) = await timed { await send("/f") }
        var found = expectFailure(result, code: .responseTooLarge, what)
        if elapsed > configuration.slack * 2 { found.append(violation("\(what) took \(elapsed) to refuse")) }
        return found
    }

    /// Cancels a request to `/f` once it reached the server (and had time to start reading).
    private func cancellation(_ what: String) async -> [ConformanceViolation] {
        let transport = kit.transport
        let request = HTTPRequest(url: server.url("/f"))
        let context = context(deadline: .seconds(300))
        let task = Task { try await transport.send(request, context: context) }
        guard await arrived("/f") else {
            task.cancel()
            return [violation("the request never reached the server")]
        }
        try? await Task.sleep(for: .milliseconds(150))
        task.cancel()
        let (result, elapsed) = await timed { await outcome(of: task) }
        var found = expectFailure(result, category: .cancelled, what)
        if elapsed > configuration.slack {
            found.append(violation("\(what): cancellation took \(elapsed); the request had 300 s left"))
        }
        return found
    }

    private func cancelledBeforeStart() async -> [ConformanceViolation] {
        server.script("/f", .ok())
        let transport = kit.transport
        let request = HTTPRequest(url: server.url("/f"))
        let context = context()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await transport.send(request, context: context)
        }
        var found = expectFailure(await outcome(of: task), category: .cancelled, "a request sent from a cancelled task")
        try? await Task.sleep(for: .milliseconds(100))
        if server.requestCount != 0 { found.append(violation("a request from a cancelled task reached the server")) }
        return found
    }

    private func concurrentRequests() async -> [ConformanceViolation] {
        let count = max(1, configuration.concurrentRequests)
        for index in 0..<count { server.script("/c\(index)", .ok("c\(index)")) }
        let bodies = await withTaskGroup(of: (Int, String?).self) { group in
            for index in 0..<count {
                group.addTask {
                    guard case .success(let response) = await send("/c\(index)") else { return (index, nil) }
                    return (index, String(decoding: response.body, as: UTF8.self))
                }
            }
            var bodies: [Int: String?] = [:]
            for await (index, body) in group { bodies[index] = body }
            return bodies
        }
        return (0..<count).compactMap { index in
            bodies[index] == "c\(index)"
                ? nil : violation("concurrent request \(index) got \(String(describing: bodies[index]))")
        }
    }
}

/// Records the quotas a transport reports.
private final class QuotaRecorder: ServerQuotaObserver {
    let quotas = LockedBox<[ServerQuota]>([])
    func observe(_ quota: ServerQuota, now: ResilienceInstant) { quotas.mutate { $0.append(quota) } }
}
