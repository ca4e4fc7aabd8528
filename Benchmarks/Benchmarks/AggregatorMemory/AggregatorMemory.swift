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

/// How each source's pipeline is built.
enum PipelineVariant: String, CaseIterable {
    case passthrough = "passthrough pipeline"
    case ownPipeline = "standard preset pipeline each"
    case scopedPipeline = "standard preset pipeline each, one scope per host (100 hosts)"
}

/// Keeps aggregators alive so the interposer sees their memory as not freed.
final class KeepAlive: @unchecked Sendable {
    var aggregators: [Aggregator<String>] = []
}

/// Memory per registered source: bytes not freed after registering 1,000 sources (divide by 1,000). Once with
/// no pipeline (the registration alone); once with the standard preset pipeline per source, owning its budget,
/// breaker and server-quota pacing; once with the same pipeline per source drawing those three from a
/// `PresetScope` per host (1,000 sources on 100 hosts), as `Docs/Pipeline-Presets.md` recommends for many keys
/// of one server. The scopes are built inside the measurement: their memory is part of the registrations'.
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

    let hosts = 100
    for variant in PipelineVariant.allCases {
        Benchmark("memory: aggregator, 1,000 sources, \(variant.rawValue)", configuration: configuration) { benchmark in
            benchmark.startMeasurement()
            var aggregator = Aggregator<String>(clock: clock)
            let scopes = variant == .scopedPipeline ? PresetScopes(.standard, clock: clock, random: random) : nil
            for (index, source) in sources.enumerated() {
                switch variant {
                case .passthrough:
                    aggregator.register(source)
                case .ownPipeline:
                    aggregator.register(source, pipeline: Pipeline.standard(clock: clock, random: random))
                case .scopedPipeline:
                    let scope = scopes?.scope(named: "host-\(index % hosts).example.com")
                    aggregator.register(source, pipeline: Pipeline.standard(clock: clock, random: random, scope: scope))
                }
            }
            keepAlive.aggregators.append(aggregator)
            benchmark.stopMeasurement()
            precondition(aggregator.registrations.count == count)
        }
    }
}
