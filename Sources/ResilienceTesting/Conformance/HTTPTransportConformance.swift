import Foundation
import ResilienceCore

/// A conformance kit for ``HTTPTransport`` implementations (URLSession, AsyncHTTPClient, your own), run over
/// real loopback sockets against ``FaultServer``'s fault catalogue.
///
/// Each case starts from a fresh script on a FaultServer bound to 127.0.0.1 and checks one rule of the
/// transport contract: statuses are returned, never thrown; connection resets, empty replies, garbage and
/// truncated bodies are thrown as typed, classifiable errors; a stalled or dripping server cannot outlive the
/// context's deadline; redirects are followed and a cross-origin redirect carries no credentials; redirect
/// loops end; a 429 keeps its `Retry-After`; gzip is inflated, and a gzip bomb or a huge body is refused
/// with ``FailureCode/responseTooLarge``; cancellation ends a request promptly as cancellation; concurrent
/// requests are safe.
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

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - responseCap: The transport's response size limit in bytes.
        ///   - stallDeadline: The deadline of the stall, drip and cancellation cases.
        ///   - requestDeadline: The deadline of every other request.
        ///   - slack: How much later than a deadline or a cancellation a request may end.
        ///   - concurrentRequests: How many requests the concurrency case sends at once.
        public init(
            responseCap: Int = 4 << 20, stallDeadline: Duration = .milliseconds(500),
            requestDeadline: Duration = .seconds(20), slack: Duration = .seconds(8), concurrentRequests: Int = 16
        ) {
            self.responseCap = responseCap
            self.stallDeadline = stallDeadline
            self.requestDeadline = requestDeadline
            self.slack = slack
            self.concurrentRequests = concurrentRequests
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
        "statuses-returned", "reset", "empty-reply", "garbage", "truncated", "stall-deadline", "drip-deadline",
        "expired-deadline", "redirect-same-origin", "redirect-cross-origin-strips-credentials", "redirect-loop",
        "rate-limited-retry-after", "gzip-inflated", "gzip-bomb", "huge-body", "cancellation",
        "cancelled-before-start", "concurrent-requests",
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

    private func context(deadline: Duration? = nil) -> ResilienceContext {
        let clock = ResilienceClock.continuous
        return ResilienceContext(
            key: "conformance", operation: "GET",
            deadline: clock.now().advanced(by: deadline ?? configuration.requestDeadline),
            clock: clock, classifier: kit.classifier)
    }

    private func send(
        _ path: String, on target: FaultServer? = nil, headers: HTTPHeaders = [:], deadline: Duration? = nil
    ) async -> Result<HTTPResponse, any Error> {
        let url = (target ?? server).url(path)
        do {
            return .success(
                try await kit.transport.send(
                    HTTPRequest(url: url, headers: headers), context: context(deadline: deadline)))
        } catch {
            return .failure(error)
        }
    }

    private func violation(_ detail: String) -> ConformanceViolation {
        ConformanceViolation(rule: rule, detail: detail)
    }

    /// A thrown, classified error of `category` (any category when `nil`) and, when given, `code`.
    private func expectFailure(
        _ result: Result<HTTPResponse, any Error>, category: FailureCategory? = nil, code: FailureCode? = nil,
        transient: Bool? = nil, _ what: String
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
        case "reset":
            server.script("/f", .reset)
            return expectFailure(await send("/f"), transient: true, "a connection reset")
        case "empty-reply":
            server.script("/f", .emptyReply)
            return expectFailure(await send("/f"), transient: true, "an empty reply")
        case "garbage":
            server.script("/f", .garbage())
            return expectFailure(await send("/f"), "a reply that is not HTTP")
        case "truncated":
            server.script("/f", .truncated(body: Data(#"{"jobs":["#.utf8), declaredLength: 1_000))
            return expectFailure(await send("/f"), "a body shorter than its Content-Length")
        case "stall-deadline":
            server.script("/f", .hang)
            return await deadlineCase("a stalled server")
        case "drip-deadline":
            server.script(
                "/f", .slowDrip(body: Data(repeating: 0x61, count: 10_000), chunkSize: 1, interval: .milliseconds(50)))
            return await deadlineCase("a server dripping one byte per 50 ms")
        case "expired-deadline": return await expiredDeadline()
        case "redirect-same-origin": return await redirectSameOrigin()
        case "redirect-cross-origin-strips-credentials": return await redirectCrossOrigin()
        case "redirect-loop":
            server.script("/a", .redirect(to: "/b"))
            server.script("/b", .redirect(to: "/a"))
            let (result, elapsed) = await timed { await send("/a") }
            var found = expectFailure(result, code: .tooManyRedirects, "a redirect loop")
            if elapsed > configuration.slack { found.append(violation("a redirect loop took \(elapsed)")) }
            return found
        case "rate-limited-retry-after": return await rateLimited()
        case "gzip-inflated": return await gzipInflated()
        case "gzip-bomb":
            server.script("/f", .gzipBomb(decompressedSize: configuration.responseCap * 16))
            return await tooLarge("a gzip bomb inflating to 16 × the cap")
        case "huge-body":
            server.script("/f", .hugeBody(size: configuration.responseCap * 16))
            return await tooLarge("a body of 16 × the cap")
        case "cancellation": return await cancellation()
        case "cancelled-before-start": return await cancelledBeforeStart()
        case "concurrent-requests": return await concurrentRequests()
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

    private func deadlineCase(_ what: String) async -> [ConformanceViolation] {
        let deadline = configuration.stallDeadline
        let (result, elapsed) = await timed { await send("/f", deadline: deadline) }
        var found = expectFailure(result, category: .timeout, "\(what) with a \(deadline) deadline")
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
        let started = ContinuousClock.now
        let result: Result<HTTPResponse, any Error>
        do {
            result = .success(try await kit.transport.send(HTTPRequest(url: server.url("/f")), context: context))
        } catch {
            result = .failure(error)
        }
        var found = expectFailure(result, category: .timeout, "a request whose deadline has passed")
        let elapsed = ContinuousClock.now - started
        if elapsed > configuration.slack { found.append(violation("an expired deadline still took \(elapsed)")) }
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
            return found
        }
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

    private func cancellation() async -> [ConformanceViolation] {
        server.script("/f", .hang)
        let transport = kit.transport
        let request = HTTPRequest(url: server.url("/f"))
        let context = context(deadline: .seconds(300))
        let task = Task { try await transport.send(request, context: context) }
        let arrived = ContinuousClock.now.advanced(by: configuration.slack)
        while server.requestCount(for: "/f") == 0, ContinuousClock.now < arrived {
            try? await Task.sleep(for: .milliseconds(10))
        }
        guard server.requestCount(for: "/f") == 1 else {
            task.cancel()
            return [violation("the request never reached the server")]
        }
        let started = ContinuousClock.now
        task.cancel()
        let result: Result<HTTPResponse, any Error>
        do {
            result = .success(try await task.value)
        } catch {
            result = .failure(error)
        }
        let elapsed = ContinuousClock.now - started
        var found = expectFailure(result, category: .cancelled, "a request cancelled mid-flight")
        if elapsed > configuration.slack {
            found.append(violation("cancellation took \(elapsed); the request had 300 s left"))
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
        let result: Result<HTTPResponse, any Error>
        do {
            result = .success(try await task.value)
        } catch {
            result = .failure(error)
        }
        return expectFailure(result, category: .cancelled, "a request sent from a cancelled task")
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
