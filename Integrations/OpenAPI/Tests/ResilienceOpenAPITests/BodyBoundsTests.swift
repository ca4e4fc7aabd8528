import Foundation
import HTTPTypes
import OpenAPIRuntime
import ResilienceCore
import ResilienceOpenAPI
import ResiliencePolicies
import ResilienceTesting
import ResilienceTransport
import Testing

/// Request bodies over the adapter's bound and failure bodies that break, without a network or real sleeps.
@Suite("Body bounds of ResilienceClientTransport and ResilienceMiddleware")
struct BodyBoundsTests {
    /// Answers 201 to every request and records the size of each body it was given.
    final class RecordingTransport: HTTPTransport {
        let sent = LockedBox<[Int]>([])

        func send(
            _ request: ResilienceCore.HTTPRequest, context: ResilienceContext
        ) async throws -> ResilienceCore.HTTPResponse {
            sent.mutate { $0.append(request.body?.count ?? 0) }
            return ResilienceCore.HTTPResponse(status: 201, url: request.url)
        }
    }

    static let limit = 16 * 1024 * 1024
    static let baseURL = URL(string: "http://127.0.0.1:1")!
    static let post = HTTPTypes.HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/jobs")

    /// A single-pass body of `count` bytes in 1 MiB chunks, of unknown length.
    static func stream(_ count: Int) -> HTTPBody {
        HTTPBody(
            AsyncStream { continuation in
                var left = count
                while left > 0 {
                    let size = min(left, 1024 * 1024)
                    continuation.yield(ArraySlice(repeating: 7, count: size))
                    left -= size
                }
                continuation.finish()
            }, length: .unknown)
    }

    /// Up to three attempts with no backoff, retrying whatever its policy finds transient; each attempt bounded by
    /// a cooperative `attemptTimeout` when one is given.
    static func retrying(attemptTimeout: Duration? = nil) -> Pipeline {
        var policy = StandardRetryPolicy.standard
        policy.maxAttempts = 3
        policy.backoff = .constant(.zero)
        policy.jitter = .none
        guard let attemptTimeout else { return Pipeline { RetryStrategy(policy: policy) } }
        return Pipeline {
            RetryStrategy(policy: policy)
            TimeoutStrategy(attemptTimeout)
        }
    }

    func expectTooLarge(_ error: (any Error)?) throws {
        let tooLarge = try #require(error as? TransportError, "\(String(describing: error))")
        #expect(tooLarge.code == .invalidFormat)
        #expect(tooLarge.classification.category == .clientError)
        #expect(tooLarge.classification.isTransient == false)
        #expect(tooLarge.classification.requestWasNotSent)
        #expect(tooLarge.classification.message?.contains("larger than \(Self.limit) bytes") == true)
    }

