import Benchmark
import ResilienceKit
import ResilienceSources

let benchmarks: @Sendable () -> Void = {
    registerAggregatorMemoryBenchmarks()
}

/// A minimal source: an id, a kind, a name, and items it never needs to fetch here.
struct StaticSource: Source {
    let id: SourceID
    let displayName: String
    var kind: SourceKind { .jsonAPI }

    func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [String] { [displayName] }
}

/// Keeps aggregators alive so the interposer sees their memory as not freed.
final class KeepAlive: @unchecked Sendable {
    var aggregators: [Aggregator<String>] = []
}

/// Memory per registered source: bytes not freed after registering 1,000 sources (divide by 1,000). Once with
/// no pipeline (the registration alone), once with the standard preset pipeline per source (its own budget,
/// breaker and token bucket), which is what a real registration costs.
func registerAggregatorMemoryBenchmarks() {
    let keepAlive = KeepAlive()
    let configuration = Benchmark.Configuration(
        metrics: [.memoryLeakedBytes, .mallocCountTotal], warmupIterations: 1, scalingFactor: .one,
        maxDuration: .seconds(3), maxIterations: 10)
    let count = 1_000
    let clock = ResilienceClock(ContinuousClock())
    let random = SharedRandomSource(seed: 1)
    // The source values (ids and names) exist before measuring: their strings belong to the app, not to
    // the aggregator.
    let sources = (0..<count).map {
        StaticSource(id: SourceID("source-\($0).boards.example.com"), displayName: "Job board number \($0)")
    }

    for withPipeline in [false, true] {
        let name = withPipeline ? "standard preset pipeline each" : "passthrough pipeline"
        Benchmark("memory: aggregator, 1,000 sources, \(name)", configuration: configuration) { benchmark in
            benchmark.startMeasurement()
            var aggregator = Aggregator<String>(clock: clock)
            for source in sources {
                if withPipeline {
                    aggregator.register(source, pipeline: Pipeline.standard(clock: clock, random: random))
                } else {
                    aggregator.register(source)
                }
            }
            keepAlive.aggregators.append(aggregator)
            benchmark.stopMeasurement()
            precondition(aggregator.registrations.count == count)
        }
    }
}
