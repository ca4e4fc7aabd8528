// sync-crash-child: the process the crash-safety test SIGKILLs at random moments.
//
//   sync-crash-child --store PATH --log PATH --url URL --count N [--drain]
//
// Opens the SQLite queue (exit 3 if it does not open cleanly), starts a SyncEngine against the FaultServer
// mutation sink at URL, then enqueues N mutations with fresh idempotency keys. After each enqueue *returns*,
// it appends the key to the log and fsyncs the log: the log lists exactly the writes the app acknowledged.
// With --drain it enqueues nothing and exits 0 once the queue is empty. On SIGUSR1 it prints its last events
// (engine states, attempts, each request's start and end) to standard error. It exits 7 if the process that
// started it goes away.
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

/// The last events of this process (engine states, attempts, and every request's start and end), printed to
/// standard error on SIGUSR1: what the crash test asks a drainer that stopped making progress.
final class RecentEvents: TelemetrySink {
    private let lines = LockedState(initialState: [String]())
    private let started = ContinuousClock.now

    func receive(_ event: ResilienceEvent) {
        note("\(event.kind) \(event.detail ?? "") \(event.classification.map { "\($0.code)" } ?? "")")
    }

    func note(_ line: String) {
        let stamped = "\(ContinuousClock.now - started) \(line)"
        lines.withLock { lines in
            lines.append(stamped)
            if lines.count > 80 { lines.removeFirst(lines.count - 80) }
        }
    }

    func dump() {
        let text = lines.withLock { $0.joined(separator: "\n") }
        FileHandle.standardError.write(Data("sync-crash-child: last events\n\(text)\n".utf8))
    }
}

/// Notes each request's start and end in `events`.
struct NotingTransport: HTTPTransport {
    let wrapped: any HTTPTransport
    let events: RecentEvents

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        let key = request.headers["Idempotency-Key"] ?? "-"
        events.note("send \(key)")
        do {
            let response = try await wrapped.send(request, context: context)
            events.note("sent \(key): \(response.status)")
            return response
        } catch {
            events.note("failed \(key): \(error)")
            throw error
        }
    }
}

let arguments = Arguments()
let events = RecentEvents()
signal(SIGUSR1, SIG_IGN)
let dumpOnSignal = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
dumpOnSignal.setEventHandler { events.dump() }
dumpOnSignal.resume()
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
// No breaker: the child must keep sending through every fault. Each request gets 1 s: after the sink resets a
// reused keep-alive connection, libcurl silently resends the request on a new one without its body and waits
// (Docs/Transport.md, Linux quirks), so such an attempt ends only at its deadline, and a long deadline makes
// a drain of hundreds of mutations take minutes.
let engine = SyncEngine(
    store: store, transport: NotingTransport(wrapped: URLSessionTransport(), events: events),
    requestBuilder: SinkRequestBuilder(url: url), classifier: TransportErrorClassifier(),
    pipeline: Pipeline { TimeoutStrategy(.seconds(1)) }, configuration: configuration, telemetry: events)
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

// A drainer whose test process is gone (killed, crashed) stops too, instead of polling a vanished server.
let parent = getppid()
while (try? store.pendingCount()) != 0 {
    if getppid() != parent { exit(7) }
    try? await Task.sleep(for: .milliseconds(10))
}
runner.cancel()
exit(0)