    @Test("A request body one byte over the default 16 MiB is a typed client error and is not sent")
    func requestBodyOverLimit() async throws {
        let recorder = RecordingTransport()
        let transport = ResilienceClientTransport(recorder)
        for body in [Self.stream(Self.limit + 1), HTTPBody([UInt8](repeating: 7, count: Self.limit + 1))] {
            let error = await #expect(throws: (any Error).self) {
                _ = try await transport.send(Self.post, body: body, baseURL: Self.baseURL, operationID: "createJob")
            }
            try expectTooLarge(error)
        }
        #expect(recorder.sent.value.isEmpty)
    }

    @Test("A request body of exactly 16 MiB is sent whole")
    func requestBodyAtLimit() async throws {
        let recorder = RecordingTransport()
        let transport = ResilienceClientTransport(recorder)
        let (response, _) = try await transport.send(
            Self.post, body: Self.stream(Self.limit), baseURL: Self.baseURL, operationID: "createJob")
        #expect(response.status.code == 201)
        #expect(recorder.sent.value == [Self.limit])
    }

    @Test("Under the middleware, a request body over the bound fails once, classified, and is not retried")
    func requestBodyOverLimitNotRetried() async throws {
        let recorder = RecordingTransport()
        let transport = ResilienceClientTransport(recorder)
        let pipeline = Self.retrying()
        let middleware = ResilienceMiddleware { _ in pipeline }
        var request = Self.post
        request.headerFields[HTTPField.Name("Idempotency-Key")!] = "k-1"
        let calls = LockedBox(0)
        let error = await #expect(throws: (any Error).self) {
            _ = try await middleware.intercept(
                request, body: HTTPBody([UInt8](repeating: 7, count: Self.limit + 1)), baseURL: Self.baseURL,
                operationID: "createJob"
            ) { request, body, baseURL in
                calls.mutate { $0 += 1 }
                return try await transport.send(request, body: body, baseURL: baseURL, operationID: "createJob")
            }
        }
        try expectTooLarge(error)
        #expect(calls.value == 1)
        #expect(recorder.sent.value.isEmpty)
    }

    /// A single-pass body declaring 1,000 bytes that yields 100 and then waits for ever (a slow upload), or ends
    /// there when `endsShort`.
    static func shortStream(endsShort: Bool) -> HTTPBody {
        let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
        continuation.yield(ArraySlice(repeating: 2, count: 100))
        if endsShort { continuation.finish() }
        return HTTPBody(stream, length: .known(1_000), iterationBehavior: .single)
    }

    func expectEndedEarly(_ error: (any Error)?) throws {
        let short = try #require(error as? TransportError, "\(String(describing: error))")
        #expect(short.code == .invalidFormat)
        #expect(short.classification.isTransient == false)
        #expect(short.classification.requestWasNotSent)
        #expect(short.classification.message?.contains("100 of its declared 1000 bytes") == true)
    }

    @Test("Cancelled while it reads a streamed request body, the adapter hands the transport no half body")
    func cancelledWhileReadingRequestBody() async throws {
        let recorder = RecordingTransport()
        let transport = ResilienceClientTransport(recorder)
        let sending = Task {
            try await transport.send(
                Self.post, body: Self.shortStream(endsShort: false), baseURL: Self.baseURL, operationID: "createJob")
        }
        for _ in 0..<100 { await Task.yield() }
        sending.cancel()
        let result = await sending.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(recorder.sent.value.isEmpty)
    }

    @Test("A request body that ends before its declared length is a typed client error, not sent, not retried")
    func requestBodyEndsEarly() async throws {
        let recorder = RecordingTransport()
        let transport = ResilienceClientTransport(recorder)
        let error = await #expect(throws: (any Error).self) {
            _ = try await transport.send(
                Self.post, body: Self.shortStream(endsShort: true), baseURL: Self.baseURL, operationID: "createJob")
        }
        try expectEndedEarly(error)
        // Buffered by the middleware for its retries: refused there, before the attempt sends anything.
        let middleware = ResilienceMiddleware { _ in Self.retrying() }
        var request = Self.post
        request.headerFields[HTTPField.Name("Idempotency-Key")!] = "k-1"
        let calls = LockedBox(0)
        let buffered = await #expect(throws: (any Error).self) {
            _ = try await middleware.intercept(
                request, body: Self.shortStream(endsShort: true), baseURL: Self.baseURL, operationID: "createJob"
            ) { request, body, baseURL in
                calls.mutate { $0 += 1 }
                return try await transport.send(request, body: body, baseURL: baseURL, operationID: "createJob")
            }
        }
        try expectEndedEarly(buffered)
        #expect(calls.value == 0)
        #expect(recorder.sent.value.isEmpty)
    }

    struct StreamBroke: Error {}

    /// A 503 whose body yields `"partial"` and then throws `error`.
    static func brokenFailure(_ error: any Error = StreamBroke()) -> (HTTPTypes.HTTPResponse, HTTPBody?) {
        let body = HTTPBody(
            AsyncThrowingStream<HTTPBody.ByteChunk, any Error> { continuation in
                continuation.yield(ArraySlice("partial".utf8))
                continuation.finish(throwing: error)
            }, length: .unknown, iterationBehavior: .single)
        return (HTTPTypes.HTTPResponse(status: .serviceUnavailable), body)
    }

    static let get = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/jobs")

    @Test("A final failure response whose body breaks is a classified transport error, not a shorter body")
    func brokenFailureBodyThrown() async throws {
        let middleware = ResilienceMiddleware { _ in Pipeline {} }
        let calls = LockedBox(0)
        let result = await Result {
            try await middleware.intercept(Self.get, body: nil, baseURL: Self.baseURL, operationID: "listJobs") {
                _, _, _ in
                calls.mutate { $0 += 1 }
                return Self.brokenFailure()
            }
        }
        #expect(calls.value == 1)
        let broke = try #require(result.error as? TransportError, "\(result)")
        #expect(broke.code == .truncatedResponse)
        #expect(broke.classification.isTransient)
        #expect(broke.classification.message?.contains("HTTP 503 response broke after 7 bytes") == true)
    }

    @Test("A failure body broken by an error the classifier knows fails the attempt with that error")
    func brokenFailureBodyKeepsClassifiedError() async throws {
        let middleware = ResilienceMiddleware { _ in Pipeline {} }
        let result = await Result {
            try await middleware.intercept(Self.get, body: nil, baseURL: Self.baseURL, operationID: "listJobs") {
                _, _, _ in Self.brokenFailure(URLError(.networkConnectionLost))
            }
        }
        let lost = try #require(result.error as? URLError, "\(result)")
        #expect(lost.code == .networkConnectionLost)
        #expect(TransportErrorClassifier.standard.classify(lost)?.code == .connectionReset)
    }

    @Test("A failure body that breaks is a transport failure the pipeline retries when safe")
    func brokenFailureBodyRetried() async throws {
        let pipeline = Self.retrying()
        let middleware = ResilienceMiddleware { _ in pipeline }
        let calls = LockedBox(0)
        let (response, body) = try await middleware.intercept(
            Self.get, body: nil, baseURL: Self.baseURL, operationID: "listJobs"
        ) { _, _, _ in
            let call = calls.mutate { calls in
                calls += 1
                return calls
            }
            return call == 1 ? Self.brokenFailure() : (HTTPTypes.HTTPResponse(status: .ok), HTTPBody("done"))
        }
        #expect(calls.value == 2)
        #expect(response.status == .ok)
        #expect(try await String(collecting: try #require(body), upTo: 100) == "done")
    }

    @Test("A failure body longer than the retained bound is cut there, as documented, not treated as broken")
    func longFailureBodyCut() async throws {
        var configuration = ResilienceMiddlewareConfiguration()
        configuration.maximumRetainedFailureBody = 4
        let middleware = ResilienceMiddleware(configuration: configuration) { _ in Pipeline {} }
        let (response, body) = try await middleware.intercept(
            Self.get, body: nil, baseURL: Self.baseURL, operationID: "listJobs"
        ) { _, _, _ in
            (HTTPTypes.HTTPResponse(status: .serviceUnavailable), HTTPBody("unavailable"))
        }
        #expect(response.status == .serviceUnavailable)
        #expect(try await String(collecting: try #require(body), upTo: 100) == "unav")
    }

    @Test("A final failure response's empty body reaches the client as an empty body; an absent one as none")
    func finalFailureEmptyBody() async throws {
        let middleware = ResilienceMiddleware { _ in Pipeline {} }
        for sent in [HTTPBody(), nil] {
            let (response, body) = try await middleware.intercept(
                Self.get, body: nil, baseURL: Self.baseURL, operationID: "listJobs"
            ) { _, _, _ in (HTTPTypes.HTTPResponse(status: .serviceUnavailable), sent) }
            #expect(response.status == .serviceUnavailable)
            #expect((body == nil) == (sent == nil))
            if let body { #expect(try await String(collecting: body, upTo: 10).isEmpty) }
        }
    }

    /// A body that yields `"unavailable"` once, then reports on `reading` that its reader waits for more and
    /// waits until that reader is cancelled, when it ends (as `AsyncStream` does).
    struct StallingBody: AsyncSequence, Sendable {
        typealias Element = HTTPBody.ByteChunk

        let reading: AsyncStream<Void>.Continuation
        let stall = AsyncStream<Void>.makeStream()

        func makeAsyncIterator() -> Iterator { Iterator(body: self) }

        struct Iterator: AsyncIteratorProtocol {
            let body: StallingBody
            var yielded = false

            mutating func next() async throws -> HTTPBody.ByteChunk? {
                if !yielded {
                    yielded = true
                    return ArraySlice("unavailable".utf8)
                }
                body.reading.yield()
                for await _ in body.stall.stream {}
                return nil
            }
        }
    }

    @Test("Cancelled while it reads a failure body, the call throws CancellationError, not a shorter response")
    func cancelledWhileReadingFailureBody() async throws {
        let middleware = ResilienceMiddleware { _ in Pipeline {} }
        let (reading, readingContinuation) = AsyncStream<Void>.makeStream()
        let body = HTTPBody(StallingBody(reading: readingContinuation), length: .unknown, iterationBehavior: .single)
        let call = Task {
            try await middleware.intercept(Self.get, body: nil, baseURL: Self.baseURL, operationID: "listJobs") {
                _, _, _ in (HTTPTypes.HTTPResponse(status: .serviceUnavailable), body)
            }
        }
        for await _ in reading { break }
        call.cancel()
        let result = await call.result
        #expect(throws: CancellationError.self) { try result.get() }
    }

    struct Hung: Error {}

    /// What `body` returns, or `Hung` once `limit` of real time has passed: the guard of a test whose defect is a
    /// hang. It never waits when `body` ends (the guard is cancelled then), and it cancels `body` when it fires.
    static func guarded<Output: Sendable>(
        _ limit: Duration = .seconds(60), _ body: @escaping @Sendable () async throws -> Output
    ) async throws -> Output {
        try await withThrowingTaskGroup(of: Output?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let output = first else { throw Hung() }
            return output
        }
    }

    /// Starts `call` with the reading signal of a request body that stalls, waits until the body's reader waits
    /// for bytes that never come and the deadline's timer sleeps on `clock`, moves `clock` 1 s on and returns the
    /// call's result, under ``guarded(_:_:)``.
    static func stalling<Output: Sendable>(
        on clock: ManualClock,
        _ call: @escaping @Sendable (_ reading: AsyncStream<Void>.Continuation) async -> Output
    ) async throws -> Output {
        try await guarded {
            let (reading, readingContinuation) = AsyncStream<Void>.makeStream()
            async let result = call(readingContinuation)
            for await _ in reading { break }  // the body's reader waits for bytes that never come
            await clock.waitForSleepers(count: 1)  // the deadline's timer
            clock.advance(by: .seconds(1))
            return await result
        }
    }

    /// The deadline stages a stalled upload must meet, and the error each reports when it passes.
    static let stalledUploadStages: [(name: String, code: ResilienceError.Code, pipeline: Pipeline)] = [
        ("attempt timeout", .attemptTimedOut, Pipeline { TimeoutStrategy(.seconds(1)) }),
        ("enforced attempt timeout", .attemptTimedOut, Pipeline { TimeoutStrategy(.seconds(1), mode: .enforced) }),
        ("total deadline", .deadlineExceeded, Pipeline { TotalDeadlineStrategy(.seconds(1)) }),
    ]

    @Test(
        "A failure body that stalls after its first bytes fails at the cooperative timeout's deadline, not when it ends",
        arguments: [0, 2])
    func stalledFailureBodyMeetsDeadline(stage: Int) async throws {
        let (name, code, pipeline) = Self.stalledUploadStages[stage]
        let clock = ManualClock()
        var configuration = ResilienceMiddlewareConfiguration()
        configuration.clock = .manual(clock)
        let middleware = ResilienceMiddleware(configuration: configuration) { _ in pipeline }
        let outcome = try await Self.stalling(on: clock) { reading in
            let body = HTTPBody(StallingBody(reading: reading), length: .unknown, iterationBehavior: .single)
            return await Result {
                try await middleware.intercept(Self.get, body: nil, baseURL: Self.baseURL, operationID: "listJobs") {
                    _, _, _ in (HTTPTypes.HTTPResponse(status: .serviceUnavailable), body)
                }
            }
        }
        let timedOut = try #require(outcome.error as? ResilienceError, "\(name): \(outcome)")
        #expect(timedOut.code == code, "\(name)")
    }

    @Test(
        "A single-pass request body that stalls fails with the pipeline's timeout at its deadline, reported",
        arguments: 0..<3)
    func stalledRequestBodyMeetsDeadline(stage: Int) async throws {
        let (name, code, pipeline) = Self.stalledUploadStages[stage]
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        var configuration = ResilienceMiddlewareConfiguration()
        configuration.clock = .manual(clock)
        configuration.telemetry = sink
        let middleware = ResilienceMiddleware(configuration: configuration) { _ in pipeline }
        let calls = LockedBox(0)
        let outcome = try await Self.stalling(on: clock) { reading in
            let body = HTTPBody(StallingBody(reading: reading), length: .unknown, iterationBehavior: .single)
            return await Result {
                try await middleware.intercept(
                    Self.post, body: body, baseURL: Self.baseURL, operationID: "createJob"
                ) { _, _, _ in
                    calls.mutate { $0 += 1 }
                    return (HTTPTypes.HTTPResponse(status: .created), nil)
                }
            }
        }
        let timedOut = try #require(outcome.error as? ResilienceError, "\(name): \(outcome)")
        #expect(timedOut.code == code, "\(name)")
        #expect(calls.value == 0, "\(name): no half-read body is sent")
        let event = try #require(sink.first(.timedOut), "\(name): \(sink.kinds)")
        #expect(event.key == "createJob")
        #expect(event.detail == code.rawValue)
    }

    @Test("A retry after the attempt timeout cut a request body's reading short ends at once, sending nothing")
    func stalledRequestBodyNotResent() async throws {
        let clock = ManualClock()
        let pipeline = Self.retrying(attemptTimeout: .seconds(1))
        var configuration = ResilienceMiddlewareConfiguration()
        configuration.clock = .manual(clock)
        let middleware = ResilienceMiddleware(configuration: configuration) { _ in pipeline }
        let put = HTTPTypes.HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/jobs/1")
        let calls = LockedBox(0)
        let outcome = try await Self.stalling(on: clock) { reading in
            let body = HTTPBody(StallingBody(reading: reading), length: .unknown, iterationBehavior: .single)
            return await Result {
                try await middleware.intercept(put, body: body, baseURL: Self.baseURL, operationID: "putJob") {
                    _, _, _ in
                    calls.mutate { $0 += 1 }
                    return (HTTPTypes.HTTPResponse(status: .ok), nil)
                }
            }
        }
        #expect(calls.value == 0)
        let error = try #require(outcome.error as? NotReplayable, "\(outcome)")
        #expect(error.classification.category == .timeout)
        #expect(error.classification.isTransient == false)
    }

    /// The request bodies the middleware hands on unread for ``ResilienceClientTransport`` to collect (its
    /// replay bound set to 4 bytes): single-pass declared over the bound, single-pass of unknown length that
    /// proved over it, and one that iterates several times. Each yields 11 bytes, then waits for bytes that
    /// never come.
    static func stallingBodies(_ reading: AsyncStream<Void>.Continuation) -> [(String, HTTPBody)] {
        [
            (
                "declared over the bound",
                HTTPBody(StallingBody(reading: reading), length: .known(100), iterationBehavior: .single)
            ),
            (
                "unknown length over the bound",
                HTTPBody(StallingBody(reading: reading), length: .unknown, iterationBehavior: .single)
            ),
            (
                "iterating several times",
                HTTPBody(StallingBody(reading: reading), length: .unknown, iterationBehavior: .multiple)
            ),
        ]
    }

    @Test(
        "ResilienceClientTransport collects a stalled request body within the attempt's deadline: a timeout, not sent",
        arguments: 0..<3)
    func adapterCollectsRequestBodyWithinDeadline(body index: Int) async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        var configuration = ResilienceMiddlewareConfiguration()
        configuration.clock = .manual(clock)
        configuration.telemetry = sink
        configuration.maximumReplayableRequestBody = 4
        // Cooperative: nothing but the transport's own race bounds the attempt.
        let middleware = ResilienceMiddleware(configuration: configuration) { _ in
            Pipeline { TimeoutStrategy(.seconds(1)) }
        }
        let recorder = RecordingTransport()
        let adapter = ResilienceClientTransport(recorder)
        let thrown = LockedBox<(any Error)?>(nil)
        let name = LockedBox("")
        let outcome = try await Self.stalling(on: clock) { reading in
            let (label, body) = Self.stallingBodies(reading)[index]
            name.mutate { $0 = label }
            return await Result {
                try await middleware.intercept(Self.post, body: body, baseURL: Self.baseURL, operationID: "createJob") {
                    request, body, baseURL in
                    do {
                        return try await adapter.send(request, body: body, baseURL: baseURL, operationID: "createJob")
                    } catch {
                        thrown.mutate { $0 = error }
                        throw error
                    }
                }
            }
        }
        let label = name.value
        let timedOut = try #require(outcome.error as? ResilienceError, "\(label): \(outcome)")
        #expect(timedOut.code == .attemptTimedOut, "\(label)")
        let collecting = try #require(thrown.value as? TransportError, "\(label): \(String(describing: thrown.value))")
        #expect(collecting.code == .timedOut, "\(label)")
        #expect(collecting.classification.category == .timeout, "\(label)")
        #expect(collecting.classification.requestWasNotSent, "\(label)")
        #expect(collecting.classification.message?.contains("request body was not read") == true, "\(label)")
        #expect(recorder.sent.value.isEmpty, "\(label): no half-read body is sent")
        #expect(sink.events(.timedOut).contains { $0.duration == .seconds(1) }, "\(label): \(sink.kinds)")
    }

    @Test("A hedge launched while the first attempt reads a request body waits for it, then sends it whole")
    func hedgeWaitsForRequestBody() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let pipeline = Pipeline { HedgingStrategy(delay: .seconds(1)) }
        var configuration = ResilienceMiddlewareConfiguration()
        configuration.clock = .manual(clock)
        configuration.telemetry = sink
        let middleware = ResilienceMiddleware(configuration: configuration) { _ in pipeline }
        let put = HTTPTypes.HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/jobs/1")
        let sent = LockedBox<[String]>([])
        let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
        continuation.yield(ArraySlice("abcd".utf8))
        let body = HTTPBody(stream, length: .unknown, iterationBehavior: .single)
        let outcome = try await Self.guarded {
            async let result = Result {
                try await middleware.intercept(put, body: body, baseURL: Self.baseURL, operationID: "putJob") {
                    _, body, _ in
                    let text = try await String(collecting: try #require(body), upTo: 100)
                    sent.mutate { $0.append(text) }
                    return (HTTPTypes.HTTPResponse(status: .ok), nil)
                }
            }
            await clock.waitForSleepers(count: 1)  // the hedge's timer, while the first attempt reads
            clock.advance(by: .seconds(1))
            _ = try await sink.next(.hedgeLaunched)
            continuation.yield(ArraySlice("efgh".utf8))
            continuation.finish()
            return await result
        }
        let (response, _) = try outcome.get()
        #expect(response.status == .ok)
        #expect(!sent.value.isEmpty)
        #expect(sent.value.allSatisfy { $0 == "abcdefgh" }, "\(sent.value)")
    }

    @Test("A failure body that ends before its declared length is a truncated response, not a shorter body")
    func failureBodyEndsBeforeDeclaredLength() async throws {
        let middleware = ResilienceMiddleware { _ in Pipeline {} }
        let result = await Result {
            try await middleware.intercept(Self.get, body: nil, baseURL: Self.baseURL, operationID: "listJobs") {
                _, _, _ in
                let (stream, continuation) = AsyncStream<HTTPBody.ByteChunk>.makeStream()
                continuation.yield(ArraySlice("partial".utf8))
                continuation.finish()
                return (
                    HTTPTypes.HTTPResponse(status: .serviceUnavailable),
                    HTTPBody(stream, length: .known(100), iterationBehavior: .single)
                )
            }
        }
        let short = try #require(result.error as? TransportError, "\(result)")
        #expect(short.code == .truncatedResponse)
        #expect(short.classification.isTransient)
        #expect(short.classification.message?.contains("HTTP 503 response broke after 7 bytes") == true)
    }

    @Test("A failure response's error names the request's URL under the server URL's path")
    func failureURLKeepsServerPath() async throws {
        var configuration = ResilienceMiddlewareConfiguration()
        configuration.returnsFinalFailureResponse = false
        let middleware = ResilienceMiddleware(configuration: configuration) { _ in Pipeline {} }
        let query = HTTPTypes.HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/jobs?state=open")
        let result = await Result {
            try await middleware.intercept(
                query, body: nil, baseURL: URL(string: "https://api.example.com/v1")!, operationID: "listJobs"
            ) { _, _, _ in (HTTPTypes.HTTPResponse(status: .serviceUnavailable), nil) }
        }
        let rejected = try #require(result.error as? RejectedResponse, "\(result)")
        #expect(rejected.statusError.response.url?.absoluteString == "https://api.example.com/v1/jobs?state=open")
    }
}

extension Result where Failure == any Error {
    /// The outcome of `body`.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
