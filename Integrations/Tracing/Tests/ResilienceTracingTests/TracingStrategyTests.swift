import InMemoryTracing
import ResilienceCore
import ResiliencePolicies
import ResilienceTesting
import ResilienceTracing
import Testing
import Tracing

@Suite("TracingStrategy")
struct TracingStrategyTests {
    static let retry = StandardRetryPolicy(maxAttempts: 3, backoff: .constant(.seconds(1)), jitter: .none)

    @Test("one span per operation, named after the key; a retry is an event; events still flow on")
    func retriedOperation() async throws {
        let tracer = InMemoryTracer()
        let clock = ManualClock()
        let downstream = RecordingTelemetrySink()
        let pipeline = Pipeline {
            TracingStrategy(tracer: tracer)
            RetryStrategy(policy: Self.retry)
        }
        let operation = ScriptedOperation<Int>(
            [.failure(TestFailure.serverError), .success(3)], manualClock: clock)
        let context = ResilienceContext(
            key: "lever", operation: "fetch jobs", telemetry: downstream, clock: .manual(clock))
        let task = Task { try await pipeline.execute(context) { try await operation($0) } }
        await clock.waitForSleepers()
        clock.advance(by: .seconds(1))
        #expect(try await task.value == 3)

        let span = try #require(tracer.finishedSpans.only)
        #expect(span.operationName == "lever")
        #expect(span.attributes.get("resilience.key") == .string("lever"))
        #expect(span.attributes.get("resilience.operation") == .string("fetch jobs"))
        #expect(span.attributes.get("http.request.resend_count") == nil)
        #expect(span.attributes.get("resilience.attempt") == .int64(2))
        #expect(span.events.map(\.name) == ["attempt-failed", "retry-scheduled"])
        let retry = try #require(span.events.last)
        #expect(retry.attributes.get("error.type") == .string("HTTP_503"))
        #expect(retry.attributes.get("http.response.status_code") == .int64(503))
        #expect(retry.attributes.get("resilience.duration") == .double(1))
        #expect(span.errors.isEmpty && span.status == nil)
        try downstream.expectOrder([
            .attemptStarted, .attemptFailed, .retryScheduled, .attemptStarted, .attemptSucceeded,
        ])
        #expect(downstream.events.count == 5)
        #expect(pipeline.stages.map(\.name) == ["tracing", "retry"])
    }

    @Test("a breaker rejection is an event and the failure is recorded on the span")
    func breakerRejection() async throws {
        let tracer = InMemoryTracer()
        let breaker = ConsecutiveFailureBreaker()
        _ = breaker.isolate(now: .origin)
        let pipeline = Pipeline {
            TracingStrategy(tracer: tracer)
            CircuitBreakerStrategy(breaker: breaker)
        }
        let context = ResilienceContext(key: "indeed", operation: "fetch", clock: .manual(ManualClock()))
        await #expect(throws: ResilienceError.self) { try await pipeline.execute(context) { _ in 1 } }

        let span = try #require(tracer.finishedSpans.only)
        #expect(span.events.map(\.name) == ["breaker-rejected"])
        #expect(span.errors.count == 1)
        #expect(span.status?.code == .error)
        #expect(span.attributes.get("error.type") == .string("RES_001"))
        #expect(span.attributes.get("resilience.error.category") == .string("circuit-open"))
    }

    @Test("a fallback is an event and the operation succeeds without an error status")
    func fallback() async throws {
        let tracer = InMemoryTracer()
        let pipeline = Pipeline {
            TracingStrategy(tracer: tracer)
            FallbackStrategy<Int>(.value("cache", when: [.serverError], 42))
        }
        let context = ResilienceContext(key: "lever", operation: "fetch", clock: .manual(ManualClock()))
        let value = try await pipeline.execute(context) { _ -> Int in throw TestFailure.serverError }
        #expect(value == 42)
        let span = try #require(tracer.finishedSpans.only)
        #expect(span.events.map(\.name) == ["fallback-used"])
        #expect(span.events.first?.attributes.get("resilience.detail") == .string("cache"))
        #expect(span.errors.isEmpty && span.status == nil)
    }

