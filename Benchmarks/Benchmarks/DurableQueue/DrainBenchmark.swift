import Benchmark
import Foundation
import ResilienceKit
import ResilienceSync
import ResilienceTesting
import ResilienceTransport

/// Sends each mutation to one FaultServer mutation sink (POST for creates, PUT for updates, DELETE for
/// deletes); the engine adds the `Idempotency-Key` header.
struct SinkRequestBuilder: SyncRequestBuilder {
    var url: URL

    func request(for mutation: Mutation) throws -> HTTPRequest {
        let method: HTTPMethod =
            switch mutation.operation {
            case .create: .post
            case .delete: .delete
            default: .put
            }
        return HTTPRequest(
            method: method, url: url, headers: ["Content-Type": "application/json"], body: mutation.payload)
    }
}

/// Drains 10,000 queued mutations through the sync engine to the loopback FaultServer (real sockets, real
/// HTTP, the SQLite store): one iteration is one full drain; the custom metric is mutations per second.
func registerDrainBenchmark() {
    let total = 10_000
    let rate = BenchmarkMetric.custom("mutations per second", polarity: .prefersLarger, useScalingFactor: false)
    Benchmark(
        "drain: 10,000 queued mutations to FaultServer",
        configuration: .init(
            metrics: [.wallClock, rate], warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(60),
            maxIterations: 3)
    ) { benchmark in
        let server = try FaultServer(configuration: FaultServerConfiguration())
        defer { server.stop() }
        server.script("/mutations", .mutationSink())
        let path = temporaryDatabase("drain")
        defer { removeDatabase(path) }
        let store = try SQLiteMutationStore(path: path)
        defer { try? store.close() }
        for chunk in 0..<(total / 100) {
            _ = try store.enqueue(
                batch: (0..<100).map { index in
                    MutationDraft(
                        entityType: "job", entityID: "job-\(chunk * 100 + index)", operation: .create, payload: payload)
                })
        }
        let breaker = RateLimitBreaker(.standard)
        let engine = SyncEngine(
            store: store, transport: URLSessionTransport(),
            requestBuilder: SinkRequestBuilder(url: server.url("/mutations")),
            classifier: TransportErrorClassifier(),
            pipeline: Pipeline { CircuitBreakerStrategy(breaker: breaker) }, breaker: breaker)
        let started = ContinuousClock.now
        benchmark.startMeasurement()
        var passes = 0
        while try store.pendingCount() > 0, passes < 1_000 {
            blackHole(await engine.performSync())
            passes += 1
        }
        benchmark.stopMeasurement()
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        benchmark.measurement(rate, Int(Double(total) / seconds))
        guard server.appliedEffects.count == total, try store.pendingCount() == 0 else {
            benchmark.error(
                "drain incomplete: \(server.appliedEffects.count) applied, \(try store.pendingCount()) pending")
            return
        }
    }
}
