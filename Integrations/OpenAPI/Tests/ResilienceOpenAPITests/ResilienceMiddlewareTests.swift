import Foundation
import HTTPTypes
import OpenAPIRuntime
import ResilienceOpenAPI
import ResiliencePolicies
import ResilienceTesting
import ResilienceTransport
import Testing

/// A hand-written OpenAPI client with the middleware, over `ResilienceClientTransport(URLSessionTransport())`,
/// against FaultServer on loopback (real time; short backoffs).
@Suite("ResilienceMiddleware over FaultServer", .serialized)
struct ResilienceMiddlewareTests {
    /// Up to `attempts` attempts, 20 ms apart, honouring Retry-After; keys seen are recorded.
    final class Pipelines: Sendable {
        let keys = LockedBox<[String]>([])
        let pipeline: Pipeline

        init(attempts: Int = 3, breaker: ConsecutiveFailureBreaker? = nil) {
            var policy = StandardRetryPolicy.standard
            policy.maxAttempts = attempts
            policy.backoff = .constant(.milliseconds(20))
            policy.jitter = .none
            let retry = RetryStrategy(policy: policy)
            if let breaker {
                pipeline = Pipeline {
                    retry
                    CircuitBreakerStrategy(breaker: breaker)
                }
            } else {
                pipeline = Pipeline { retry }
            }
        }

        func callAsFunction(_ key: String) -> any ResiliencePipeline {
            keys.mutate { $0.append(key) }
            return pipeline
        }
    }

    func client(
        _ server: FaultServer, _ pipelines: Pipelines,
        configure: (inout ResilienceMiddlewareConfiguration) -> Void = { _ in }
    ) -> JobsClient {
        var configuration = ResilienceMiddlewareConfiguration()
        configure(&configuration)
        let middleware = ResilienceMiddleware(configuration: configuration) { pipelines($0) }
        return JobsClient(
            serverURL: server.baseURL, transport: ResilienceClientTransport(URLSessionTransport()),
            middlewares: [middleware])
    }

    @Test("A 503 with Retry-After is a failure for the pipeline: retried after the hint, then 200")
    func retryAfterHonoured() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script(
            "/jobs", .status(503, headers: ["Retry-After": "1"], body: #"{"detail":"maintenance"}"#),
            .json(#"["swift"]"#))
        let pipelines = Pipelines()
        let started = ContinuousClock.now
        let output = try await client(server, pipelines).listJobs()
        #expect(output == .ok(#"["swift"]"#))
        #expect(server.requestCount(for: "/jobs") == 2)
        #expect(ContinuousClock.now - started >= .milliseconds(950), "the retry waited for Retry-After: 1")
        #expect(pipelines.keys.value == ["listJobs"])
    }

    @Test("When the retries run out, the last 503 reaches the client as its response")
    func finalFailureReturned() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .status(503, body: "down"))
        let output = try await client(server, Pipelines(attempts: 3)).listJobs()
        #expect(output == .undocumented(statusCode: 503, body: "down"))
        #expect(server.requestCount(for: "/jobs") == 3)
    }

