import Benchmark
import Foundation
import ResilienceKit
import ResilienceSync

let benchmarks: @Sendable () -> Void = {
    registerEnqueueBenchmarks()
    registerDrainBenchmark()
}

/// A small JSON payload, the size of a typical mutation (a saved job, an edited note).
let payload = Data(#"{"title":"Senior iOS Engineer","company":"Acme","saved":true,"note":"apply by Friday"}"#.utf8)

/// A fresh database file in the temporary directory.
func temporaryDatabase(_ name: String) -> String {
    let path = NSTemporaryDirectory() + "resiliencekit-bench-\(name)-\(UUID().uuidString).sqlite"
    return path
}

func removeDatabase(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

/// Opens a database before a benchmark's iterations and removes it afterwards.
final class Fixture<Value>: @unchecked Sendable {
    let name: String
    let open: (String) throws -> Value
    private(set) var value: Value?
    private var path = ""

    init(_ name: String, open: @escaping (String) throws -> Value) {
        self.name = name
        self.open = open
    }

    func setUp() throws {
        path = temporaryDatabase(name)
        value = try open(path)
    }

    func tearDown() {
        value = nil
        removeDatabase(path)
    }
}

/// Durable writes: one per transaction (each waits for its fsync), and batches of 100 in one transaction.
/// Every iteration is one transaction; the tool's time column is per transaction, throughput in
/// transactions per second (multiply by 100 for rows per second in the batched cases).
func registerEnqueueBenchmarks() {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], warmupIterations: 5, scalingFactor: .one,
        maxDuration: .seconds(3), maxIterations: 2_000)
    let batch = 100
    let raw = Fixture("raw") { RawSQLite(path: $0) }
    let store = Fixture("store") { try SQLiteMutationStore(path: $0) }
    var counter = 0
    func nextDraft() -> MutationDraft {
        counter += 1
        return MutationDraft(entityType: "job", entityID: "job-\(counter)", operation: .create, payload: payload)
    }

    Benchmark(
        "enqueue: raw SQLite insert, 1 per transaction", configuration: configuration,
        closure: { _ in raw.value?.insertRow(payload: payload) }, setup: { try raw.setUp() },
        teardown: { raw.tearDown() })
    Benchmark(
        "enqueue: SQLiteMutationStore, 1 per transaction", configuration: configuration,
        closure: { _ in blackHole(try store.value?.enqueue(nextDraft())) }, setup: { try store.setUp() },
        teardown: {
            try? store.value?.close(); store.tearDown()
        })
    Benchmark(
        "enqueue: raw SQLite insert, batches of \(batch)", configuration: configuration,
        closure: { _ in raw.value?.insertBatch(batch, payload: payload) }, setup: { try raw.setUp() },
        teardown: { raw.tearDown() })
    Benchmark(
        "enqueue: SQLiteMutationStore, batches of \(batch)", configuration: configuration,
        closure: { _ in
            let drafts = (0..<batch).map { _ in nextDraft() }
            blackHole(try store.value?.enqueue(batch: drafts))
        }, setup: { try store.setUp() },
        teardown: {
            try? store.value?.close(); store.tearDown()
        })
}
