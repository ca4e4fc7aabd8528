import ResilienceCore
import ResilienceTesting
import ResilienceTracing
import Testing

@Suite("TracingTransport and the caller's own headers")
struct TracingTransportHeaderTests {
    @Test("a baggage header the caller set reaches the server when the tracer propagates only trace context")
    func callerBaggageIsKept() async throws {
        let tracer = W3CTestTracer()
        let base = ScriptedHTTPTransport(sequence: [.status(200)])
        let transport = TracingTransport(wrapping: base, tracer: tracer)
        var request = HTTPRequest(url: TracingTransportTests.url)
        request.headers.add(name: "baggage", value: "tenant=acme")
        request.headers.add(name: "traceparent", value: "00-stale-stale-01")
        let context = ResilienceContext(key: "lever", clock: .manual(ManualClock()))
        _ = try await transport.send(request, context: context)

        let sent = try #require(base.requests.only)
        #expect(sent.headers["baggage"] == "tenant=acme")
        #expect(sent.headers.values(for: "traceparent").count == 1)
        #expect(sent.headers["traceparent"] != "00-stale-stale-01")
    }
}
