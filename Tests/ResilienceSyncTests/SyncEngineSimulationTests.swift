import Foundation
import ResiliencePolicies
import ResilienceSync
import ResilienceTesting
import Synchronization
import Testing

/// A real `SyncEngine` with a SQLite queue against a `SimulatedServer`, on the deterministic runtime: the server
/// goes down for five seconds while the app keeps writing, then recovers.
@Suite("SyncEngine on the simulation runtime")
struct SyncEngineSimulationTests {
    /// Sends to the simulated server and notes what it sees: every request, the breaker's state as it leaves,
    /// and every answer.
    final class ObservingTransport: HTTPTransport {
        struct Log {
            var sentWhileOpen = 0
            var sentDuringOutage = 0
            var applied: [String: Int] = [:]
        }

        let base: SimulatedHTTPTransport
        let breaker: any SyncBreaker
        let simulation: Simulation
        let outage: Range<Duration>
        let log = Mutex(Log())

        init(base: SimulatedHTTPTransport, breaker: any SyncBreaker, simulation: Simulation, outage: Range<Duration>) {
            self.base = base
            self.breaker = breaker
            self.simulation = simulation
            self.outage = outage
        }

        func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
            let now = simulation.now
            let metrics = breaker.metrics(now: now)
            let key = request.headers["Idempotency-Key"] ?? "?"
            log.withLock { log in
                if metrics.state == .open, metrics.remainingOpenDuration > .zero { log.sentWhileOpen += 1 }
                if outage.contains(now.offset) { log.sentDuringOutage += 1 }
            }
            simulation.trace.record("send \(key) breaker=\(metrics.state)")
            do {
                let response = try await base.send(request, context: context)
                simulation.trace.record("answer \(key) \(response.status)")
                if response.isSuccess { log.withLock { $0.applied[key, default: 0] += 1 } }
                return response
            } catch {
                simulation.trace.record("error \(key) \(error)")
                throw error
            }
        }
    }

    /// Counts the engine's calls to the delegate.
    final class CountingDelegate: SyncEngineDelegate {
        let applied = Mutex<[String: Int]>([:])
        let failed = Mutex<[String]>([])

        func markEntityFailed(_ mutation: Mutation, reason: String) async {
            failed.withLock { $0.append(mutation.entityID) }
        }

        func deleteLocalDuplicate(_ mutation: Mutation) async {}

        func mutationApplied(_ mutation: Mutation, response: HTTPResponse) async {
            applied.withLock { $0[mutation.idempotencyKey, default: 0] += 1 }
        }
    }

    struct Outcome {
        var trace: String
        var log: ObservingTransport.Log
        var deliveredToDelegate: [String: Int]
        var markedFailed: [String]
        var pending: Int
        var failedInStore: Int
        var breakerOpenings: Int
        var passes: Int
        var finishedAt: Duration
    }

    static let mutations = 40
    static let outage = Duration.seconds(2)..<Duration.seconds(7)
    /// What the watcher task of a `run()`-driven scenario returns.
    static let drained = (-1, -1)

    /// How the scenario drives the engine's passes.
    enum Driver {
        /// A loop in the test calls `performSync()`, sleeping on the virtual clock until the breaker's cooldown
        /// ends (or 1 s after an error), and counts the passes.
        case performSync
        /// `SyncEngine.run()` itself, cancelled once the queue is drained.
        case run
    }

    /// The app writes one mutation every 250 ms for 10 s while `driver` runs passes.
    static func scenario(seed: UInt64, driver: Driver = .performSync) throws -> Outcome {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let store = try SQLiteMutationStore(path: directory.path("queue.sqlite"))
        defer { try? store.close() }
        let simulation = Simulation(seed: seed, recordsTrace: true)
        let server = SimulatedServer(
            simulation: simulation,
            configuration: .init(
                workers: 2, serviceTime: .exponential(mean: .milliseconds(20)),
                networkDelay: .constant(.milliseconds(5)),
                faults: [SimulatedFault(.outage(status: nil), from: outage.lowerBound, until: outage.upperBound)]))
        var breakerSettings = ConsecutiveFailureBreaker.Configuration()
        breakerSettings.failureThreshold = 3
        breakerSettings.openDuration = .constant(.seconds(2))
        let breaker = ConsecutiveFailureBreaker(breakerSettings, random: simulation.random(stream: 7))
        let transport = ObservingTransport(
            base: SimulatedHTTPTransport(server: server), breaker: breaker, simulation: simulation, outage: outage)
        let delegate = CountingDelegate()
        var configuration = SyncEngine.Configuration()
        configuration.maxRetries = 50
        configuration.currentDate = {
            Date(timeIntervalSince1970: 1_000 + Double(simulation.now.offset.components.seconds))
        }
        let engine = SyncEngine(
            store: store, transport: transport, requestBuilder: EventsRequestBuilder(),
            pipeline: Pipeline {
                CircuitBreakerStrategy(breaker: breaker)
                TimeoutStrategy(.seconds(2))
            },
            breaker: breaker, delegate: delegate, configuration: configuration, clock: simulation.resilienceClock,
            telemetry: SimulationTelemetrySink(trace: simulation.trace))
        let (openings, passes) = try simulation.run(timeLimit: .seconds(120)) { () async throws -> (Int, Int) in
            try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                group.addTask {
                    for index in 0..<mutations {
                        try await simulation.clock.sleep(for: .milliseconds(250))
                        try await engine.enqueue(
                            MutationDraft(
                                entityType: "event", entityID: "e\(index)", operation: .create,
                                idempotencyKey: "key-\(index)"))
                    }
                    return (0, 0)
                }
                switch driver {
                case .performSync:
                    group.addTask {
                        var openings = 0
                        var passes = 0
                        while true {
                            let report = await engine.performSync()
                            passes += 1
                            switch report.finalState {
                            case .rateLimited(let until, _):
                                openings += 1
                                try await simulation.clock.sleep(until: VirtualClock.Instant(offset: until.offset))
                            case .error, .offline:
                                try await simulation.clock.sleep(for: .seconds(1))
                            case .idle, .syncing:
                                if report.remaining == 0, simulation.now.offset >= .milliseconds(250 * mutations) {
                                    return (openings, passes)
                                }
                                try await simulation.clock.sleep(for: .milliseconds(100))
                            }
                        }
                    }
                case .run:
                    group.addTask {
                        await engine.run()
                        return (0, 0)
                    }
                    // Ends the run once every mutation is written and none is pending.
                    group.addTask {
                        while true {
                            let written = simulation.now.offset >= .milliseconds(250 * mutations)
                            if written, try store.pendingCount() == 0 { break }
                            try await simulation.clock.sleep(for: .milliseconds(100))
                        }
                        return drained
                    }
                }
                var total = (0, 0)
                for try await result in group {
                    if result == drained {
                        group.cancelAll()
                    } else {
                        total = (total.0 + result.0, total.1 + result.1)
                    }
                }
                return total
            }
        }
        return Outcome(
            trace: simulation.trace.text, log: transport.log.withLock { $0 },
            deliveredToDelegate: delegate.applied.withLock { $0 }, markedFailed: delegate.failed.withLock { $0 },
            pending: try store.pendingCount(), failedInStore: try store.failed().count, breakerOpenings: openings,
            passes: passes, finishedAt: simulation.now.offset)
    }

    @Test("An outage and its recovery: every mutation delivered exactly once, nothing sent while the breaker is open")
    func outageThenRecovery() throws {
        let outcome = try Self.scenario(seed: 42)
        let keys = Set((0..<Self.mutations).map { "key-\($0)" })
        #expect(outcome.pending == 0 && outcome.failedInStore == 0 && outcome.markedFailed.isEmpty)
        #expect(Set(outcome.log.applied.keys) == keys, "every mutation reached the server and was applied")
        #expect(outcome.log.applied.values.allSatisfy { $0 == 1 }, "the server applied each mutation once")
        #expect(outcome.deliveredToDelegate == outcome.log.applied, "the app learnt of each delivery once")
        #expect(outcome.log.sentWhileOpen == 0, "no request leaves while the breaker is open")
        #expect(outcome.breakerOpenings >= 2, "the outage opened the breaker (and a failed probe reopened it)")
        // Five seconds of outage: three failures open the breaker, then one probe per 2 s cooldown.
        #expect(outcome.log.sentDuringOutage > 0 && outcome.log.sentDuringOutage <= 3 + 4)
        #expect(outcome.trace.contains("breaker"), "breaker transitions are in the trace")
        #expect(outcome.finishedAt < .seconds(20), "the queue drains soon after the outage ends")
    }

    @Test("SyncEngine.run() itself waits on the virtual clock: every mutation delivered once, reproducibly")
    func runDrivesThePasses() throws {
        let outcome = try Self.scenario(seed: 42, driver: .run)
        let keys = Set((0..<Self.mutations).map { "key-\($0)" })
        #expect(outcome.pending == 0 && outcome.failedInStore == 0 && outcome.markedFailed.isEmpty)
        #expect(Set(outcome.log.applied.keys) == keys && outcome.log.applied.values.allSatisfy { $0 == 1 })
        #expect(outcome.deliveredToDelegate == outcome.log.applied)
        #expect(outcome.log.sentWhileOpen == 0, "run() waits for the breaker's cooldown instead of sending")
        #expect(outcome.log.sentDuringOutage > 0 && outcome.log.sentDuringOutage <= 3 + 4)
        #expect(outcome.finishedAt < .seconds(20), "the queue drains soon after the outage ends")
        let again = try Self.scenario(seed: 42, driver: .run)
        #expect(again.trace == outcome.trace && again.finishedAt == outcome.finishedAt)
    }

    @Test("The same seed gives the same trace; another seed gives another")
    func reproducible() throws {
        let first = try Self.scenario(seed: 7)
        let second = try Self.scenario(seed: 7)
        #expect(!first.trace.isEmpty)
        #expect(first.trace == second.trace)
        #expect(first.passes == second.passes && first.finishedAt == second.finishedAt)
        let other = try Self.scenario(seed: 8)
        #expect(other.trace != first.trace, "the server's service times come from the seed")
    }
}
