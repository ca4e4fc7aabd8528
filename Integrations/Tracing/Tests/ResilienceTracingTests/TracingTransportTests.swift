import Foundation
import InMemoryTracing
import ResilienceCore
import ResiliencePolicies
import ResilienceTesting
import ResilienceTracing
import Testing
import Tracing

@Suite("TracingTransport")
struct TracingTransportTests {
    static let retry = StandardRetryPolicy(maxAttempts: 3, backoff: .constant(.seconds(1)), jitter: .none)
    static let url = URL(string: "https://api.example.com:8443/jobs?api_key=secret")!

    @Test("one operation with two attempts: one operation span, two client spans under it, two traceparents")
    func twoAttempts() async throws {
        let tracer = W3CTestTracer()
        let clock = ManualClock()
        let base = ScriptedHTTPTransport(
            sequence: [.failure(TestFailure.serverError), .status(200)], clock: .manual(clock))
        let transport = TracingTransport(wrapping: base, tracer: tracer)
        let pipeline = Pipeline {
            TracingStrategy(tracer: tracer)
            RetryStrategy(policy: Self.retry)
        }
        var request = HTTPRequest(url: Self.url)
        request.headers.add(name: "traceparent", value: "00-stale-stale-01")
        let context = ResilienceContext(key: "lever", operation: "fetch jobs", clock: .manual(clock))
        let task = Task { [request] in
            try await pipeline.execute(context) { try await transport.send(request, context: $0) }
        }
        await clock.waitForSleepers()
        clock.advance(by: .seconds(1))
        #expect(try await task.value.status == 200)

        let spans = tracer.memory.finishedSpans
        #expect(spans.count == 3)
        let operation = try #require(spans.first { $0.kind == .internal })
        #expect(operation.operationName == "lever")
        #expect(operation.attributes.get("http.request.resend_count") == nil)
        #expect(operation.attributes.get("resilience.attempt") == .int64(2))
        let clients = spans.filter { $0.kind == .client }
        #expect(clients.count == 2)
        for client in clients {
            #expect(client.operationName == "GET")
            #expect(client.parentSpanID == operation.spanID)
            #expect(client.traceID == operation.traceID)
            #expect(client.attributes.get("http.request.method") == .string("GET"))
            #expect(client.attributes.get("server.address") == .string("api.example.com"))
            #expect(client.attributes.get("server.port") == .int64(8443))
            guard case .string(let url) = client.attributes.get("url.full") else {
                Issue.record("no url.full on the client span")
                continue
            }
            #expect(url.contains("api.example.com") && !url.contains("secret"))
        }
        let first = try #require(clients.first { $0.attributes.get("http.request.resend_count") == nil })
        let second = try #require(clients.first { $0.attributes.get("http.request.resend_count") == .int64(1) })
        #expect(first.attributes.get("error.type") == .string("HTTP_503"))
        #expect(first.status?.code == .error && first.errors.count == 1)
        #expect(second.attributes.get("http.response.status_code") == .int64(200))
        #expect(second.status == nil && second.errors.isEmpty)

        let sent = base.requests
        #expect(sent.count == 2)
        #expect(sent.map { $0.headers.values(for: "traceparent").count } == [1, 1])
        #expect(sent[0].headers["traceparent"] == "00-\(first.traceID)-\(first.spanID)-01")
        #expect(sent[1].headers["traceparent"] == "00-\(second.traceID)-\(second.spanID)-01")
        #expect(sent[0].headers["traceparent"] != sent[1].headers["traceparent"])
    }

    @Test("an error status marks the client span as failed with the status as error.type")
    func errorStatus() async throws {
        let tracer = W3CTestTracer()
        let base = ScriptedHTTPTransport(sequence: [.status(404)])
        let transport = TracingTransport(wrapping: base, tracer: tracer)
        let context = ResilienceContext(key: "lever", clock: .manual(ManualClock()))
        let response = try await transport.send(HTTPRequest(method: .post, url: Self.url), context: context)
        #expect(response.status == 404)
        let span = try #require(tracer.memory.finishedSpans.only)
        #expect(span.operationName == "POST")
        #expect(span.kind == .client)
        #expect(span.attributes.get("http.response.status_code") == .int64(404))
        #expect(span.attributes.get("error.type") == .string("404"))
        #expect(span.status?.code == .error)
        #expect(span.parentSpanID == nil)
    }