    @Test("Or it is thrown, classified, when configured so")
    func finalFailureThrown() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .rateLimited(retryAfter: "0"))
        let error = await #expect(throws: (any Error).self) {
            try await client(server, Pipelines(attempts: 2)) { $0.returnsFinalFailureResponse = false }.listJobs()
        }
        let rejected = try #require((error as? ClientError)?.underlyingError as? RejectedResponse)
        #expect(rejected.classification.code == .rateLimited)
        #expect(rejected.response.status.code == 429)
        #expect(server.requestCount(for: "/jobs") == 2)
    }

    @Test("When a retry budget refuses the retry, the last 503 still reaches the client as its response")
    func budgetRefusalReturnsLastResponse() async throws {
        // A budget with no allowance: the first 503 is retried by the policy but refused by the budget.
        let budget = RetryBudget(RetryBudgetConfiguration(ratio: 0, minimumPerSecond: 0))
        let pipeline = Pipeline { RetryStrategy(policy: StandardRetryPolicy.standard, budget: budget) }
        let middleware = ResilienceMiddleware { _ in pipeline }
        let calls = LockedBox(0)
        let (response, body) = try await middleware.intercept(
            HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/jobs"), body: nil,
            baseURL: URL(string: "http://127.0.0.1:1")!, operationID: "listJobs"
        ) { _, _, _ in
            calls.mutate { $0 += 1 }
            return (
                HTTPTypes.HTTPResponse(status: .serviceUnavailable, headerFields: [.retryAfter: "1"]),
                HTTPBody(#"{"detail":"maintenance"}"#)
            )
        }
        #expect(calls.value == 1)
        #expect(response.status.code == 503)
        #expect(response.headerFields[.retryAfter] == "1")
        let text = try await String(collecting: try #require(body), upTo: 1024)
        #expect(text == #"{"detail":"maintenance"}"#)
    }

    @Test("A bare POST is not retried after a 503; with an Idempotency-Key it is, and every retry carries the body")
    func idempotencyOfMethods() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .status(503), .status(201, body: "made"))
        let bare = try await client(server, Pipelines()).createJob(#"{"title":"a"}"#)
        #expect(bare == .undocumented(statusCode: 503, body: ""))
        #expect(server.requestCount(for: "/jobs") == 1)
        server.script("/jobs", .status(503), .status(503), .status(201, body: "made"))
        let keyed = try await client(server, Pipelines()).createJob(#"{"title":"b"}"#, idempotencyKey: "k-1")
        #expect(keyed == .created("made"))
        let posts = server.requests(to: "/jobs").dropFirst()
        #expect(posts.count == 3)
        #expect(posts.allSatisfy { $0.body == Data(#"{"title":"b"}"#.utf8) })
        #expect(posts.allSatisfy { $0.headers["Idempotency-Key"] == "k-1" })
    }

    @Test("A single-pass body above the replay bound is sent once and not retried")
    func unreplayableBody() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .status(503), .status(201))
        let json = String(repeating: "x", count: 2_000)
        let output = try await client(server, Pipelines()) { $0.maximumReplayableRequestBody = 1_000 }
            .createJob(json, idempotencyKey: "k-2") { text in
                HTTPBody(
                    AsyncStream { continuation in
                        continuation.yield(ArraySlice(text.utf8))
                        continuation.finish()
                    }, length: .known(Int64(text.utf8.count)))
            }
        #expect(output == .undocumented(statusCode: 503, body: ""))
        #expect(server.requestCount(for: "/jobs") == 1)
        #expect(server.requests(to: "/jobs").first?.body.count == 2_000)
    }

    @Test("A single-pass body's attempt that outlasts the timeout stage is not retried, whatever its method or key")
    func unreplayableBodyAfterAttemptTimeout() async throws {
        let clock = ManualClock()
        // Each attempt gets 1 s; a failure after that becomes the stage's transient attemptTimedOut.
        let pipeline = BodyBoundsTests.retrying(attemptTimeout: .seconds(1))
        var configuration = ResilienceMiddlewareConfiguration()
        configuration.maximumReplayableRequestBody = 10
        configuration.clock = .manual(clock)
        let middleware = ResilienceMiddleware(configuration: configuration) { _ in pipeline }
        var request = HTTPTypes.HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/jobs")
        request.headerFields[HTTPField.Name("Idempotency-Key")!] = "k-5"
        let text = String(repeating: "z", count: 100)
        let body = HTTPBody(
            AsyncStream { continuation in
                continuation.yield(ArraySlice(text.utf8))
                continuation.finish()
            }, length: .known(100))
        let sent = LockedBox<[Int]>([])
        let calls = LockedBox(0)
        let error = await #expect(throws: (any Error).self) {
            _ = try await middleware.intercept(
                request, body: body, baseURL: URL(string: "http://127.0.0.1:1")!, operationID: "createJob"
            ) { _, body, _ in
                calls.mutate { $0 += 1 }
                let bytes = try await ArraySlice<UInt8>(collecting: try #require(body), upTo: 1_000)
                sent.mutate { $0.append(bytes.count) }
                // The upload took 2 s, then the transport's own timeout fired.
                clock.advance(by: .seconds(2))
                throw TransportError.timedOut(after: .seconds(2), url: nil)
            }
        }
        #expect(calls.value == 1)
        #expect(sent.value == [100])
        let timedOut = try #require(error as? ResilienceError, "\(String(describing: error))")
        #expect(timedOut.code == .attemptTimedOut)
    }

    /// Retries every failure up to three attempts, idempotent or not.
    struct RetriesAnyway: RetryPolicy {
        func decide<Random: RandomNumberGenerator>(
            _ attempt: RetryAttempt, using random: inout Random
        )
            -> RetryDecision
        {
            attempt.number < 3 ? .retry(after: .zero) : .stop(.attemptsExhausted)
        }
    }

    @Test("A policy that retries a single-pass body anyway gets the first attempt's failure, the body untouched")
    func unreplayableBodyRetriedAnyway() async throws {
        let clock = ManualClock()
        let pipeline = Pipeline {
            RetryStrategy(policy: RetriesAnyway())
            TimeoutStrategy(.seconds(1), mode: .enforced)
        }
        var configuration = ResilienceMiddlewareConfiguration()
        configuration.maximumReplayableRequestBody = 10
        configuration.clock = .manual(clock)
        let middleware = ResilienceMiddleware(configuration: configuration) { _ in pipeline }
        var request = HTTPTypes.HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/jobs/1")
        request.headerFields[.contentType] = "application/octet-stream"
        let body = HTTPBody(
            AsyncStream { continuation in
                continuation.yield(ArraySlice(repeating: 1, count: 100))
                continuation.finish()
            }, length: .unknown)
        let calls = LockedBox(0)
        let call = Task {
            try await middleware.intercept(
                request, body: body, baseURL: URL(string: "http://127.0.0.1:1")!, operationID: "putJob"
            ) { _, body, _ in
                calls.mutate { $0 += 1 }
                _ = try await ArraySlice<UInt8>(collecting: try #require(body), upTo: 1_000)
                try await clock.sleep(for: .seconds(20))  // the server never answers
                return (HTTPTypes.HTTPResponse(status: .ok), nil)
            }
        }
        await clock.waitForSleepers(count: 2)  // the attempt's timer and the attempt
        clock.advance(by: .seconds(1))
        let result = await call.result
        #expect(calls.value == 1)
        let error = try #require(result.error as? NotReplayable, "\(result)")
        #expect(error.classification.category == .timeout)
        #expect(error.classification.isTransient == false)
    }

    @Test("A single-pass body of unknown length over the default 1 MiB bound is sent once, whole, not refused")
    func unreplayableBodyOfUnknownLength() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .status(503), .status(201))
        let chunk = ArraySlice([UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024))
        let chunks = 24  // 1.5 MiB
        let output = try await client(server, Pipelines()).createJob("", idempotencyKey: "k-3") { _ in
            HTTPBody(
                AsyncStream { continuation in
                    for _ in 0..<chunks { continuation.yield(chunk) }
                    continuation.finish()
                }, length: .unknown)
        }
        #expect(output == .undocumented(statusCode: 503, body: ""))
        #expect(server.requestCount(for: "/jobs") == 1)
        let sent = try #require(server.requests(to: "/jobs").first?.body)
        #expect(sent.count == chunks * chunk.count)
        #expect(sent.allSatisfy { $0 == UInt8(ascii: "x") })
    }

    @Test("A single-pass body of unknown length under the bound is buffered and sent whole on every retry")
    func bufferedBodyOfUnknownLength() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .status(503), .status(201, body: "made"))
        let output = try await client(server, Pipelines()) { $0.maximumReplayableRequestBody = 1_000 }
            .createJob("", idempotencyKey: "k-4") { _ in
                HTTPBody(
                    AsyncStream { continuation in
                        for _ in 0..<4 { continuation.yield(ArraySlice(String(repeating: "y", count: 250).utf8)) }
                        continuation.finish()
                    }, length: .unknown)
            }
        #expect(output == .created("made"))
        let posts = server.requests(to: "/jobs")
        #expect(posts.count == 2)
        #expect(posts.allSatisfy { $0.body == Data(String(repeating: "y", count: 1_000).utf8) })
    }

    @Test(
        "A response body streams through the middleware: the call returns before the body has ended",
        .timeLimit(.minutes(1)))
    func responseStreamsThrough() async throws {
        let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
        let middleware = ResilienceMiddleware { _ in Pipelines()("stream") }
        let (response, body) = try await middleware.intercept(
            HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/events"), body: nil,
            baseURL: URL(string: "http://127.0.0.1:1")!, operationID: "events"
        ) { _, _, _ in
            (HTTPTypes.HTTPResponse(status: .ok), HTTPBody(stream, length: .unknown))
        }
        #expect(response.status == .ok)
        // Nothing was yielded yet and the stream is still open: a middleware that buffered would still be waiting.
        let received = try #require(body)
        continuation.yield(ArraySlice("data: one\n\n".utf8))
        continuation.yield(ArraySlice("data: two\n\n".utf8))
        continuation.finish()
        #expect(try await String(collecting: received, upTo: 1024) == "data: one\n\ndata: two\n\n")
    }

    @Test("Keyed by host, every operation shares one pipeline; an open breaker stops calls before the network")
    func breakerByHost() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .status(500))
        var breakerConfiguration = ConsecutiveFailureBreaker.Configuration()
        breakerConfiguration.failureThreshold = 2
        let pipelines = Pipelines(attempts: 1, breaker: ConsecutiveFailureBreaker(breakerConfiguration))
        let jobs = client(server, pipelines) { $0.key = .host }
        _ = try await jobs.listJobs()
        _ = try await jobs.createJob("{}", idempotencyKey: "k-3")
        let error = await #expect(throws: (any Error).self) { try await jobs.listJobs() }
        let underlying = try #require((error as? ClientError)?.underlyingError, "\(String(describing: error))")
        #expect(CompositeErrorClassifier.standard.classification(of: underlying).code == .circuitOpen)
        #expect(server.requestCount(for: "/jobs") == 2)
        #expect(Set(pipelines.keys.value) == ["127.0.0.1"])
    }

    @Test("Transport failures are classified through the adapter and retried when safe")
    func transportFailures() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/jobs", .reset, .json("[]"))
        #expect(try await client(server, Pipelines()).listJobs() == .ok("[]"))
        #expect(server.requestCount(for: "/jobs") == 2)
    }
}

extension Result {
    /// The failure, if it is one.
    var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
