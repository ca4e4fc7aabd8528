import MetricsTestKit
import ResilienceCore
import ResilienceMetrics
import Testing

@Suite("MetricsTelemetrySink breaker gauge past the key cap")
struct MetricsBreakerOverflowTests {
    @Test("keys past the cap get no breaker series: one gauge cannot hold many breakers' states")
    func noBreakerSeriesForOverflow() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(configuration: .init(maximumKeys: 1), factory: metrics)
        func transition(_ key: String, to state: BreakerState, kind: ResilienceEventKind = .breakerTransition) {
            sink.receive(
                MetricsTelemetrySinkTests.event(
                    kind, key: key, transition: BreakerTransition(from: .closed, to: state)))
        }
        transition("lever", to: .closed, kind: .pipelineCreated)
        transition("greenhouse", to: .open)  // past the cap: its breaker is open…
        transition("workable", to: .closed, kind: .pipelineCreated)  // …and another key's creation says closed

        let series = metrics.recorders(label: "resilience_breaker_state")
        #expect(
            !series.contains { $0.dimensions.contains { $0 == ("key", "other") } },
            "an alert on other{state=\"open\"} would have cleared while greenhouse stayed open")
        #expect(series.count == 4)
        #expect(
            try metrics.expectCounter(
                "resilience_events_total", [("key", "other"), ("kind", "breaker-transition")]
            ).totalValue == 1)

        let own = TestMetrics()
        let named = MetricsTelemetrySink(configuration: .init(maximumKeys: 1), factory: own)
        named.receive(
            MetricsTelemetrySinkTests.event(
                .pipelineCreated, key: "other", transition: BreakerTransition(from: .closed, to: .closed)))
        #expect(own.recorders(label: "resilience_breaker_state").count == 4, "a key named other, under the cap")
    }
}
