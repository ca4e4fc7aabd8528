import Foundation
import ResilienceTesting
import ResilienceTransport

/// The classification of an error the way a pipeline would see it.
func classify(_ error: (any Error)?) -> FailureClassification? {
    guard let error else { return nil }
    return CompositeErrorClassifier([TransportErrorClassifier.standard]).classification(of: error)
}

/// A context on the real continuous clock with an attempt deadline `timeout` from now. The default is generous:
/// these tests share two cores with suites that run child processes and simulations, and a test's task can wait
/// seconds for a thread; a test that needs the deadline itself passes its own.
func realContext(timeout: Duration = .seconds(60), telemetry: (any TelemetrySink)? = nil) -> ResilienceContext {
    let clock = ResilienceClock.continuous
    return ResilienceContext(
        key: "test", deadline: clock.now().advanced(by: timeout), telemetry: telemetry, clock: clock,
        classifier: TransportErrorClassifier.standard)
}

/// A transport for one FaultServer test: a session of its own, so suites running in parallel never queue
/// behind each other's delegate callbacks (the size-cap tests stream hundreds of megabytes through theirs).
var sharedTransport: URLSessionTransport { URLSessionTransport() }

/// Yields until `condition` holds, at most `limit` times; returns whether it held. No real sleep: for work a
/// test started on other tasks against a manual clock.
@discardableResult
func yielding(_ limit: Int = 200_000, _ condition: () -> Bool) async -> Bool {
    for _ in 0..<limit {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}
