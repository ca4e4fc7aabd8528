import Foundation
import Synchronization

/// A server for simulations: a first-in, first-out queue in front of a fixed number of workers, with
/// failure modes scheduled in virtual time.
///
/// Its capacity is `workers / mean service time` requests per second. A request that arrives when
/// ``Configuration/queueLimit`` requests already wait is rejected at once with `503`. A worker serves one
/// request at a time and finishes what it started even when the client stopped waiting, as a real server
/// does: that wasted work is what keeps a retry storm going. Reach it through ``SimulatedHTTPTransport`` so
/// that the code under test is the code an app runs. All of its randomness comes from the simulation's seed.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public final class SimulatedServer: Sendable {
    /// The shape of the server.
    public struct Configuration: Hashable, Sendable {
        /// Requests served at the same time.
        public var workers: Int
        /// Requests allowed to wait for a worker; one more is rejected with `503` at once.
        public var queueLimit: Int
        /// How long one request keeps a worker busy.
        public var serviceTime: LatencyDistribution
        /// The network's one-way delay, added on the way in and on the way back.
        public var networkDelay: LatencyDistribution
        /// Failure windows; when several cover an instant, all apply (an outage wins).
        public var faults: [SimulatedFault]
        /// The width of one bucket of ``Statistics/buckets``.
        public var bucketWidth: Duration
        /// The stream number (see ``Simulation/random(stream:)``) of the server's randomness.
        public var randomStream: UInt64
        /// The body of every successful response.
        public var successBody: Data

        /// Creates a configuration.
        /// - Parameters:
        ///   - workers: Requests served at the same time (at least 1).
        ///   - queueLimit: Requests allowed to wait (at least 0).
        ///   - serviceTime: How long one request keeps a worker busy.
        ///   - networkDelay: One-way network delay.
        ///   - faults: Failure windows.
        ///   - bucketWidth: The width of one statistics bucket.
        ///   - randomStream: The stream number of the server's randomness.
        ///   - successBody: The body of every successful response.
        public init(
            workers: Int = 30, queueLimit: Int = 100_000,
            serviceTime: LatencyDistribution = .constant(.milliseconds(100)),
            networkDelay: LatencyDistribution = .constant(.zero), faults: [SimulatedFault] = [],
            bucketWidth: Duration = .seconds(1), randomStream: UInt64 = 0x5E4E_4E4, successBody: Data = Data()
        ) {
            self.workers = max(1, workers)
            self.queueLimit = max(0, queueLimit)
            self.serviceTime = serviceTime
            self.networkDelay = networkDelay
            self.faults = faults
            self.bucketWidth = bucketWidth > .zero ? bucketWidth : .seconds(1)
            self.randomStream = randomStream
            self.successBody = successBody
        }

        /// Requests per second the workers can serve on average.
        public var capacity: Double {
            Double(workers) / LatencyDistribution.seconds(serviceTime.mean)
        }
    }

    /// What the server saw in one bucket of time.
    public struct Bucket: Hashable, Sendable {
        /// Requests that arrived.
        public var arrivals = 0
        /// Requests answered with a 2xx status (counted when the answer was ready).
        public var succeeded = 0
        /// Requests answered with any other status or refused (counted when the answer was ready).
        public var failed = 0
        /// Requests rejected at arrival (outage, full queue, rate limit).
        public var rejected = 0
        /// Requests that arrived while their client was told to wait (`Retry-After`).
        public var early = 0
    }

    /// Totals and a time series.
    public struct Statistics: Hashable, Sendable {
        /// Every request that arrived.
        public var arrivals = 0
        /// Requests answered with a 2xx status.
        public var succeeded = 0
        /// Requests answered with another status or refused.
        public var failed = 0
        /// Requests rejected at arrival.
        public var rejected = 0
        /// Requests that arrived while their client was told to wait.
        public var earlyRequests = 0
        /// The longest the queue got.
        public var maximumQueue = 0
        /// One entry per ``Configuration/bucketWidth`` from the simulation's start.
        public var buckets: [Bucket] = []
    }

    /// How a request ends, decided when it arrives.
    enum Reply {
        case response(HTTPResponse, ready: Duration)
        case refused(ready: Duration)
    }

    private struct ClientLimit {
        var windowStart: Duration = .zero
        var count = 0
        var blockedUntil: Duration = .zero
    }

    private struct State: ~Copyable {
        var generator: PseudoRandomGenerator
        /// When each worker is next free, in attoseconds from the simulation's start (a binary min-heap).
        var workerFree: [Int128]
        /// The start times of accepted requests not yet started, in attoseconds (nondecreasing: first in,
        /// first out).
        var waiting: [Int128] = []
        var waitingHead = 0
        var statistics = Statistics()
        var clients: [String: ClientLimit] = [:]
        var sequence: UInt64 = 0
    }

    /// The configuration the server was created with.
    public let configuration: Configuration
    /// The simulation's clock.
    public let clock: VirtualClock
    private let trace: SimulationTrace
    private let state: Mutex<State>
    private let ok: HTTPResponse

    /// Creates a server in `simulation`.
    /// - Parameters:
    ///   - simulation: The simulation whose clock, seed and trace the server uses.
    ///   - configuration: The server's shape and failure windows.
    public init(simulation: Simulation, configuration: Configuration) {
        self.configuration = configuration
        ok = HTTPResponse(status: 200, body: configuration.successBody)
        clock = simulation.clock
        trace = simulation.trace
        state = Mutex(
            State(
                generator: simulation.generator(stream: configuration.randomStream),
                workerFree: Array(repeating: 0, count: configuration.workers)))
    }

    /// What the server has seen so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Samples one one-way network delay.
    func networkDelay() -> Duration {
        if case .constant(let value) = configuration.networkDelay { return value }
        return state.withLock { configuration.networkDelay.sample(using: &$0.generator) }
    }

    /// Admits `request` arriving now and decides its answer and when it is ready.
    func accept(_ request: HTTPRequest) -> Reply {
        let now = clock.now.offset
        let reply = state.withLock { state -> Reply in
            state.sequence &+= 1
            let bucket = bucketIndex(now, &state.statistics)
            state.statistics.arrivals += 1
            state.statistics.buckets[bucket].arrivals += 1
            let reply = decide(request, now: now, state: &state, bucket: bucket)
            let ready: Duration
            let success: Bool
            switch reply {
            case .response(let response, let at):
                ready = at
                success = response.isSuccess
            case .refused(let at):
                ready = at
                success = false
            }
            let readyBucket = bucketIndex(ready, &state.statistics)
            if success {
                state.statistics.succeeded += 1
                state.statistics.buckets[readyBucket].succeeded += 1
            } else {
                state.statistics.failed += 1
                state.statistics.buckets[readyBucket].failed += 1
            }
            return reply
        }
        return reply
    }

    private func decide(_ request: HTTPRequest, now: Duration, state: inout State, bucket: Int) -> Reply {
        var failure: (probability: Double, status: Int)?
        var slow: (probability: Double, extra: LatencyDistribution)?
        var limit: (perSecond: Int, retryAfter: Duration)?
        var stallEnd: Duration?
        for fault in configuration.faults where fault.covers(now) {
            switch fault.kind {
            case .outage(let status):
                state.statistics.rejected += 1
                state.statistics.buckets[bucket].rejected += 1
                record(state.sequence, status: status ?? 0)
                return status.map { .response(HTTPResponse(status: $0), ready: now) } ?? .refused(ready: now)
            case .stall: stallEnd = max(stallEnd ?? fault.end, fault.end)
            case .brownout(let probability, let status): failure = (probability, status)
            case .rateLimit(let perSecond, let retryAfter): limit = (perSecond, retryAfter)
            case .slowResponses(let probability, let extra): slow = (probability, extra)
            }
        }
        if let limit, let response = rateLimit(request, now: now, limit: limit, state: &state, bucket: bucket) {
            record(state.sequence, status: 429)
            return .response(response, ready: now)
        }
        // Retire waiting requests that have started by now, then check the queue's room.
        let arrival = now.attosecondCount
        while state.waitingHead < state.waiting.count, state.waiting[state.waitingHead] <= arrival {
            state.waitingHead += 1
        }
        if state.waitingHead > 4096, state.waitingHead * 2 > state.waiting.count {
            state.waiting.removeFirst(state.waitingHead)
            state.waitingHead = 0
        }
        let queued = state.waiting.count - state.waitingHead
        if queued >= configuration.queueLimit {
            state.statistics.rejected += 1
            state.statistics.buckets[bucket].rejected += 1
            record(state.sequence, status: 503)
            return .response(HTTPResponse(status: 503), ready: now)
        }
        var start = max(arrival, state.workerFree[0])
        if let stallEnd, start < stallEnd.attosecondCount { start = stallEnd.attosecondCount }
        for fault in configuration.faults where fault.kind == .stall && fault.covers(Duration(attosecondCount: start)) {
            start = max(start, fault.end.attosecondCount)
        }
        if start > arrival {
            state.waiting.append(start)
            state.statistics.maximumQueue = max(state.statistics.maximumQueue, queued + 1)
        }
        var service = configuration.serviceTime.sample(using: &state.generator).attosecondCount
        if let slow, LatencyDistribution.unit(&state.generator) < slow.probability {
            service += slow.extra.sample(using: &state.generator).attosecondCount
        }
        let finish = Duration(attosecondCount: start + service)
        Self.replaceTop(&state.workerFree, with: start + service)
        if let failure, LatencyDistribution.unit(&state.generator) < failure.probability {
            record(state.sequence, status: failure.status)
            return .response(HTTPResponse(status: failure.status), ready: finish)
        }
        record(state.sequence, status: 200)
        return .response(ok, ready: finish)
    }

    private func rateLimit(
        _ request: HTTPRequest, now: Duration, limit: (perSecond: Int, retryAfter: Duration), state: inout State,
        bucket: Int
    ) -> HTTPResponse? {
        let client = request.headers["X-Client-ID"] ?? ""
        var entry = state.clients[client] ?? ClientLimit()
        defer { state.clients[client] = entry }
        if now < entry.blockedUntil {
            state.statistics.earlyRequests += 1
            state.statistics.buckets[bucket].early += 1
            state.statistics.rejected += 1
            state.statistics.buckets[bucket].rejected += 1
            return Self.tooManyRequests(retryAfter: entry.blockedUntil - now)
        }
        if now - entry.windowStart >= .seconds(1) {
            entry.windowStart = now
            entry.count = 0
        }
        entry.count += 1
        guard entry.count > limit.perSecond else { return nil }
        let seconds = Self.wholeSecondsRoundedUp(limit.retryAfter)
        entry.blockedUntil = now + .seconds(seconds)
        state.statistics.rejected += 1
        state.statistics.buckets[bucket].rejected += 1
        return Self.tooManyRequests(retryAfter: .seconds(seconds))
    }

    private static func tooManyRequests(retryAfter: Duration) -> HTTPResponse {
        HTTPResponse(status: 429, headers: ["Retry-After": "\(wholeSecondsRoundedUp(retryAfter))"])
    }

    private static func wholeSecondsRoundedUp(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return attoseconds > 0 ? seconds + 1 : seconds
    }

    private func record(_ sequence: UInt64, status: Int) {
        trace.record(1, sequence, UInt64(status))
    }

    private func bucketIndex(_ offset: Duration, _ statistics: inout Statistics) -> Int {
        let index = max(0, Int(offset.ratio(to: configuration.bucketWidth)))
        if index >= statistics.buckets.count {
            statistics.buckets.append(contentsOf: repeatElement(Bucket(), count: index + 1 - statistics.buckets.count))
        }
        return index
    }

    /// Replaces the heap's smallest element and restores the heap.
    private static func replaceTop(_ heap: inout [Int128], with value: Int128) {
        heap[0] = value
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var best = left
            if left + 1 < heap.count, heap[left + 1] < heap[left] { best = left + 1 }
            guard heap[best] < heap[parent] else { return }
            heap.swapAt(best, parent)
            parent = best
        }
    }
}
