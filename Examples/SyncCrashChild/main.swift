// sync-crash-child: the process the crash-safety test SIGKILLs at random moments.
//
//   sync-crash-child --store PATH --log PATH --url URL --count N [--drain]
//
// Opens the SQLite queue (exit 3 if it does not open cleanly), starts a SyncEngine against the FaultServer
// mutation sink at URL, then enqueues N mutations with fresh idempotency keys. After each enqueue *returns*,
// it appends the key to the log and fsyncs the log: the log lists exactly the writes the app acknowledged.
// With --drain it enqueues nothing and exits 0 once the queue is empty.
import Foundation
import ResilienceCore
import ResiliencePolicies
import ResilienceSync
import ResilienceTransport
import SyncExampleSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

struct Arguments {
    var store = ""
    var log = ""
    var url = ""
    var count = 0
    var drain = false

    init() {
        var iterator = CommandLine.arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--store": store = iterator.next() ?? ""
            case "--log": log = iterator.next() ?? ""
            case "--url": url = iterator.next() ?? ""
            case "--count": count = Int(iterator.next() ?? "") ?? 0
            case "--drain": drain = true
            default: break
            }
        }
    }
}

/// An append-only log whose every line is on disk before `append` returns.
final class DurableLog {
    private let descriptor: Int32

    init(path: String) {
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    }

    var isOpen: Bool { descriptor >= 0 }

    func append(_ line: String) -> Bool {
        let bytes = Array((line + "\n").utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        return written == bytes.count && fsync(descriptor) == 0
    }
}

let arguments = Arguments()
guard let url = URL(string: arguments.url), !arguments.store.isEmpty, !arguments.log.isEmpty else {
    FileHandle.standardError.write(Data("usage: sync-crash-child --store PATH --log PATH --url URL --count N\n".utf8))
    exit(2)
}

let store: SQLiteMutationStore
do {
    store = try SQLiteMutationStore(path: arguments.store)
} catch {
    FileHandle.standardError.write(Data("store did not open: \(error)\n".utf8))
    exit(3)
}
if let recovery = store.recovery {
    FileHandle.standardError.write(Data("store was recovered from corruption: \(recovery)\n".utf8))
    exit(3)
}
let log = DurableLog(path: arguments.log)
guard log.isOpen else { exit(4) }

var configuration = SyncEngine.Configuration()
configuration.pollInterval = .milliseconds(20)
configuration.maxRetries = 1_000
// No breaker: the child must keep sending through every fault; each request gets 5 s.
let engine = SyncEngine(
    store: store, transport: URLSessionTransport(), requestBuilder: SinkRequestBuilder(url: url),
    classifier: TransportErrorClassifier(), pipeline: Pipeline { TimeoutStrategy(.seconds(5)) },
    configuration: configuration)
let runner = Task { await engine.run() }

let processID = UUID().uuidString.prefix(8)
for index in 0..<arguments.count {
    let key = "\(processID)-\(index)"
    let draft = MutationDraft(
        entityType: "event", entityID: key, operation: .create, payload: Data("{\"n\":\(index)}".utf8),
        idempotencyKey: key)
    do {
        _ = try await engine.enqueue(draft)
    } catch {
        FileHandle.standardError.write(Data("enqueue failed: \(error)\n".utf8))
        exit(5)
    }
    guard log.append(key) else { exit(6) }
}

while (try? store.pendingCount()) != 0 {
    try? await Task.sleep(for: .milliseconds(10))
}
runner.cancel()
exit(0)