    @Test("cancellation is marked, not recorded as an error")
    func cancellation() async throws {
        let tracer = InMemoryTracer()
        let pipeline = Pipeline { TracingStrategy(tracer: tracer) }
        let context = ResilienceContext(key: "lever", operation: "fetch", clock: .manual(ManualClock()))
        await #expect(throws: CancellationError.self) {
            try await pipeline.execute(context) { _ -> Int in throw CancellationError() }
        }
        let span = try #require(tracer.finishedSpans.only)
        #expect(span.attributes.get("resilience.cancelled") == .bool(true))
        #expect(span.errors.isEmpty && span.status == nil)
    }

    @Test("spans started inside the operation (the transport's) are children of the operation's span")
    func childSpans() async throws {
        let tracer = InMemoryTracer()
        let traced = TracedPipeline(wrapping: PassthroughPipeline(), strategy: TracingStrategy(tracer: tracer))
        let context = ResilienceContext(key: "lever", operation: "fetch", clock: .manual(ManualClock()))
        try await traced.execute(context) { _ in
            tracer.withSpan("GET /jobs", ofKind: .client) { _ in }
        }
        let spans = tracer.finishedSpans
        let parent = try #require(spans.first { $0.operationName == "lever" })
        let child = try #require(spans.first { $0.operationName == "GET /jobs" })
        #expect(child.parentSpanID == parent.spanID)
        #expect(child.traceID == parent.traceID)
        #expect(traced.stages.map(\.name) == ["tracing"])
    }

    @Test("a span named after the operation when the stage says so")
    func operationName() async throws {
        let tracer = InMemoryTracer()
        let pipeline = Pipeline { TracingStrategy(tracer: tracer, spanName: { $0.operation }) }
        let context = ResilienceContext(key: "lever", operation: "fetch jobs", clock: .manual(ManualClock()))
        _ = try await pipeline.execute(context) { _ in 1 }
        #expect(tracer.finishedSpans.only?.operationName == "fetch jobs")
    }

    @Test("a recorded error carries no secret from the error's description")
    func recordedErrorRedacted() async throws {
        let tracer = InMemoryTracer()
        let pipeline = Pipeline { TracingStrategy(tracer: tracer) }
        let context = ResilienceContext(key: "lever", operation: "fetch", clock: .manual(ManualClock()))
        await #expect(throws: LeakyError.self) {
            try await pipeline.execute(context) { _ -> Int in throw LeakyError() }
        }
        let span = try #require(tracer.finishedSpans.only)
        let recorded = try #require(span.errors.only)
        LeakyError.expectRedacted(recorded.error)
        #expect(span.status?.code == .error)
    }

    @Test("with a span that records nothing and nobody else listening, emitters are told not to build events")
    func quietWhenNotRecording() async throws {
        let pipeline = Pipeline { TracingStrategy(tracer: NoOpTracer()) }
        let context = ResilienceContext(key: "lever", operation: "fetch", clock: .manual(ManualClock()))
        #expect(try await pipeline.execute(context) { $0.telemetry?.isEnabled ?? false } == false)
        var quiet = context
        quiet.telemetry = DisabledSink()
        #expect(try await pipeline.execute(quiet) { $0.telemetry?.isEnabled ?? false } == false)
        var listened = context
        listened.telemetry = RecordingTelemetrySink()
        #expect(try await pipeline.execute(listened) { $0.telemetry?.isEnabled ?? false })
        let recorded = Pipeline { TracingStrategy(tracer: InMemoryTracer()) }
        #expect(try await recorded.execute(context) { $0.telemetry?.isEnabled ?? false })
    }

    @Test("span names and attributes are redacted")
    func redaction() async throws {
        let tracer = InMemoryTracer()
        let pipeline = Pipeline { TracingStrategy(tracer: tracer) }
        let context = ResilienceContext(
            key: "feed?token=abc", operation: "GET /feed?api_key=k1", clock: .manual(ManualClock()))
        _ = try await pipeline.execute(context) { _ in 1 }
        let span = try #require(tracer.finishedSpans.only)
        #expect(span.operationName == "feed?token=[REDACTED]")
        #expect(span.attributes.get("resilience.key") == .string("feed?token=[REDACTED]"))
        #expect(span.attributes.get("resilience.operation") == .string("GET /feed?api_key=[REDACTED]"))
    }
}

extension Array {
    /// The single element, or `nil` when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}

/// An error whose description carries a query-string key and a bearer token, as a client library's might.
struct LeakyError: Error, CustomStringConvertible {
    var description: String {
        "GET https://api.example.com/jobs?api_key=sk_live_1 failed; Authorization: Bearer tok123"
    }

    /// Checks that whatever an exporter could render of `error` (its description, its debug description, its
    /// fields) carries neither secret but keeps the rest.
    static func expectRedacted(_ error: any Error, sourceLocation: SourceLocation = #_sourceLocation) {
        var dumped = ""
        dump(error, to: &dumped)
        let text = String(describing: error) + String(reflecting: error) + dumped
        #expect(!text.contains("sk_live_1") && !text.contains("tok123"), "\(text)", sourceLocation: sourceLocation)
        #expect(String(describing: error).contains("api_key=[REDACTED]"), sourceLocation: sourceLocation)
    }
}

/// A sink that asks not to be sent events.
struct DisabledSink: TelemetrySink {
    func receive(_ event: ResilienceEvent) {}
    var isEnabled: Bool { false }
}
