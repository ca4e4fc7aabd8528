import Foundation
import ResilienceKit
import ResilienceTesting
import Synchronization

/// Open-loop traffic: each client starts requests at Poisson times, whatever happened to the previous
/// ones, and sends them through `ResilientTransport` over its own pipeline to a ``SimulatedServer`` — the
/// stack an app runs, on the deterministic runtime.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public struct TrafficRun: Sendable {
    /// The server's shape and failure windows.
    public var server: SimulatedServer.Configuration
    /// Requests per second offered by all clients together.
    public var offeredPerSecond: Double
    /// How long the clients start requests.
    public var duration: Duration
    /// How long the run may go on after the last start for the last requests to end.
    public var drain: Duration = .seconds(400)
    /// Requests per second one client offers, for every row; `nil`: the row's traffic profile decides.
    public var ratePerClient: Double?
    /// A quota per client that the server advertises in `RateLimit` fields; `nil`: none.
    var quota: QuotaServer.Quota?

    /// Creates a run.
    ///
    /// - Parameters:
    ///   - server: The server's shape and failure windows.
    ///   - offeredPerSecond: Requests per second offered by all clients together.
    ///   - duration: How long the clients start requests.
    ///   - ratePerClient: Requests per second one client offers; `nil`: the row's traffic profile decides.
    public init(
        server: SimulatedServer.Configuration, offeredPerSecond: Double, duration: Duration,
        ratePerClient: Double? = nil
    ) {
        self.server = server
        self.offeredPerSecond = offeredPerSecond
        self.duration = duration
        self.ratePerClient = ratePerClient
    }

    /// How many clients share the offered load for `profile`, each with its own pipeline: the offered load
    /// divided by the per-client rate (`ratePerClient`, else the profile's), rounded, at least one.
    public func clients(_ profile: TrafficProfile) -> Int {
        max(1, Int((offeredPerSecond / (ratePerClient ?? profile.ratePerClient)).rounded()))
    }

    /// The requests per second one client of `profile` really offers: the offered load ÷ ``clients(_:)``.
    public func rate(_ profile: TrafficProfile) -> Double { offeredPerSecond / Double(clients(profile)) }

    /// Runs `strategy` with `seed`.
    public func measure(_ strategy: Strategy, seed: UInt64) -> Measurement {
        let simulation = Simulation(seed: seed)
        let server = SimulatedServer(simulation: simulation, configuration: server)
        let seconds = Int(duration.seconds.rounded(.up))
        let recorder = Recorder(seconds: seconds)
        let clients = clients(strategy.profile)
        let rate = rate(strategy.profile)
        let duration = duration
        let clock = simulation.resilienceClock
        let audit = RetryAfterAudit.Counter()
        let transport = SimulatedHTTPTransport(server: server)
        let quotaServer = QuotaServer(quota: quota, simulation: simulation)
        let outcome = Result {
            try simulation.run(timeLimit: duration + drain) {
                // Each client calls `keysPerClient` keys (endpoints) of one host, one pipeline per key; the preset
                // rows' pipelines share the host's scope (one budget, one breaker), as an app's would.
                let transports = (0..<clients).map { client in
                    let base = AttemptTally(
                        server: transport, quota: quotaServer,
                        audit: RetryAfterAudit(simulation: simulation, counter: audit, client: client),
                        recorder: recorder)
                    return strategy.pipelines(
                        clock: clock, random: simulation.random(stream: UInt64(client) + 1), keys: Self.keysPerClient
                    ).map { pipeline in ResilientTransport(wrapping: base, pipeline: pipeline) }
                }
                // The keys' URLs are parsed once: every client's requests share them (parsing one costs about
                // 3,500 instructions, a few percent of a run of 10 requests per client).
                let urls = Self.keyNames.map { URL(string: "https://api.example/\($0)")! }
                let requests = transports.indices.map { client in
                    transports[client].indices.map { key in
                        var request = HTTPRequest(url: urls[key])
                        request.headers.add(name: "X-Client-ID", value: "\(client)")
                        return request
                    }
                }
                // One pool of lanes for every client: a lane that finishes a request takes the next one of any
                // client, so the lanes (their tasks and async frames) are as many as the requests in flight at
                // once, not a few per client, and the one that takes a request is the one that ran last.
                let lanes = RequestLanes<ClientArrivals.Request>()
                await withDiscardingTaskGroup { group in
                    group.addTask {
                        await Self.forEachClient(0..<clients) { client in
                            let arrivals = ClientArrivals(
                                client: client, gaps: LatencyDistribution.exponential(mean: .seconds(1.0 / rate)),
                                generator: simulation.generator(stream: 1_000_000 + UInt64(client)),
                                keyChoice: simulation.generator(stream: 3_000_000 + UInt64(client)),
                                keys: transports[client].count, until: duration, recorder: recorder, lanes: lanes)
                            // The clock starts every request a waiting lane can take (`ClientArrivals.step`)
                            // without waking this task: it wakes when no lane was waiting, or when the arrivals
                            // are over.
                            while let next = arrivals.next {
                                let instant = VirtualClock.Instant(offset: next)
                                let step = arrivals.step
                                guard (try? await simulation.clock.sleep(until: instant, relaying: step)) != nil
                                else { break }
                                guard let request = arrivals.takeUnplaced() else { continue }
                                lanes.startLane(for: request)
                                arrivals.advance()
                            }
                        }
                        lanes.close()
                    }
                    // This task starts a lane for every request no lane was waiting for (only the group's task
                    // may add to it), right after the client that asked: nothing runs in between.
                    while let request = await lanes.nextUnplaced() {
                        group.addTask {
                            await lanes.run(first: request) { request in
                                let context = ResilienceContext(key: Self.keyNames[request.key], clock: clock)
                                let response = try? await transports[request.client][request.key].send(
                                    requests[request.client][request.key], context: context)
                                recorder.finished(
                                    startedAt: request.start, at: simulation.clock.now.offset,
                                    succeeded: response?.isSuccess == true)
                            }
                        }
                    }
                }
            }
        }
        if case .failure(let error) = outcome {
            // A simulation that stalls or escapes its executor is a bug in the simulator, not a result.
            fatalError("simulation failed: \(error)")
        }
        let statistics = server.statistics
        var arrivals = statistics.buckets.map(\.arrivals)
        if arrivals.count < seconds { arrivals += Array(repeating: 0, count: seconds - arrivals.count) }
        return recorder.measurement(arrivals: arrivals, early: statistics.earlyRequests, sentEarly: audit.violations)
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension TrafficRun {
    /// The keys (endpoints) of the one host each client calls, each request to one of them at random: the
    /// client's rate is spread over them, and a preset row's keys share the host's ``PresetScope``.
    static let keyNames = ["jobs", "search", "profile", "saved"]
    /// How many keys each client calls.
    static var keysPerClient: Int { keyNames.count }

    /// Runs `client` for every index of `clients` as child tasks in a tree of discarding groups of at most 64
    /// children each: a task group unlinks every finished child from a list of its siblings, so one flat group
    /// of n clients costs O(n²) (`Docs/Simulation.md`, "Where the time goes").
    static func forEachClient(_ clients: Range<Int>, _ client: @escaping @Sendable (Int) async -> Void) async {
        let fanOut = 64
        await withDiscardingTaskGroup { group in
            guard clients.count > fanOut else {
                for index in clients { group.addTask { await client(index) } }
                return
            }
            let width = (clients.count + fanOut - 1) / fanOut
            for start in stride(from: clients.lowerBound, to: clients.upperBound, by: width) {
                let part = start..<min(start + width, clients.upperBound)
                group.addTask { await forEachClient(part, client) }
            }
        }
    }
}

/// One client's open-loop arrivals: when its next request starts (Poisson times) and which key it calls.
///
/// ``step()`` runs as the clock's step (`VirtualClock.sleep(until:relaying:)`) at each start: it does what the
/// client's task would have done had it woken there (records the start, picks the key, hands the request to a
/// waiting lane, draws the next start) in the same order, so the run's events are those of a client that
/// sleeps and wakes for every request. Touched only on the simulation's driving thread (by the clock's step
/// and the client's task, one after the other), hence `@unchecked Sendable`, and its state is exempt from the
/// run-time exclusivity checks (each access cost a call into the runtime, several per request).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class ClientArrivals: @unchecked Sendable {
    /// A started request: when it started, the index of its key and of its client.
    typealias Request = (start: Duration, key: Int, client: Int)

    private let client: Int

    private let gaps: LatencyDistribution
    @exclusivity(unchecked) private var generator: PseudoRandomGenerator
    @exclusivity(unchecked) private var keyChoice: PseudoRandomGenerator
    private let keys: Int
    private let end: Duration
    private let recorder: Recorder
    private let lanes: RequestLanes<Request>
    @exclusivity(unchecked) private var upcoming: Duration
    /// A request that started when no lane was waiting: the client's task starts a lane for it.
    @exclusivity(unchecked) private var unplaced: Request?

    init(
        client: Int, gaps: LatencyDistribution, generator: PseudoRandomGenerator, keyChoice: PseudoRandomGenerator,
        keys: Int, until end: Duration, recorder: Recorder, lanes: RequestLanes<Request>
    ) {
        self.client = client
        self.gaps = gaps
        self.generator = generator
        self.keyChoice = keyChoice
        self.keys = keys
        self.end = end
        self.recorder = recorder
        self.lanes = lanes
        upcoming = gaps.sample(using: &self.generator)
    }

    /// When the next request starts; `nil` once the client has started all of them.
    var next: Duration? { upcoming < end ? upcoming : nil }

    /// Starts the request due now. A waiting lane takes it, and the step returns when the next one starts
    /// (`nil`, waking the client's task, once there is none). With no lane waiting, it keeps the request for
    /// ``takeUnplaced()`` and returns `nil`: the client's task wakes, has a lane started and calls ``advance()``.
    func step() -> VirtualClock.Instant? {
        recorder.started(at: upcoming)
        let request = (start: upcoming, key: Int.random(in: 0..<keys, using: &keyChoice), client: client)
        guard lanes.handOff(request) else {
            unplaced = request
            return nil
        }
        advance()
        return next.map(VirtualClock.Instant.init(offset:))
    }

    /// The request no lane was waiting for, if any (once).
    func takeUnplaced() -> Request? {
        defer { unplaced = nil }
        return unplaced
    }

    /// Draws when the next request starts.
    func advance() { upcoming += gaps.sample(using: &generator) }
}

