import MetricsTestKit
import ResilienceMetrics
import ResilienceTesting
import Testing

@Suite("MetricsTelemetrySink conformance")
struct MetricsSinkConformanceTests {
    @Test("passes ResilienceTesting's TelemetrySink conformance kit, with every metric label checked for secrets")
    func conformance() async throws {
        try await TelemetrySinkConformance {
            let metrics = TestMetrics()
            let exported: @Sendable () -> String = {
                (metrics.counters.map { "\($0.label) \($0.dimensions)" }
                    + metrics.timers.map { "\($0.label) \($0.dimensions)" }
                    + metrics.recorders.map { "\($0.label) \($0.dimensions)" }).joined(separator: "\n")
            }
            return (sink: MetricsTelemetrySink(factory: metrics), exported: exported)
        }.check()
    }
}
