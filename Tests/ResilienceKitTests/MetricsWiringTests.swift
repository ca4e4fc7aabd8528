import ResilienceKit
import ResilienceTesting
import Testing

@Suite("Metrics wiring")
struct MetricsWiringTests {
    @Test("A registry announces each pipeline it builds or installs: a breaker's state series exist before any call")
    func announcesCreation() {
        let clock = ManualClock()
        let recorder = TelemetryRecorder(clock: .manual(clock))
        let registry = PipelineRegistry(clock: .manual(clock), telemetry: recorder) { _ in
            Pipeline { CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker()) }
        }
        _ = registry.pipeline(for: "lever")
        _ = registry.pipeline(for: "lever")
        registry.setOverride(for: "plain", Pipeline { TimeoutStrategy(.seconds(1)) })
        let metrics = recorder.metrics()
        #expect(metrics.sources["lever"]?.breakerState == .closed)
        #expect(metrics.sources["lever"]?.eventCounts[.pipelineCreated] == 1)
        #expect(metrics.sources["plain"]?.breakerState == nil)
        #expect(metrics.sources["plain"]?.eventCounts[.pipelineCreated] == 1)
        let text = PrometheusExporter().render(metrics)
        #expect(text.contains(#"resilience_breaker_state{key="lever",state="closed"} 1"#))
        #expect(text.contains(#"resilience_breaker_state{key="lever",state="open"} 0"#))
        #expect(!text.contains(#"resilience_breaker_state{key="plain""#))
    }

    @Test("A composition root's pipelines are announced to its recorder")
    func compositionRootAnnounces() {
        let clock = ManualClock()
        let root = CompositionRoot<String>(.interactive, clock: .manual(clock), baseTransport: ScriptedHTTPTransport())
        _ = root.pipelines.pipeline(for: "greenhouse")
        #expect(root.recorder.metrics().sources["greenhouse"]?.eventCounts[.pipelineCreated] == 1)
    }

    @Test("A cancelled attempt emits attempt-cancelled, not attempt-failed, so attempts in flight return to zero")
    func cancelledAttempt() async throws {
        let clock = ManualClock()
        let recorder = TelemetryRecorder(clock: .manual(clock))
        let pipeline = Pipeline { RetryStrategy(policy: StandardRetryPolicy.standard) }
        let context = ResilienceContext(key: "lever", telemetry: recorder, clock: .manual(clock))
        await #expect(throws: CancellationError.self) {
            try await pipeline.execute(context) { _ -> Int in throw CancellationError() }
        }
        let metrics = try #require(recorder.metrics().sources["lever"])
        #expect(metrics.eventCounts[.attemptStarted] == 1)
        #expect(metrics.eventCounts[.attemptCancelled] == 1)
        #expect(metrics.eventCounts[.attemptFailed] == nil)
        #expect(metrics.attemptsInFlight == 0)
        #expect(recorder.statistics().sources["lever"]?.failures ?? 0 == 0)
    }
}
