import Synchronization

/// A deterministic runtime for whole systems: real async Swift code, thousands of simulated clients, virtual
/// time.
///
/// `run` starts the body in a task that prefers the simulation's single-threaded ``executor``, then drains
/// that executor on the calling thread; whenever no job is left it wakes the earliest sleeper on ``clock``
/// and moves time to its deadline. Child tasks (task groups, `async let`, the enforced timeouts and hedges
/// of ResiliencePolicies) inherit the executor preference, so a pipeline, its stages, a transport and a
/// simulated server all run interleaved on one thread in an order fixed by the code and the seed. Nothing
/// sleeps for real and no wall clock is read: an hour of traffic takes as long as the work in it.
///
/// ```swift
/// let simulation = Simulation(seed: 42)
/// let server = SimulatedServer(simulation: simulation, configuration: .init(workers: 30))
/// let transport = SimulatedHTTPTransport(server: server)
/// let served = try simulation.run {
///     let pipeline = Pipeline.standard(clock: simulation.resilienceClock, random: simulation.random(stream: 1))
///     let context = ResilienceContext(key: "api", clock: simulation.resilienceClock)
///     let response = try await pipeline.execute(context) { attempt in
///         try await transport.send(HTTPRequest(url: URL(string: "https://api.example")!), context: attempt)
///     }
///     return response.status
/// }
/// ```
///
/// ## What must hold for a run to be reproducible
/// - Every task the code under test creates is a child task (task group, `async let`) or is started with
///   `Task(executorPreference: simulation.executor)`: a plain `Task {}` or `Task.detached` runs on the global
///   executor. Actors with a default executor run on the preferred executor of the task that calls them;
///   actors with a custom executor (the main actor included) run elsewhere.
/// - Every wait goes through ``clock`` (or ``resilienceClock``): `Task.sleep`, `ContinuousClock`,
///   `DispatchQueue` timers, real sockets and continuations resumed by other threads leave the simulation.
/// - Randomness comes from the seed (``random(stream:)``), never from `SystemRandomNumberGenerator`.
/// - Behaviour does not depend on the iteration order of a `Dictionary` or `Set` (randomised per process
///   unless the environment sets `SWIFT_DETERMINISTIC_HASHING=1`).
///
/// The runtime checks what it can: a job that reaches its executor from another thread counts in
/// ``SimulationExecutor/foreignEnqueues`` and makes `run` throw ``SimulationError/escapedExecutor(jobs:)``;
/// a body that waits on something outside the simulation throws ``SimulationError/stalled(at:)`` instead of
/// hanging.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public final class Simulation: Sendable {
    /// The seed every random stream of this simulation derives from.
    public let seed: UInt64
    /// The single-threaded executor the simulated tasks run on.
    public let executor: SimulationExecutor
    /// The simulation's virtual time.
    public let clock: VirtualClock
    /// ``clock`` for ResilienceKit's stages, with the simulation's start as its origin.
    public let resilienceClock: ResilienceClock
    /// The event trace (recorded when the simulation was created with `recordsTrace: true`).
    public let trace: SimulationTrace

    /// Creates a simulation.
    /// - Parameters:
    ///   - seed: The seed of every random stream (``random(stream:)``) and of the simulated servers.
    ///   - recordsTrace: Whether ``trace`` keeps every event (for reproducibility checks and debugging);
    ///     its digest is kept either way.
    public init(seed: UInt64, recordsTrace: Bool = false) {
        self.seed = seed
        executor = SimulationExecutor()
        clock = VirtualClock()
        resilienceClock = ResilienceClock(clock, origin: .zero)
        trace = SimulationTrace(clock: clock, records: recordsTrace)
    }

    /// The current virtual instant, as ResilienceKit's stages see it.
    public var now: ResilienceInstant { ResilienceInstant(offset: clock.now.offset) }

    /// A random source for one consumer (`stream` names it: one per client, one for the server, …), derived
    /// from ``seed`` so that adding a consumer does not change the numbers another one draws.
    public func random(stream: UInt64) -> SharedRandomSource {
        SharedRandomSource(seed: Self.derive(seed, stream))
    }

    /// A random generator for one consumer, derived from ``seed`` like ``random(stream:)``.
    public func generator(stream: UInt64) -> PseudoRandomGenerator {
        PseudoRandomGenerator(seed: Self.derive(seed, stream))
    }

    /// Runs `body` on the simulation's executor and virtual clock until it returns, and returns its result.
    ///
    /// The calling thread drives the simulation (it blocks until the body finishes, which takes as long as
    /// the work in it, never as long as the simulated time). Call it once per simulation.
    /// - Parameters:
    ///   - timeLimit: When set, the body's task is cancelled once virtual time would pass this offset from
    ///     the start; the run goes on until the body reacts to the cancellation.
    ///   - body: The simulated system: create clients, servers and pipelines inside it.
    /// - Throws: What `body` throws; ``SimulationError/stalled(at:)`` when every task waits for something
    ///   outside the simulation; ``SimulationError/escapedExecutor(jobs:)`` when work left the executor.
    public func run<Result: Sendable>(
        timeLimit: Duration? = nil, _ body: @escaping @Sendable () async throws -> Result
    ) throws -> Result {
        let outcome = Mutex<Swift.Result<Result, any Error>?>(nil)
        // Set once `outcome` holds the result: checked after every drain without taking the lock.
        let finished = Atomic<Bool>(false)
        executor.setDriver(true)
        defer { executor.setDriver(false) }
        let task = Task(executorPreference: executor) {
            let result: Swift.Result<Result, any Error>
            do { result = .success(try await body()) } catch { result = .failure(error) }
            outcome.withLock { $0 = result }
            finished.store(true, ordering: .releasing)
        }
        let limit = timeLimit.map { VirtualClock.Instant(offset: $0) }
        let limitNanoseconds = limit.map(VirtualClock.nanoseconds)
        var cancelled = false
        while true {
            executor.drain()
            if finished.load(ordering: .acquiring), let result = outcome.withLock({ $0 }) {
                let escaped = executor.foreignEnqueues
                if escaped > 0 { throw SimulationError.escapedExecutor(jobs: escaped) }
                return try result.get()
            }
            if clock.wakeNext(notAfterNanoseconds: cancelled ? nil : limitNanoseconds) { continue }
            if let limit, !cancelled, clock.nextDeadline != nil {
                clock.advance(to: limit)
                cancelled = true
                task.cancel()
                continue
            }
            throw SimulationError.stalled(at: now)
        }
    }

    /// SplitMix64 of the seed mixed with the stream number.
    static func derive(_ seed: UInt64, _ stream: UInt64) -> UInt64 {
        var value = seed &+ 0x9E37_79B9_7F4A_7C15 &* (stream &+ 1)
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

/// Why a ``Simulation`` run could not finish deterministically.
public enum SimulationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No job could run and nobody slept on the virtual clock, yet the body had not returned: it waits for
    /// something outside the simulation (a real timer, a real socket, a task on another executor).
    case stalled(at: ResilienceInstant)
    /// Jobs reached the simulation's executor from other threads: some work ran outside the simulation,
    /// so the run is not guaranteed to be reproducible.
    case escapedExecutor(jobs: Int)

    /// A sentence for logs and test failures.
    public var description: String {
        switch self {
        case .stalled(let instant):
            "the simulation stalled at \(instant): every task waits for something outside the simulation"
        case .escapedExecutor(let jobs):
            "\(jobs) job(s) reached the simulation from another thread: work escaped the simulation's executor"
        }
    }
}
