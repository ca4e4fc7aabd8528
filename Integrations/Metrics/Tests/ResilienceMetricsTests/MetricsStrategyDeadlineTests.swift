import MetricsTestKit
import ResilienceCore
import ResilienceMetrics
import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("MetricsStrategy under an enclosing enforced deadline")
struct MetricsStrategyDeadlineTests {
    @Test("an operation cut off by a deadline enforced outside the stage (a source's deadline) counts as a timeout")
    func enclosingDeadlineIsATimeout() async throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        let clock = ManualClock()
        let pipeline = Pipeline {
            TimeoutStrategy(.seconds(1), mode: .enforced)
            MetricsStrategy(sink: sink)
        }
        let context = ResilienceContext(key: "lever", clock: .manual(clock))
        let task = Task {
            try await pipeline.execute(context) { _ in try await ResilienceClock.manual(clock).sleep(for: .seconds(60))
            }
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(1))
        await #expect(throws: ResilienceError.self) { try await task.value }

        #expect(
            metrics.counters.filter { $0.label == "resilience_operations_total" }.map {
                Dictionary(uniqueKeysWithValues: $0.dimensions)
            }
                == [["key": "lever", "category": "timeout", "outcome": "failure"]])
        let duration = try metrics.expectTimer(
            "resilience_operation_duration_seconds", [("key", "lever"), ("outcome", "failure")])
        #expect(duration.values == [1_000_000_000])
    }
}