/// The clients' request lanes: child tasks that each run one request at a time and then, instead of ending,
/// wait for the next request of any client. Open-loop traffic needs a task per request in flight, but far fewer
/// are in flight at once than there are clients: a lane is created only when every lane is busy, so a request
/// costs a continuation resumption instead of creating and destroying a task (with its executor preference,
/// group record and the task allocator's slabs, several allocations each), and the lanes' tasks and async
/// frames stay few enough to stay in the processor's caches. The lane that finished last takes the next request.
///
/// Handing a request to a waiting lane enqueues that lane exactly where a new task's first job would have been
/// enqueued (at the end of the simulation's run queue), so the events, their order and the trace are the same
/// as with a task per request. A request no lane was waiting for goes to the task that owns the lanes' group
/// (``startLane(for:)``, ``nextUnplaced()``), which runs next and starts a lane: only bookkeeping runs before
/// the new lane's first job, as when the client's own task started it. Touched only on the simulation's driving
/// thread (by the clients' tasks, the lanes and the lanes' owner, one job at a time), hence `@unchecked
/// Sendable` and no run-time exclusivity checks.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class RequestLanes<Request: Sendable>: @unchecked Sendable {
    /// The lanes waiting for a request, the most recently finished last.
    @exclusivity(unchecked) private var waiting: [UnsafeContinuation<Request?, Never>] = []
    /// Requests no lane was waiting for, oldest first, until the lanes' owner takes them.
    @exclusivity(unchecked) private var unplaced: [Request] = []
    /// The lanes' owner, while it waits in ``nextUnplaced()``.
    @exclusivity(unchecked) private var owner: UnsafeContinuation<Request?, Never>?
    @exclusivity(unchecked) private var isClosed = false

    /// Hands `request` to a waiting lane; `false` when every lane is busy (``startLane(for:)``).
    func handOff(_ request: Request) -> Bool {
        guard let lane = waiting.popLast() else { return false }
        lane.resume(returning: request)
        return true
    }

    /// Asks the lanes' owner to start a lane for `request`, no lane being free.
    func startLane(for request: Request) {
        guard let owner else {
            unplaced.append(request)
            return
        }
        self.owner = nil
        owner.resume(returning: request)
    }

    /// The next request to start a lane for (with ``run(first:_:)``), in the order they were asked; `nil` once
    /// the lanes are closed and none is left.
    func nextUnplaced() async -> Request? {
        if !unplaced.isEmpty { return unplaced.removeFirst() }
        if isClosed { return nil }
        return await withUnsafeContinuation { owner = $0 }
    }

    /// Runs `serve` on `request`, then on every request handed to this lane, until ``close()``.
    func run(first request: Request, _ serve: (Request) async -> Void) async {
        var request = request
        while true {
            await serve(request)
            guard let next = await nextRequest() else { return }
            request = next
        }
    }

    /// No more requests: the waiting lanes and the owner's wait end now, the busy lanes when their request ends.
    func close() {
        isClosed = true
        let lanes = waiting
        waiting.removeAll()
        for lane in lanes { lane.resume(returning: nil) }
        if unplaced.isEmpty, let owner {
            self.owner = nil
            owner.resume(returning: nil)
        }
    }

    private func nextRequest() async -> Request? {
        if isClosed { return nil }
        return await withUnsafeContinuation { waiting.append($0) }
    }
}

