import Foundation
import ResilienceKit
import ResilienceTesting
import Synchronization

/// Many clients asking for the same few keys (a feed's first page, a popular profile), with and without
/// request coalescing. Each client sends GETs for keys drawn uniformly from a small set, with exponential
/// think times; the server answers each request after |N(50 ms, 10 ms)| and counts the requests it sees
/// and, per key, how many were in flight at once. With coalescing the clients share one `CoalescingTransport`
/// (as the clients of one process share their transport).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public struct CoalescingRun: Sendable {
    /// How many clients ask.
    public var clients: Int
    /// Requests each client sends.
    public var requestsPerClient: Int
    /// How many distinct keys they ask for.
    public var keys: Int
    /// Requests per second one client offers.
    public var ratePerClient: Double

    /// Creates the run: 100 clients × 50 requests in full mode (40 × 20 in quick mode), 10 keys.
    ///
    /// - Parameters:
    ///   - mode: The run's size.
    ///   - parameters: `--rate-per-client` (default 10 requests/s).
    public init(_ mode: RunMode, _ parameters: ScenarioParameters) {
        clients = mode == .full ? 100 : 40
        requestsPerClient = mode == .full ? 50 : 20
        keys = 10
        ratePerClient = parameters.ratePerClient ?? 10
    }

    /// What one run measured.
    public struct Result: Sendable {
        /// Requests the clients sent.
        public var callerRequests: Int
        /// Requests the server received.
        public var upstreamRequests: Int
        /// Requests that got a `200`.
        public var succeeded: Int
        /// Caller requests sent while the server had a request for their key in flight: those a coalescer can
        /// answer without a request of their own.
        public var foundInFlight: Int
        /// The most requests for one key the server had in flight at once.
        public var maxInFlightPerKey: Int
        /// Each caller request's latency, sorted.
        public var latencies: [Duration]

        /// Upstream requests per caller request.
        public var upstreamPerCaller: Double { Double(upstreamRequests) / Double(max(callerRequests, 1)) }
        /// The share of caller requests that succeeded.
        public var successRate: Double { Double(succeeded) / Double(max(callerRequests, 1)) }
        /// Upstream requests per caller request that found no request for its key in flight: 1 when every
        /// request that could join one did.
        public var upstreamPerUnjoinable: Double {
            Double(upstreamRequests) / Double(max(callerRequests - foundInFlight, 1))
        }

        /// The latency at quantile `q`, in seconds.
        public func latency(at q: Double) -> Double {
            guard !latencies.isEmpty else { return .nan }
            return latencies[min(latencies.count - 1, Int(Double(latencies.count) * q))].seconds
        }
    }

    /// Runs the clients with `seed`, through a coalescing transport when `coalesces`.
    public func measure(coalesces: Bool, seed: UInt64) -> Result {
        let simulation = Simulation(seed: seed)
        let server = KeyedServer(simulation: simulation)
        let transport: any HTTPTransport =
            coalesces
            ? CoalescingTransport(wrapping: server, flights: SingleFlight(taskExecutor: simulation.executor)) : server
        let clock = simulation.resilienceClock
        let (clients, requests, keys) = (clients, requestsPerClient, keys)
        let think = LatencyDistribution.exponential(mean: .seconds(1 / ratePerClient))
        let outcomes = try? simulation.run(timeLimit: .seconds(3600)) {
            await withTaskGroup(of: [(ok: Bool, latency: Duration, joinable: Bool)].self) { group in
                for client in 0..<clients {
                    var generator = simulation.generator(stream: UInt64(client) + 1)
                    group.addTask {
                        var outcomes: [(ok: Bool, latency: Duration, joinable: Bool)] = []
                        for _ in 0..<requests {
                            try? await simulation.clock.sleep(for: think.sample(using: &generator))
                            let key = Int.random(in: 0..<keys, using: &generator)
                            let request = HTTPRequest(url: URL(string: "https://feed.example/items/\(key)")!)
                            let context = ResilienceContext(key: "feed", clock: clock)
                            let start = clock.now()
                            let joinable = server.isInFlight(request.url.path)
                            let response = try? await transport.send(request, context: context)
                            outcomes.append((response?.status == 200, start.duration(to: clock.now()), joinable))
                        }
                        return outcomes
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
        }
        let all = outcomes ?? []
        return Result(
            callerRequests: clients * requests, upstreamRequests: server.requests,
            succeeded: all.filter(\.ok).count, foundInFlight: all.filter(\.joinable).count,
            maxInFlightPerKey: server.maxInFlightPerKey, latencies: all.map(\.latency).sorted())
    }
}

/// The scenario's server: answers every GET `200` after |N(50 ms, 10 ms)|, counting requests per key.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
final class KeyedServer: HTTPTransport {
    private struct State {
        var requests = 0
        var inFlight: [String: Int] = [:]
        var maxInFlightPerKey = 0
        var generator: PseudoRandomGenerator
    }

    private let clock: VirtualClock
    private let state: Mutex<State>
    private static let service = LatencyDistribution.absoluteNormal(
        mean: .milliseconds(50), standardDeviation: .milliseconds(10))

    init(simulation: Simulation) {
        clock = simulation.clock
        state = Mutex(State(generator: simulation.generator(stream: 0xC0A1)))
    }

    var requests: Int { state.withLock { $0.requests } }
    var maxInFlightPerKey: Int { state.withLock { $0.maxInFlightPerKey } }
    /// Whether a request for the key of path `key` is in flight now.
    func isInFlight(_ key: String) -> Bool { state.withLock { ($0.inFlight[key] ?? 0) > 0 } }

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        let key = request.url.path
        let delay = state.withLock { state in
            state.requests += 1
            state.inFlight[key, default: 0] += 1
            state.maxInFlightPerKey = max(state.maxInFlightPerKey, state.inFlight[key] ?? 0)
            return Self.service.sample(using: &state.generator)
        }
        defer { state.withLock { $0.inFlight[key, default: 1] -= 1 } }
        try await clock.sleep(for: delay)
        return HTTPResponse(status: 200, body: Data(key.utf8))
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension StormReport {
    /// The coalescing scenario: the same clients with and without `CoalescingTransport`; goals: with it, the
    /// server never has two requests for one key in flight (upstream requests ≤ distinct keys in flight),
    /// every request sent while its key was in flight upstream joins that request (so the server sees no
    /// more requests than those that found none in flight, at any rate: how many that is depends on how
    /// often callers overlap, not on the coalescer), every request succeeds, and the p99 latency is no worse
    /// than without.
    mutating func addCoalescing() {
        let run = CoalescingRun(mode, parameters)
        let perSeed = perSeed { seed in
            (run.measure(coalesces: false, seed: seed), run.measure(coalesces: true, seed: seed))
        }
        let plain = perSeed.map(\.0)
        let coalesced = perSeed.map(\.1)
        var rows: [[String]] = []
        for (name, results) in [("no coalescing", plain), ("CoalescingTransport", coalesced)] {
            rows.append([
                name, Self.cell(SeedSummary(results.map(\.upstreamPerCaller)), Self.ratio),
                Self.cell(
                    SeedSummary(results.map { Double($0.foundInFlight) / Double(max($0.callerRequests, 1)) }),
                    Self.percent),
                Self.cell(
                    SeedSummary(results.map { Double($0.maxInFlightPerKey) }), { FixedFormat.number($0, decimals: 0) }),
                Self.cell(SeedSummary(results.map(\.successRate)), Self.percent),
                Self.cell(SeedSummary(results.map { $0.latency(at: 0.5) }), Self.milliseconds),
                Self.cell(SeedSummary(results.map { $0.latency(at: 0.99) }), Self.milliseconds),
            ])
        }
        let strategy = "CoalescingTransport"
        goals.append(
            Goal(
                name: "Coalescing: upstream requests in flight ≤ distinct keys in flight (≤ 1 per key)",
                strategy: strategy, target: "≤ 1",
                summary: SeedSummary(coalesced.map { Double($0.maxInFlightPerKey) }) { $0 <= 1 },
                format: { FixedFormat.number($0, decimals: 0) }))
        goals.append(
            Goal(
                name:
                    "Coalescing: every request sent while its key is in flight upstream joins it "
                    + "(upstream requests ≤ those that found none)",
                strategy: strategy, target: "≤ 1×",
                summary: SeedSummary(coalesced.map(\.upstreamPerUnjoinable)) { $0 <= 1 }, format: Self.ratio))
        goals.append(
            Goal(
                name: "Coalescing: every caller request succeeds", strategy: strategy, target: "100 %",
                summary: SeedSummary(coalesced.map(\.successRate)) { $0 >= 1 }, format: Self.percent))
        let p99 = zip(coalesced, plain).map { $0.latency(at: 0.99) - $1.latency(at: 0.99) }
        goals.append(
            Goal(
                name: "Coalescing: p99 latency ≤ no coalescing's", strategy: strategy, target: "≤ +0 ms",
                summary: SeedSummary(p99) { $0 <= 0 }, format: { FixedFormat.number($0 * 1000, decimals: 1) + " ms" }))
        tables.append(
            ReportTable(
                title: "Request coalescing",
                notes: [
                    "\(run.clients) clients × \(run.requestsPerClient) GETs for \(run.keys) keys (uniform), exponential think time at \(FixedFormat.number(run.ratePerClient, decimals: 1)) requests/s per client; server |N(50 ms, 10 ms)|, unlimited workers",
                    "upstream/caller: requests the server received per request the clients sent; found key in flight: the share of the clients' requests sent while the server had one for the same key in flight (with coalescing, each of them joins that one)",
                ],
                header: ["strategy", "upstream/caller", "found key in flight", "max in flight per key"]
                    + ["success", "p50", "p99"],
                rows: rows))
    }
}
