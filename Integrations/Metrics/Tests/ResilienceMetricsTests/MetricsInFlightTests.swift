import CoreMetrics
import Dispatch
import Foundation
import MetricsTestKit
import ResilienceCore
import ResilienceMetrics
import Testing

@Suite("MetricsTelemetrySink attempts in flight under concurrency")
struct MetricsInFlightTests {
    @Test("a start whose gauge update lands after its attempt's end leaves the gauge at 0, not at a phantom 1")
    func lateUpdateDoesNotStick() throws {
        let factory = ObservedMetricsFactory(gatedLabel: "resilience_attempts_in_flight")
        let sink = MetricsTelemetrySink(factory: factory)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            sink.receive(MetricsTelemetrySinkTests.event(.attemptStarted))
            started.signal()
        }
        thread.start()
        factory.arrived.wait()  // the start counted 1 and is about to set the gauge
        sink.receive(MetricsTelemetrySinkTests.event(.attemptSucceeded, duration: .milliseconds(5)))
        factory.proceed.signal()
        started.wait()

        let gauge = try factory.base.expectGauge("resilience_attempts_in_flight", [("key", "lever")])
        #expect(gauge.lastValue == 0, "recorded \(gauge.values) with no attempt in flight")
    }
}