/// Collects what the clients saw (on the simulation's one thread; the lock only satisfies `Sendable`).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class Recorder: Sendable {
    private struct State {
        var offered: [Int]
        var succeeded: [Int]
        var latencies: [Int64] = []
        var attempts = AttemptCounts()
    }

    private let state: Mutex<State>

    init(seconds: Int) {
        state = Mutex(
            State(offered: Array(repeating: 0, count: seconds), succeeded: Array(repeating: 0, count: seconds)))
    }

    func started(at offset: Duration) {
        state.withLock { state in
            let second = min(Int(offset.seconds), state.offered.count - 1)
            state.offered[second] += 1
        }
    }

    func finished(startedAt start: Duration, at end: Duration, succeeded: Bool) {
        guard succeeded else { return }
        state.withLock { state in
            let second = min(Int(start.seconds), state.succeeded.count - 1)
            state.succeeded[second] += 1
            let (seconds, attoseconds) = (end - start).components
            state.latencies.append(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        }
    }

    /// Counts one attempt that reached the transport below the pipeline: its 1-based number and whether it failed.
    func attemptEnded(number: Int, failed: Bool) {
        state.withLock { $0.attempts.record(number: number, failed: failed) }
    }

    func measurement(arrivals: [Int], early: Int, sentEarly: Int) -> Measurement {
        state.withLock { state in
            Measurement(
                offered: state.offered, succeeded: state.succeeded, arrivals: arrivals, earlyRequests: early,
                sentEarly: sentEarly, latencies: state.latencies.sorted(), attempts: state.attempts)
        }
    }
}

