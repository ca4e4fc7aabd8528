/// Client-side adaptive throttling (Google SRE book): rejects locally, with a probability that grows as
/// the backend rejects more of what it is sent.
///
/// Over a sliding window it counts `requests` (every call asked for, including ones it rejected) and
/// `accepts` (calls the backend accepted, learnt from ``release(_:outcome:now:)``), and rejects a new call
/// with probability `max(0, (requests − K·accepts) / (requests + 1))`, K = 2. Random draws come from an
/// injected generator and happen only when that probability is above zero.
///
/// Priorities (``tryAcquire(now:priority:)``, which the limiter stage calls with the context's
/// ``ResilienceContext/priority``): a ``RequestPriority/sheddable`` call is judged with K × `sheddableShare`
/// (0.75: it is throttled first), a ``RequestPriority/critical`` one with K × `criticalShare` (1.25: last).
public final class AdaptiveThrottle: RateLimiter {
    private let machine: LockedState<AdaptiveThrottleMachine>
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a throttle.
    ///
    /// - Parameters:
    ///   - configuration: The window and how aggressively it throttles.
    ///   - random: Decides the rejections (seed it in tests).
    public init(_ configuration: Configuration = .standard, random: SharedRandomSource = SharedRandomSource()) {
        self.configuration = configuration
        machine = LockedState(
            initialState: AdaptiveThrottleMachine(configuration: configuration, generator: random.makeGenerator()))
    }

    /// Counts the request and admits it, or rejects it with `throttled`.
    public func tryAcquire(now: ResilienceInstant) -> RateLimitDecision {
        machine.withLock { $0.acquire(now: now, share: 1) }
    }

    /// Counts the request of `priority` and admits it, or rejects it with `throttled`; the lower the
    /// priority, the sooner it is throttled.
    public func tryAcquire(now: ResilienceInstant, priority: RequestPriority) -> RateLimitDecision {
        let share =
            priority >= .critical
            ? configuration.criticalShare : priority >= .default ? 1 : configuration.sheddableShare
        return machine.withLock { $0.acquire(now: now, share: share.isFinite ? max(share, 0) : 1) }
    }

    /// Learns from the outcome: `accepted` counts an accept; `abandoned` withdraws the request.
    public func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        machine.withLock { $0.release(permit, outcome: outcome, now: now) }
    }

    /// The probability that a call asked for at `now` is rejected.
    public func rejectionProbability(now: ResilienceInstant) -> Double {
        machine.withLock { $0.rejectionProbability(now: now) }
    }

    /// Requests and accepts counted in the window at `now`.
    public func counts(now: ResilienceInstant) -> (requests: Int, accepts: Int) {
        machine.withLock { $0.totals(now: now) }
    }

    /// `adaptive-throttle(K: 2.0, window: 120 s)`.
    public var policyDescription: String {
        "adaptive-throttle(K: \(configuration.acceptsMultiplier), window: \(configuration.window))"
    }
}

extension AdaptiveThrottle {
    /// Settings of an ``AdaptiveThrottle`` (Google SRE book, "Handling Overload", client-side throttling).
    public struct Configuration: Hashable, Sendable {
        /// The multiplier K: the client allows `K × accepts` requests before it starts rejecting locally.
        /// 2 wastes some backend work for faster recovery; lower is more aggressive.
        public var acceptsMultiplier = 2.0
        /// How far back requests and accepts are counted.
        public var window: Duration = .seconds(120)
        /// Slices of the window (the window slides one slice at a time).
        public var buckets = 12
        /// The share of K sheddable calls are judged with (< 1: they are throttled first).
        public var sheddableShare = 0.75
        /// The share of K critical calls are judged with (> 1: they are throttled last).
        public var criticalShare = 1.25

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// K = 2 over the last 2 minutes (the SRE book's numbers).
        public static var standard: Configuration { Configuration() }

        /// K = 1.5 over the last minute: throttles sooner.
        public static var aggressive: Configuration {
            var configuration = Configuration()
            configuration.acceptsMultiplier = 1.5
            configuration.window = .seconds(60)
            return configuration
        }
    }
}

/// The state machine behind ``AdaptiveThrottle``: sliding request/accept counts and a generator.
struct AdaptiveThrottleMachine: Sendable {
    private struct Bucket: Sendable {
        var epoch: Int64 = .min
        var requests = 0
        var accepts = 0
    }

    let multiplier: Double
    private let width: Int64
    private var buckets: [Bucket]
    var generator: PseudoRandomGenerator

    init(configuration: AdaptiveThrottle.Configuration, generator: PseudoRandomGenerator) {
        let slices = max(1, min(configuration.buckets, 1000))
        multiplier = configuration.acceptsMultiplier.isFinite ? max(0, configuration.acceptsMultiplier) : 2
        width = max(1, DurationArithmetic.nanoseconds(configuration.window) / Int64(slices))
        buckets = Array(repeating: Bucket(), count: slices)
        self.generator = generator
    }

    private func epoch(_ instant: ResilienceInstant) -> Int64 {
        DurationArithmetic.floorDivide(DurationArithmetic.nanoseconds(instant.offset), width)
    }

    private mutating func slot(for instant: ResilienceInstant, current: Int64) -> Int? {
        let target = epoch(instant)
        guard target <= current, target > current &- Int64(buckets.count) else { return nil }
        let count = Int64(buckets.count)
        let index = Int(((target % count) + count) % count)
        if buckets[index].epoch != target { buckets[index] = Bucket(epoch: target) }
        return index
    }

    /// Requests and accepts in the window at `now`.
    func totals(now: ResilienceInstant) -> (requests: Int, accepts: Int) {
        let current = epoch(now)
        var requests = 0
        var accepts = 0
        for bucket in buckets where bucket.epoch <= current && bucket.epoch > current &- Int64(buckets.count) {
            requests += bucket.requests
            accepts += bucket.accepts
        }
        return (requests, accepts)
    }

    /// max(0, (requests − K·share·accepts) / (requests + 1)).
    func rejectionProbability(now: ResilienceInstant, share: Double = 1) -> Double {
        let counts = totals(now: now)
        let requests = Double(counts.requests)
        return max(0, (requests - multiplier * share * Double(counts.accepts)) / (requests + 1))
    }

    /// Counts the request and admits or rejects it, judged with K × `share`.
    mutating func acquire(now: ResilienceInstant, share: Double) -> RateLimitDecision {
        let probability = rejectionProbability(now: now, share: share)
        if let index = slot(for: now, current: epoch(now)) { buckets[index].requests += 1 }
        if probability > 0 && Double.random(in: 0..<1, using: &generator) < probability {
            return .rejected(.throttled, retryAfter: nil)
        }
        return .admitted(RateLimitPermit(token: 0, admittedAt: now))
    }

    mutating func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        let current = epoch(now)
        switch outcome {
        case .accepted:
            if let index = slot(for: now, current: current) { buckets[index].accepts += 1 }
        case .rejectedByBackend:
            break
        case .abandoned:
            // The backend never judged the call: take back the request it was counted as.
            if let index = slot(for: permit.admittedAt, current: current), buckets[index].requests > 0 {
                buckets[index].requests -= 1
            }
        }
    }
}
