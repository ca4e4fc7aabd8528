import Foundation
import MetricsTestKit
import ResilienceCore
import ResilienceMetrics
import Testing

@Suite("MetricsTelemetrySink breaker state when transitions arrive out of order")
struct MetricsBreakerStateOrderTests {
    static func transition(_ from: BreakerState, _ to: BreakerState, _ sequence: UInt64?) -> ResilienceEvent {
        MetricsTelemetrySinkTests.event(
            .breakerTransition, transition: BreakerTransition(from: from, to: to, sequence: sequence))
    }

    /// The state whose gauge reads 1, and how many read 1.
    static func shownStates(_ metrics: TestMetrics) throws -> [String] {
        try ["closed", "open", "half_open", "isolated"].filter { state in
            try metrics.expectGauge("resilience_breaker_state", [("key", "lever"), ("state", state)]).lastValue == 1
        }
    }

    @Test("an earlier transition received after a later one does not replace it")
    func staleTransitionIsIgnored() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        sink.receive(Self.transition(.closed, .open, 1))
        sink.receive(Self.transition(.halfOpen, .closed, 3))
        sink.receive(Self.transition(.open, .halfOpen, 2))  // made before the close, received after it
        #expect(try Self.shownStates(metrics) == ["closed"])
    }

    @Test("unnumbered transitions (a custom breaker's) are taken in the order received")
    func unnumberedTransitionsKeepArrivalOrder() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        sink.receive(Self.transition(.closed, .open, nil))
        sink.receive(Self.transition(.open, .halfOpen, nil))
        #expect(try Self.shownStates(metrics) == ["half_open"])
    }

    @Test("a new pipeline for the key starts the breaker state over, whatever the old breaker's numbers were")
    func newPipelineStartsOver() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        sink.receive(Self.transition(.closed, .open, 41))
        sink.receive(
            MetricsTelemetrySinkTests.event(
                .pipelineCreated, transition: BreakerTransition(from: .closed, to: .closed, sequence: 0)))
        #expect(try Self.shownStates(metrics) == ["closed"])
        sink.receive(Self.transition(.closed, .open, 1))
        #expect(try Self.shownStates(metrics) == ["open"])
    }

    @Test("a new pipeline without a breaker leaves no state at 1: the old breaker's open does not stay")
    func newPipelineWithoutBreaker() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        sink.receive(
            MetricsTelemetrySinkTests.event(.pipelineCreated, key: "quiet", transition: nil))
        #expect(metrics.recorders.filter { $0.label == "resilience_breaker_state" }.isEmpty)
        sink.receive(Self.transition(.closed, .open, 1))
        sink.receive(MetricsTelemetrySinkTests.event(.pipelineCreated))
        #expect(try Self.shownStates(metrics) == [])
        sink.receive(
            MetricsTelemetrySinkTests.event(
                .pipelineCreated, transition: BreakerTransition(from: .closed, to: .closed, sequence: 0)))
        #expect(try Self.shownStates(metrics) == ["closed"])
    }

    @Test("two transitions whose gauge updates interleave leave exactly the later state at 1")
    func interleavedUpdatesLeaveTheLaterState() throws {
        let factory = ObservedMetricsFactory(
            gatedLabel: "resilience_breaker_state", gatedDimensions: ["key": "lever", "state": "open"])
        let sink = MetricsTelemetrySink(factory: factory)
        let opened = DispatchSemaphore(value: 0)
        let thread = Thread {
            sink.receive(Self.transition(.closed, .open, 1))
            opened.signal()
        }
        thread.start()
        factory.arrived.wait()  // the open is about to set its `open` gauge to 1
        sink.receive(Self.transition(.open, .halfOpen, 2))
        factory.proceed.signal()
        opened.wait()
        #expect(try Self.shownStates(factory.base) == ["half_open"])
    }
}