    @Test("a method OpenTelemetry does not know names no span of its own: HTTP, with _OTHER and the original")
    func unknownMethods() async throws {
        let tracer = W3CTestTracer()
        let base = ScriptedHTTPTransport(sequence: [.status(200), .status(200), .status(200)])
        let transport = TracingTransport(wrapping: base, tracer: tracer)
        let context = ResilienceContext(key: "lever", clock: .manual(ManualClock()))
        // A proxy forwarding whatever methods its clients send: one span name per method would be unbounded.
        for method: HTTPMethod in ["frob-1", "FROB-2", "patch"] {
            _ = try await transport.send(HTTPRequest(method: method, url: Self.url), context: context)
        }
        let spans = tracer.memory.finishedSpans
        #expect(spans.map(\.operationName) == ["HTTP", "HTTP", "PATCH"])
        #expect(
            spans.map { $0.attributes.get("http.request.method") } == [
                .string("_OTHER"), .string("_OTHER"), .string("PATCH"),
            ])
        #expect(spans.first?.attributes.get("http.request.method_original") == .string("FROB-1"))
        #expect(spans.last?.attributes.get("http.request.method_original") == nil)
        #expect(base.requests.map(\.method.rawValue) == ["FROB-1", "FROB-2", "PATCH"], "the request is sent as is")
    }

    @Test("a thrown error is recorded on the client span without the secrets in its description")
    func recordedErrorRedacted() async throws {
        let tracer = W3CTestTracer()
        let base = ScriptedHTTPTransport(sequence: [.failure(LeakyError())])
        let transport = TracingTransport(wrapping: base, tracer: tracer)
        let context = ResilienceContext(key: "lever", clock: .manual(ManualClock()))
        await #expect(throws: LeakyError.self) {
            _ = try await transport.send(HTTPRequest(url: Self.url), context: context)
        }
        let span = try #require(tracer.memory.finishedSpans.only)
        LeakyError.expectRedacted(try #require(span.errors.only).error)
        #expect(span.status?.code == .error)
    }

    @Test("cancellation is marked on the client span, not recorded as an error")
    func cancellation() async throws {
        let tracer = W3CTestTracer()
        let base = ScriptedHTTPTransport(sequence: [.failure(CancellationError())])
        let transport = TracingTransport(wrapping: base, tracer: tracer)
        let context = ResilienceContext(key: "lever", clock: .manual(ManualClock()))
        await #expect(throws: CancellationError.self) {
            _ = try await transport.send(HTTPRequest(url: Self.url), context: context)
        }
        let span = try #require(tracer.memory.finishedSpans.only)
        #expect(span.attributes.get("resilience.cancelled") == .bool(true))
        #expect(span.errors.isEmpty && span.status == nil)
    }

    @Test("without an explicit tracer it reads the instrumentation system at each request")
    func defaultTracer() async throws {
        // Nothing bootstrapped in this process: the no-op tracer starts no span and injects nothing, and the
        // stale context a caller left is still removed.
        let base = ScriptedHTTPTransport(sequence: [.status(200)])
        let transport = TracingTransport(wrapping: base)
        var request = HTTPRequest(url: Self.url)
        request.headers.add(name: "traceparent", value: "00-stale-stale-01")
        _ = try await transport.send(request, context: ResilienceContext(key: "lever", clock: .manual(ManualClock())))
        #expect(base.requests.first?.headers.contains("traceparent") == false)
    }

    @Test("the extractor reads back what the injector wrote")
    func injectorRoundTrip() {
        var headers: HTTPHeaders = ["traceparent": "old"]
        HeadersInjector().inject("new", forKey: "TraceParent", into: &headers)
        #expect(headers.values(for: "traceparent") == ["new"])
        #expect(HeadersExtractor().extract(key: "traceparent", from: headers) == "new")
    }
}

/// An in-memory tracer that propagates W3C Trace Context: spans are `InMemoryTracer`'s (with 32- and 16-digit
/// hexadecimal ids), and `inject` writes `traceparent` from the span's context, as an OpenTelemetry tracer does.
struct W3CTestTracer: Tracer {
    let memory: InMemoryTracer

    init() {
        let traces = Counter()
        let spans = Counter()
        memory = InMemoryTracer(
            idGenerator: .init(
                nextTraceID: { Self.hex(traces.next(), digits: 32) },
                nextSpanID: { Self.hex(spans.next(), digits: 16) }))
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> InstrumentationContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        memory.startSpan(
            operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID,
            line: line)
    }

    func forceFlush() { memory.forceFlush() }

    func inject<Carrier, Inject: Injector>(
        _ context: InstrumentationContext, into carrier: inout Carrier, using injector: Inject
    ) where Carrier == Inject.Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier, into context: inout InstrumentationContext, using extractor: Extract
    ) where Carrier == Extract.Carrier {
        guard let value = extractor.extract(key: "traceparent", from: carrier) else { return }
        let parts = value.split(separator: "-")
        guard parts.count == 4 else { return }
        context.inMemorySpanContext = InMemorySpanContext(
            traceID: String(parts[1]), spanID: String(parts[2]), parentSpanID: nil)
    }

    static func hex(_ value: Int, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// A thread-safe incrementing counter.
    final class Counter: Sendable {
        private let value = LockedBox(0)
        func next() -> Int {
            value.mutate {
                $0 += 1
                return $0
            }
        }
    }
}
