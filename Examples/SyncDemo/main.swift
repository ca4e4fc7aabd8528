// sync-demo: the offline mutation queue and sync engine against an embedded FaultServer.
//
//   swift run sync-demo [--fast | --real-time]
//
// Enqueues mutations while the device is offline (a scripted path monitor the engine follows by itself;
// the presenter's offline banner counts the queued changes; nothing is sent), comes back online, meets a burst of 429s that trips the rate-limit
// breaker (which recovers after its cooldown), trips it again (the user taps "Retry now": a manual reset),
// hits a duplicate (409), and prints every state transition and a final tally. The clock runs 10× faster by
// default (100× with --fast, 1× with --real-time, which takes over a minute because of the 30 s cooldown).
import Foundation
import ResilienceCore
import ResiliencePolicies
import ResiliencePresentation
import ResilienceSync
import ResilienceTesting
import ResilienceTransport
import SyncExampleSupport

let arguments = CommandLine.arguments.dropFirst()
let factor: Double = arguments.contains("--fast") ? 100 : arguments.contains("--real-time") ? 1 : 10
let scaled = ScaledClock(factor: factor)
let clock = ResilienceClock(scaled)
let realStart = ContinuousClock.now

func say(_ text: String) {
    let time = clock.now().offset.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))
    print("[\(time)] \(text)")
}

/// The app's local database, as far as the demo is concerned.
final class DemoLocalDatabase: SyncEngineDelegate {
    let duplicates = LockedBox(0)
    let failed = LockedBox(0)

    func markEntityFailed(_ mutation: Mutation, reason: String) async {
        failed.mutate { $0 += 1 }
        say("  ✗ \(mutation.entityType) \(mutation.entityID) marked failed: \(reason)")
    }

    func deleteLocalDuplicate(_ mutation: Mutation) async {
        duplicates.mutate { $0 += 1 }
        say(
            "  ⧉ 409: \(mutation.entityType) \(mutation.entityID) already exists on the server; local duplicate deleted"
        )
    }
}

/// Counts what the engine reports.
final class DemoTelemetry: TelemetrySink {
    let breakerOpens = LockedBox(0)
    func receive(_ event: ResilienceEvent) {
        if event.kind == .breakerTransition, let transition = event.transition {
            if transition.to == .open { breakerOpens.mutate { $0 += 1 } }
            say("  breaker \(transition)")
        }
    }
}

var serverConfiguration = FaultServerConfiguration()
serverConfiguration.lifetime = .seconds(600)
let server = try FaultServer(configuration: serverConfiguration)
defer { server.stop() }
// The server's script: two bursts of 429s, one confirmed duplicate (a 409 problem saying the entity exists), then an idempotent sink that applies each key once.
let rateLimited = Fault.rateLimited(retryAfter: "30")
server.script(
    "/mutations", rateLimited, rateLimited, rateLimited, rateLimited, rateLimited, rateLimited, .alreadyExists,
    .mutationSink())

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-demo-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let store = try SQLiteMutationStore(path: directory.appendingPathComponent("queue.sqlite").path)

let database = DemoLocalDatabase()
let telemetry = DemoTelemetry()
var configuration = SyncEngine.Configuration()
configuration.pollInterval = .seconds(2)
// Every request runs through one pipeline: the seed-004 rate-limit breaker, then a per-request timeout
// (300 s of scaled time: 3 s of real time at --fast). The engine keeps no breaker of its own; it is handed
// the same breaker only to show it, reset it and persist it.
let breaker = RateLimitBreaker()
let pipeline = Pipeline {
    CircuitBreakerStrategy(breaker: breaker)
    TimeoutStrategy(.seconds(300))
}
let engine = SyncEngine(
    store: store, transport: URLSessionTransport(), requestBuilder: SinkRequestBuilder(url: server.url("/mutations")),
    classifier: TransportErrorClassifier(), pipeline: pipeline, breaker: breaker,
    delegate: database, configuration: configuration, clock: clock, telemetry: telemetry)

print("sync-demo: FaultServer on port \(server.port), clock ×\(Int(factor)), store \(directory.path)")

let rateLimitedStates = LockedBox(0)
let watcher = Task {
    var previous = "idle"
    for await state in engine.stateUpdates() {
        say("state \(previous) → \(state)")
        previous = state.name
        if case .rateLimited = state {
            let count = rateLimitedStates.mutate { count -> Int in
                count += 1
                return count
            }
            if count == 2 {
                say("  the user taps “Retry now”: manual breaker reset")
                await engine.resetCircuitBreaker()
            }
        }
    }
}

// The device's network path, as NWPathMonitor or rtnetlink would report it; the engine follows it by itself.
let network = ScriptedConnectivityMonitor(.unsatisfied)
let runner = Task { await engine.run(following: network) }
say("offline: enqueueing 12 mutations")
var enqueued = 0
for index in 1...12 {
    let operation: MutationOperation = index % 4 == 0 ? .update : .create
    _ = try await engine.enqueue(
        MutationDraft(
            entityType: "event", entityID: "e\(index)", operation: operation,
            payload: Data(#"{"title":"Event \#(index)"}"#.utf8)))
    enqueued += 1
}
let queued = try store.pendingCount()
say("queued: \(queued) pending, durable in SQLite")
if let banner = DefaultErrorPresenter().present(
    PresentationContext(itemNoun: "events", itemsShown: 12, isOffline: true, queuedMutations: queued))
{
    say("  what the person sees: ⊘ \(banner.title): \(banner.message)")
}
try await clock.sleep(for: .seconds(5))
let requestsWhileOffline = server.requests(to: "/mutations").count
say("back online (\(requestsWhileOffline) requests were sent while offline)")
network.setOnline(true)

let deadline = ContinuousClock.now + .seconds(25)
while try store.pendingCount() > 0 || engine.state != .idle {
    if ContinuousClock.now > deadline {
        say("gave up waiting: \(try store.pendingCount()) still pending")
        break
    }
    try await Task.sleep(for: .milliseconds(20))
}
runner.cancel()
try await Task.sleep(for: .milliseconds(50))
watcher.cancel()

let applied = server.appliedEffects
let requests = server.requests(to: "/mutations")
let rateLimitResponses = requests.count - applied.count - 1
print(
    """

    ── tally ──────────────────────────────────────
    enqueued                 \(enqueued)
    applied on the server    \(applied.count) (each key at most once: \(applied.values.allSatisfy { $0 == 1 }))
    duplicates (409)         \(database.duplicates.value)
    marked failed            \(database.failed.value)
    429 responses            \(rateLimitResponses)
    breaker trips            \(telemetry.breakerOpens.value)
    requests                 \(requests.count), every one with an Idempotency-Key: \(server.unkeyedEffects == 0)
    requests while offline   \(requestsWhileOffline)
    still pending            \(try store.pendingCount())
    simulated time           \(clock.now().offset.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))
    real time                \((ContinuousClock.now - realStart).formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 2))))
    """)
try store.close()
