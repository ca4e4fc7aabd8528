import Foundation
import ResilienceKit

/// A server with a fixed number of concurrent slots in front of which a client places a concurrency limit:
/// the model of the adaptive and priority scenarios, simulated event by event on virtual time.
///
/// Requests arrive as a Poisson stream at the offered rate of the moment, each with a priority drawn from the
/// mix. The client's limit (none, a fixed bulkhead, or the real ``AdaptiveConcurrencyLimiter``, called
/// exactly as its stage calls it, without waiting) admits or rejects each one. The server runs at most
/// `slots(t)` requests at once and queues the rest first come first served, so latency grows with the queue;
/// each request's service takes 80–120 ms (uniform). A client gives up after ``timeout`` (its permit is
/// released as a drop) while the server still serves the abandoned request. When the slots fall, the requests
/// already running finish; new ones start only when fewer than the new number run.
struct ConcurrencyServerRun: Sendable {
    /// What stands between the clients and the server.
    enum Admission: Sendable {
        /// Everything is sent.
        case none
        /// A ``ConcurrencyLimiter`` of this many slots, rejecting when full.
        case bulkhead(Int)
        /// An ``AdaptiveConcurrencyLimiter``; `usesPriorities` false sends every request as default priority.
        case adaptive(AdaptiveConcurrencyLimiter.Configuration, usesPriorities: Bool)
    }

    /// The server's slots over time: `before` until `changeAt`, `after` until `restoreAt`, `before` again.
    var slotsBefore: Int
    var slotsAfter: Int
    var changeAt: Double = .infinity
    var restoreAt: Double = .infinity
    /// Offered requests per second from each instant on (sorted by instant; the first starts at 0).
    var offered: [(from: Double, rate: Double)]
    /// The shares of critical, default and sheddable requests.
    var mix: (critical: Double, default: Double, sheddable: Double) = (0, 1, 0)
    /// Seconds simulated.
    var duration: Double
    /// Seconds a client waits for its response before giving up.
    var timeout = 1.0
    /// The shortest and longest service, in seconds.
    var service: ClosedRange<Double> = 0.08...0.12
    /// Arrivals before this instant are not counted in the per-priority shares (the warm-up).
    var measuredFrom = 0.0
    /// Seconds between two samples of the limit.
    var sampleInterval = 0.25

    /// The slots at `time`.
    func slots(at time: Double) -> Int {
        time >= changeAt && time < restoreAt ? slotsAfter : slotsBefore
    }

    /// The offered rate at `time`.
    func rate(at time: Double) -> Double {
        offered.last { $0.from <= time }?.rate ?? 0
    }

    /// Requests per second the server completes at `time` when busy.
    func capacity(at time: Double) -> Double {
        Double(slots(at: time)) / ((service.lowerBound + service.upperBound) / 2)
    }

    /// One request.
    private struct Request {
        var arrival: Double
        var priorityClass: Int
        var service: Double
        var counted: Bool
        var answered = false
        var permit: RateLimitPermit?
    }

    private enum EventKind: Int { case arrival, serviceDone, clientTimeout, sample, slotsChange }

    private struct Event: Comparable {
        var time: Double
        var sequence: Int
        var kind: EventKind
        var request: Int
        static func < (lhs: Event, rhs: Event) -> Bool {
            (lhs.time, lhs.sequence) < (rhs.time, rhs.sequence)
        }
    }

