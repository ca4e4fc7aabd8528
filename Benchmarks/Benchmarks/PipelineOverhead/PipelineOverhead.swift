import Benchmark

let benchmarks: @Sendable () -> Void = {
    Benchmark("bare async call") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(await bare()) }
    }
}

@inline(never) func bare() async -> Int { 1 }
