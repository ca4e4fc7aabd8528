import Benchmark
import BenchmarkSupport
import Foundation
import ResilienceKit
import ResilienceTelemetry

let benchmarks: @Sendable () -> Void = {
    registerEmitBenchmarks()
    registerRecorderMemoryBenchmarks()
    registerPipelineWithRecorderBenchmarks()
}

func context(_ sink: (any TelemetrySink)?) -> ResilienceContext {
    ResilienceContext(key: "boards.greenhouse.io", operation: "fetch", telemetry: sink, clock: benchClock)
}

/// What one `emit` costs on a hot path: no sink, a disabled sink, the recorder.
func registerEmitBenchmarks() {
    let cases: [(String, ResilienceContext)] = [
        ("no sink", context(nil)),
        ("disabled sink (NoOpSink)", context(NoOpSink())),
        ("recorder", context(TelemetryRecorder(clock: benchClock))),
    ]
    for (name, context) in cases {
        Benchmark("emit: \(name)", configuration: perOperation) { benchmark in
            for _ in benchmark.scaledIterations {
                context.emit(.attemptSucceeded) { $0.duration = .milliseconds(12) }
            }
        }
    }
    let recorder = context(TelemetryRecorder(clock: benchClock))
    Benchmark("emit: recorder, failure with detail", configuration: perOperation) { benchmark in
        let failure = FailureClassification(category: .serverError, code: "HTTP_503", httpStatus: 503)
        for _ in benchmark.scaledIterations {
            recorder.emit(.attemptFailed) {
                $0.classification = failure
                $0.duration = .milliseconds(250)
                $0.detail = "GET https://boards.greenhouse.io/v1/boards/acme/jobs?api_key=SECRET&page=2"
            }
        }
    }
}

/// Keeps recorders alive so the interposer sees their memory as not freed.
final class KeepAlive: @unchecked Sendable {
    var recorders: [TelemetryRecorder] = []
}

/// The memory a recorder holds once it has 1,000 records (a full ring), measured two ways: bytes not freed
/// by the end of the measured region (malloc interposer), and the recorder's own `memoryFootprint()`.
func registerRecorderMemoryBenchmarks() {
    let keepAlive = KeepAlive()
    let footprint = BenchmarkMetric.custom(
        "memoryFootprint() bytes", polarity: .prefersSmaller, useScalingFactor: false)
    let failure = FailureClassification(category: .serverError, code: "HTTP_503", httpStatus: 503)
    Benchmark(
        "memory: recorder with 1,000 records",
        configuration: .init(
            metrics: [.memoryLeakedBytes, .mallocCountTotal, footprint], warmupIterations: 1, scalingFactor: .one,
            maxDuration: .seconds(2), maxIterations: 20)
    ) { benchmark in
        benchmark.startMeasurement()
        let recorder = TelemetryRecorder(clock: benchClock)
        let sources = (0..<20).map { "source-\($0).jobs.example.com" }
        for index in 0..<1_000 {
            let context = ResilienceContext(
                key: sources[index % sources.count], operation: index % 3 == 0 ? "fetch" : "refresh",
                attempt: 1 + index % 3, telemetry: recorder, clock: benchClock)
            context.emit(index % 4 == 0 ? .attemptFailed : .attemptSucceeded) {
                $0.duration = .milliseconds(Int64(10 + index % 300))
                if index % 4 == 0 {
                    $0.classification = failure
                    $0.detail = "GET https://\(sources[index % sources.count])/v1/jobs?page=\(index)&api_key=SECRET"
                }
            }
        }
        keepAlive.recorders.append(recorder)
        benchmark.stopMeasurement()
        benchmark.measurement(footprint, recorder.memoryFootprint())
        precondition(recorder.count == 1_000, "the recorder should hold 1,000 records")
    }
}