    /// Runs the model with `admission` and `seed`.
    func run(_ admission: Admission, seed: UInt64) -> ConcurrencyServerResult {
        var random = PseudoRandomGenerator(seed: seed)
        var events = EventHeap<Event>()
        var sequence = 0
        func schedule(_ time: Double, _ kind: EventKind, _ request: Int = -1) {
            sequence += 1
            events.push(Event(time: time, sequence: sequence, kind: kind, request: request))
        }
        let adaptive: AdaptiveConcurrencyLimiter?
        let bulkhead: ConcurrencyLimiter?
        var usesPriorities = false
        switch admission {
        case .none: (adaptive, bulkhead) = (nil, nil)
        case .bulkhead(let slots): (adaptive, bulkhead) = (nil, ConcurrencyLimiter(.limit(slots, queued: 0)))
        case .adaptive(let configuration, let priorities):
            (adaptive, bulkhead) = (AdaptiveConcurrencyLimiter(configuration), nil)
            usesPriorities = priorities
        }
        var result = ConcurrencyServerResult(seconds: Int(duration.rounded(.up)))
        var requests: [Request] = []
        requests.reserveCapacity(Int(duration * (offered.map(\.rate).max() ?? 0) * 1.1))
        var serverQueue = Deque()
        var running = 0
        func instant(_ time: Double) -> ResilienceInstant {
            .origin.advanced(by: .nanoseconds(Int64(time * 1e9)))
        }
        func startWaiting(at time: Double) {
            while running < slots(at: time), let next = serverQueue.popFirst() {
                running += 1
                schedule(time + requests[next].service, .serviceDone, next)
            }
        }
        func release(_ index: Int, _ outcome: RateLimitOutcome, at time: Double) {
            guard let permit = requests[index].permit else { return }
            adaptive?.complete(permit, outcome: outcome, now: instant(time))
            bulkhead?.release(permit, outcome: outcome, now: instant(time))
        }
        func nextArrival(after time: Double) -> Double {
            let rate = max(self.rate(at: time), 1e-9)
            let gap = -log(1 - Double.random(in: 0..<1, using: &random)) / rate
            // A rate that changes before the next arrival restarts the draw at the change.
            if let change = offered.first(where: { $0.from > time }), time + gap > change.from {
                return change.from + 1e-9
            }
            return time + gap
        }
        schedule(nextArrival(after: 0), .arrival)
        schedule(0, .sample)
        for change in [changeAt, restoreAt] where change.isFinite && change < duration {
            schedule(change, .slotsChange)
        }
        while let event = events.pop(), event.time < duration {
            let time = event.time
            let second = Int(time)
            switch event.kind {
            case .arrival:
                schedule(nextArrival(after: time), .arrival)
                let draw = Double.random(in: 0..<1, using: &random)
                let priorityClass = draw < mix.critical ? 2 : draw < mix.critical + mix.default ? 1 : 0
                let service = Double.random(in: service, using: &random)
                result.serviceTimes.append(service)
                let index = requests.count
                let counted = time >= measuredFrom
                requests.append(
                    Request(arrival: time, priorityClass: priorityClass, service: service, counted: counted))
                result.offered[second] += 1
                if counted { result.offeredByClass[priorityClass] += 1 }
                let decision: RateLimitDecision
                if let adaptive {
                    let priority: RequestPriority =
                        usesPriorities ? [.sheddable, .default, .critical][priorityClass] : .default
                    decision = adaptive.tryAcquire(now: instant(time), priority: priority)
                } else if let bulkhead {
                    decision = bulkhead.tryAcquire(now: instant(time))
                } else {
                    decision = .admitted(RateLimitPermit(admittedAt: instant(time)))
                }
                guard case .admitted(let permit) = decision else {
                    result.rejected[second] += 1
                    if counted { result.rejectedByClass[priorityClass] += 1 }
                    break
                }
                requests[index].permit = permit
                serverQueue.append(index)
                schedule(time + timeout, .clientTimeout, index)
                startWaiting(at: time)
            case .serviceDone:
                running -= 1
                let index = event.request
                if !requests[index].answered {
                    requests[index].answered = true
                    let latency = time - requests[index].arrival
                    result.latencies.append((time, latency))
                    result.succeeded[second] += 1
                    if requests[index].counted { result.succeededByClass[requests[index].priorityClass] += 1 }
                    release(index, .accepted, at: time)
                }
                startWaiting(at: time)
            case .clientTimeout:
                let index = event.request
                guard !requests[index].answered else { break }
                requests[index].answered = true
                result.timedOut[second] += 1
                release(index, .rejectedByBackend, at: time)
            case .sample:
                result.limits.append((time, Double(adaptive?.occupancy.limit ?? 0)))
                schedule(time + sampleInterval, .sample)
            case .slotsChange:
                startWaiting(at: time)
            }
        }
        return result
    }
}

/// What one run of ``ConcurrencyServerRun`` measured.
struct ConcurrencyServerResult: Sendable {
    var offered: [Int]
    var rejected: [Int]
    var succeeded: [Int]
    var timedOut: [Int]
    var offeredByClass = [0, 0, 0]
    var rejectedByClass = [0, 0, 0]
    var succeededByClass = [0, 0, 0]
    /// Each answered request's completion instant and latency, in seconds.
    var latencies: [(time: Double, latency: Double)] = []
    /// The limit at each sample instant (0 without an adaptive limiter).
    var limits: [(time: Double, limit: Double)] = []
    /// Every service time drawn: the round trips of an unloaded server.
    var serviceTimes: [Double] = []

    init(seconds: Int) {
        offered = Array(repeating: 0, count: seconds + 1)
        rejected = offered
        succeeded = offered
        timedOut = offered
    }

    /// The `quantile` of the latencies of requests answered in `window`.
    func latency(at quantile: Double, in window: Range<Double>) -> Double {
        Self.quantile(latencies.filter { window.contains($0.time) }.map(\.latency), quantile)
    }

    /// The round trip of an unloaded server at `quantile` (its service time).
    func unloaded(at quantile: Double) -> Double { Self.quantile(serviceTimes, quantile) }

    /// Successes per second over whole seconds `window`.
    func goodput(_ window: Range<Int>) -> Double {
        Double(window.reduce(0) { $0 + succeeded[$1] }) / Double(max(window.count, 1))
    }

    /// The share of requests offered in `window` that were rejected.
    func rejectedShare(_ window: Range<Int>) -> Double {
        let offeredCount = window.reduce(0) { $0 + offered[$1] }
        return Double(window.reduce(0) { $0 + rejected[$1] }) / Double(max(offeredCount, 1))
    }

    /// The share of a priority class's requests that succeeded (0 sheddable, 1 default, 2 critical).
    func success(ofClass priorityClass: Int) -> Double {
        Double(succeededByClass[priorityClass]) / Double(max(offeredByClass[priorityClass], 1))
    }

    /// The share of a priority class's requests the limiter rejected.
    func rejection(ofClass priorityClass: Int) -> Double {
        Double(rejectedByClass[priorityClass]) / Double(max(offeredByClass[priorityClass], 1))
    }

    static func quantile(_ values: [Double], _ quantile: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * quantile).rounded(.down)))]
    }
}

/// A binary min-heap of events.
struct EventHeap<Element: Comparable> {
    private var items: [Element] = []

    mutating func push(_ item: Element) {
        items.append(item)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child] < items[parent] else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Element? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let first = items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < items.count && items[left] < items[smallest] { smallest = left }
            if right < items.count && items[right] < items[smallest] { smallest = right }
            guard smallest != parent else { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return first
    }
}

/// A first-in-first-out queue of request indices (an array and a read position, compacted as it drains).
struct Deque {
    private var items: [Int] = []
    private var head = 0

    mutating func append(_ item: Int) { items.append(item) }

    mutating func popFirst() -> Int? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head > 4096 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}
