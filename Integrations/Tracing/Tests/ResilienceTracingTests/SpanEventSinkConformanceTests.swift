import InMemoryTracing
import ResilienceTesting
import ResilienceTracing
import Testing
import Tracing

@Suite("SpanEventSink conformance")
struct SpanEventSinkConformanceTests {
    @Test("passes ResilienceTesting's TelemetrySink conformance kit, with every span event checked for secrets")
    func conformance() async throws {
        try await TelemetrySinkConformance {
            let tracer = InMemoryTracer()
            let span = tracer.startSpan("conformance", context: .topLevel)
            let exported: @Sendable () -> String = {
                span.events.map { event in
                    var text = event.name
                    event.attributes.forEach { key, value in text += " \(key)=\(value)" }
                    return text
                }.joined(separator: "\n")
            }
            return (sink: SpanEventSink(span: span), exported: exported)
        }.check()
    }
}
