import CoreMetrics
import Dispatch
import MetricsTestKit
import ResilienceCore
import ResilienceTesting

/// Forwards to `TestMetrics` and counts the handles a sink asks the backend for. When `gatedLabel` is given, the
/// first time a gauge with that label (and `gatedDimensions`, when given) is set to 1 the recording waits at a
/// gate: the test lets another update go past it before it lands.
final class ObservedMetricsFactory: MetricsFactory, @unchecked Sendable {
    let base = TestMetrics()
    let handlesMade = LockedBox(0)
    let gatedLabel: String?
    let gatedDimensions: [String: String]?
    let arrived = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)

    init(gatedLabel: String? = nil, gatedDimensions: [String: String]? = nil) {
        self.gatedLabel = gatedLabel
        self.gatedDimensions = gatedDimensions
    }

    final class GatedRecorder: RecorderHandler, @unchecked Sendable {
        let base: any RecorderHandler
        let factory: ObservedMetricsFactory
        private let gateUsed = LockedState(initialState: false)

        init(base: any RecorderHandler, factory: ObservedMetricsFactory) {
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

    private func made<Handler>(_ handler: Handler) -> Handler {
        handlesMade.mutate { $0 += 1 }
        return handler
    }

    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        made(base.makeCounter(label: label, dimensions: dimensions))
    }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        made(base.makeFloatingPointCounter(label: label, dimensions: dimensions))
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        made(base.makeMeter(label: label, dimensions: dimensions))
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        let recorder = made(base.makeRecorder(label: label, dimensions: dimensions, aggregate: aggregate))
        let gated =
            label == gatedLabel
            && (gatedDimensions.map { $0 == Dictionary(dimensions, uniquingKeysWith: { _, last in last }) } ?? true)
        return gated ? GatedRecorder(base: recorder, factory: self) : recorder
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        made(base.makeTimer(label: label, dimensions: dimensions))
    }
    func destroyCounter(_ handler: any CounterHandler) { base.destroyCounter(handler) }
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {
        base.destroyFloatingPointCounter(handler)
    }
    func destroyMeter(_ handler: any MeterHandler) { base.destroyMeter(handler) }
    func destroyRecorder(_ handler: any RecorderHandler) { base.destroyRecorder(handler) }
    func destroyTimer(_ handler: any TimerHandler) { base.destroyTimer(handler) }
}
