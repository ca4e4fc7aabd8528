import CoreMetrics
import Dispatch
import Foundation
import MetricsTestKit
import ResilienceCore
import ResilienceMetrics
import Testing

@Suite("MetricsTelemetrySink attempts in flight under concurrency")
struct MetricsInFlightTests {
    /// Forwards to `TestMetrics`, except that the first time the in-flight gauge is set to 1 the recording
    /// waits at a gate: the test lets another update go past it before it lands.
    final class GatedFactory: MetricsFactory, @unchecked Sendable {
        let base = TestMetrics()
        let arrived = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)

        final class GatedRecorder: RecorderHandler, @unchecked Sendable {
            let base: any RecorderHandler
            let factory: GatedFactory
            private let gateUsed = LockedState(initialState: false)

            init(base: any RecorderHandler, factory: GatedFactory) {
                self.base = base
                self.factory = factory
            }

            func record(_ value: Int64) {
                let waits =
                    value == 1
                    && gateUsed.withLock { used in
                        defer { used = true }
                        return !used
                    }
                if waits {
                    factory.arrived.signal()
                    factory.proceed.wait()
                }
                base.record(value)
            }

            func record(_ value: Double) { base.record(value) }
        }

        func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
            base.makeCounter(label: label, dimensions: dimensions)
        }
        func makeFloatingPointCounter(
            label: String, dimensions: [(String, String)]
        ) -> any FloatingPointCounterHandler {
            base.makeFloatingPointCounter(label: label, dimensions: dimensions)
        }
        func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
            base.makeMeter(label: label, dimensions: dimensions)
        }
        func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
            let recorder = base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate)
            return label == "resilience_attempts_in_flight" ? GatedRecorder(base: recorder, factory: self) : recorder
        }
        func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
            base.makeTimer(label: label, dimensions: dimensions)
        }
        func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
        func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
            base.destroyFloatingPointCounter(handler)
        }
        func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
        func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
        func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
    }

    @Test("a start whose gauge update lands after its attempt's end leaves the gauge at 0, not at a phantom 1")
    func lateUpdateDoesNotStick() throws {
        let factory = GatedFactory()
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
