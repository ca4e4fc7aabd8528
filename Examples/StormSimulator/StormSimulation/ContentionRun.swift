import Foundation
import ResilienceKit
import ResilienceTesting
import Synchronization

/// AWS's backoff study ("Exponential Backoff and Jitter", 2015) in its own model: 100 clients each update
/// one row once under optimistic concurrency control. A call reads the row's version, then writes with it;
/// the write fails if another write landed in between, and the client retries (read, then write) until it
/// succeeds. Each message takes |N(10 ms, 2 ms)|. The clients run the real `RetryStrategy` over an
/// `HTTPTransport` to this server; a failed write is answered `503` so the standard classification retries it.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public struct ContentionRun: Sendable {
    /// How many clients contend.
    public var clients = 100

    /// Creates the study's setup.
    public init() {}

    /// What one run measured.
    public struct Result: Sendable {
        /// Writes the server received (the study's "calls").
        public var calls: Int
        /// Clients whose write eventually succeeded.
        public var completed: Int
        /// When the last client finished.
        public var completion: Duration
        /// When each client that completed finished, sorted.
        public var completions: [Duration] = []

        /// The completion time at `quantile` (nearest rank) over the clients that completed; `nil` when none did.
        public func completion(at quantile: Double) -> Duration? {
            guard !completions.isEmpty else { return nil }
            let rank = Int((quantile * Double(completions.count)).rounded(.up))
            return completions[min(max(rank, 1), completions.count) - 1]
        }
    }

    /// Runs `retry` (a retry policy used until success) with `seed`.
    public func measure(_ retry: StandardRetryPolicy, seed: UInt64) -> Result {
        var policy = retry
        policy.maxAttempts = 100_000
        let untilSuccess = policy
        return measure(seed: seed) { _, random in
            Pipeline { RetryStrategy(policy: untilSuccess, random: random, maximumTotalAttempts: 100_000) }
        }
    }

    /// Runs each client's write through the pipeline `makePipeline` builds for it (a preset as shipped, say),
    /// with `seed`. A client whose call fails calls again, as the study's clients keep trying until their write
    /// lands: after the time a rejection names (an open breaker, a limiter), else at once (at least 1 ms
    /// later, so a rejection that names no time cannot spin in zero virtual time); it gives up after an hour.
    public func measure(
        seed: UInt64, makePipeline: @escaping @Sendable (ResilienceClock, SharedRandomSource) -> any ResiliencePipeline
    ) -> Result {
        let simulation = Simulation(seed: seed)
        let server = OptimisticRow(simulation: simulation)
        let clock = simulation.resilienceClock
        let clients = clients
        let finished = Completions()
        _ = try? simulation.run(timeLimit: .seconds(3600)) {
            await withTaskGroup(of: Void.self) { group in
                for client in 0..<clients {
                    let pipeline = makePipeline(clock, simulation.random(stream: UInt64(client) + 1))
                    let transport = ResilientTransport(wrapping: server, pipeline: pipeline)
                    group.addTask {
                        let request = HTTPRequest(url: URL(string: "https://row.example/update")!)
                        while simulation.clock.now.offset < .seconds(3600) {
                            let started = simulation.clock.now.offset
                            let context = ResilienceContext(key: "row", clock: clock)
                            do {
                                _ = try await transport.send(request, context: context)
                                finished.record(simulation.clock.now.offset)
                                return
                            } catch {
                                let named = (error as? ResilienceError)?.retryAfter ?? .zero
                                let wait = simulation.clock.now.offset == started ? max(named, .milliseconds(1)) : named
                                guard wait > .zero else { continue }
                                guard (try? await simulation.clock.sleep(for: wait)) != nil else { return }
                            }
                        }
                    }
                }
            }
        }
        let completions = finished.sorted
        return Result(
            calls: server.calls, completed: completions.count, completion: simulation.clock.now.offset,
            completions: completions)
    }
}

/// When each client's write landed (the run is single-threaded; the lock only satisfies `Sendable`).
final class Completions: Sendable {
    private let times = Mutex<[Duration]>([])

    func record(_ time: Duration) { times.withLock { $0.append(time) } }

    var sorted: [Duration] { times.withLock { $0.sorted() } }
}

/// The study's server: one row with one version number.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class OptimisticRow: HTTPTransport {
    private struct State {
        var version = 0
        var calls = 0
        var generator: PseudoRandomGenerator
    }

    private let clock: VirtualClock
    private let state: Mutex<State>
    private static let network = LatencyDistribution.absoluteNormal(
        mean: .milliseconds(10), standardDeviation: .milliseconds(2))

    init(simulation: Simulation) {
        clock = simulation.clock
        state = Mutex(State(generator: simulation.generator(stream: 0xACC)))
    }

    var calls: Int { state.withLock { $0.calls } }

    private func delay() -> Duration { state.withLock { Self.network.sample(using: &$0.generator) } }

    /// Read (a round trip), then write (a round trip): `200` when no write landed in between, else `503`.
    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        try await clock.sleep(for: delay())
        let read = state.withLock { $0.version }
        try await clock.sleep(for: delay())
        try await clock.sleep(for: delay())
        let written = state.withLock { state -> Bool in
            state.calls += 1
            guard state.version == read else { return false }
            state.version += 1
            return true
        }
        try await clock.sleep(for: delay())
        return HTTPResponse(status: written ? 200 : 503)
    }
}