/// Everything between a client's `ResilientTransport` and the simulated server, in one layer: the server's
/// quota (``QuotaServer``), the client's audit of advertised waits (``RetryAfterAudit``), and the tally that
/// tells the run's ``Recorder`` every attempt's number (the pipeline's `ResilienceContext.attempt`) and whether
/// it failed (an error or a response that is not a success): the failures the server actually produced at each
/// attempt, which the brownout goal evaluates its bound at (``BrownoutBound``). It changes nothing on the way
/// through. The quota and the audit run synchronously inside it, in the order they would as transports of
/// their own (audit outside, quota inside), because every async layer costs an attempt two executor hops.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
struct AttemptTally: HTTPTransport {
    let server: SimulatedHTTPTransport
    let quota: QuotaServer
    let audit: RetryAfterAudit
    let recorder: Recorder

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        do {
            audit.sending()
            var response: HTTPResponse
            switch quota.admit(request) {
            case .unlimited:
                response = try await server.send(request, context: context)
            case .counted(let count, let windowEnd):
                response = try await server.send(request, context: context)
                quota.advertise(on: &response, count: count, windowEnd: windowEnd)
            case .refused(let refusal):
                response = refusal
            }
            audit.received(response)
            recorder.attemptEnded(number: context.attempt, failed: !response.isSuccess)
            return response
        } catch {
            recorder.attemptEnded(number: context.attempt, failed: true)
            throw error
        }
    }
}
