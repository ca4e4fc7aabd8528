import Benchmark
import BenchmarkSupport
import CoreMetrics
import ResilienceCore
import ResilienceMetrics

let benchmarks: @Sendable () -> Void = {
    registerSeenEventBenchmarks()
    registerDistinctKeyBenchmarks()
}

/// A backend whose handles do nothing, so the numbers are the sink's own cost.
struct DiscardingFactory: MetricsFactory {
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        NOOPMetricsHandler.instance
    }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        NOOPMetricsHandler.instance
    }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        NOOPMetricsHandler.instance
    }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
}

func event(_ kind: ResilienceEventKind, key: String, classification: FailureClassification? = nil) -> ResilienceEvent {
    ResilienceEvent(
        kind: kind, key: key, operation: "fetch", attempt: 1, time: .origin, duration: .milliseconds(12),
        classification: classification)
}

/// Events whose key, kind, category and outcome the sink has seen before: the steady state of a service.
func registerSeenEventBenchmarks() {
    let key = "boards.greenhouse.io"
    let failure = FailureClassification(category: .serverError, code: "HTTP_503", httpStatus: 503)
    let cases: [(String, ResilienceEvent)] = [
        ("attempt started", event(.attemptStarted, key: key)),
        ("attempt succeeded", event(.attemptSucceeded, key: key)),
        ("attempt failed", event(.attemptFailed, key: key, classification: failure)),
        ("retry scheduled", event(.retryScheduled, key: key, classification: failure)),
    ]
    for (name, event) in cases {
        let sink = MetricsTelemetrySink(factory: DiscardingFactory())
        sink.receive(event)
        Benchmark("metrics sink: \(name), seen labels", configuration: perOperation) { benchmark in
            for _ in benchmark.scaledIterations {
                sink.receive(event)
            }
        }
    }
    let sink = MetricsTelemetrySink(factory: DiscardingFactory())
    sink.recordOperation(key: key, duration: .milliseconds(40), failure: failure)
    Benchmark("metrics sink: recordOperation, seen labels", configuration: perOperation) { benchmark in
        for _ in benchmark.scaledIterations {
            sink.recordOperation(key: key, duration: .milliseconds(40), failure: failure)
        }
    }
}

/// Keeps sinks alive so the interposer sees their memory as not freed.
final class KeepAlive: @unchecked Sendable {
    var sinks: [MetricsTelemetrySink] = []
}

/// A hostile stream: 100,000 events, each with a key never seen before. What the sink still holds afterwards
/// must not grow with the number of distinct keys (they all count as `other` past the cap).
func registerDistinctKeyBenchmarks() {
    let keepAlive = KeepAlive()
    let keys = (0..<100_000).map { "tenant-\($0).jobs.example.com" }
    Benchmark(
        "memory: metrics sink after 100,000 distinct keys",
        configuration: .init(
            metrics: [.memoryLeakedBytes, .mallocCountTotal, .wallClock], warmupIterations: 1, scalingFactor: .one,
            maxDuration: .seconds(5), maxIterations: 5)
    ) { benchmark in
        benchmark.startMeasurement()
        let sink = MetricsTelemetrySink(factory: DiscardingFactory())
        for key in keys { sink.receive(event(.attemptSucceeded, key: key)) }
        keepAlive.sinks.append(sink)
        benchmark.stopMeasurement()
    }
}
