/// The rate-limit breaker: stops calling a server that keeps answering 429.
///
/// Three rate-limit answers in a row trip it, and so does one that carries the server's `Retry-After`
/// (see ``BreakerRetryAfter``); it stays open for `30 s × multiplier` (capped at 300 s), or for the server's
/// `Retry-After` when that is longer, and each trip doubles the multiplier up to 10: 30 / 60 / 120 / 240 / 300 s. Any other outcome resets the
/// 429 counter; a success also resets the multiplier. When the cooldown ends the breaker closes again (no
/// half-open: traffic resumes and counts 429s afresh). Export the state and restore it at the
/// next launch so a restart does not hammer a server that asked us to back off.
///
/// ```swift
/// let breaker = RateLimitBreaker()
/// let saved = breaker.exportState(now: clock.now())      // persist `saved` (it is Codable)
/// restored.restoreState(saved, now: newClock.now())      // next launch
/// ```
public final class RateLimitBreaker: StateMachineBreaker, @unchecked Sendable {
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a breaker.
    ///
    /// - Parameters:
    ///   - configuration: The 429 threshold and the growing cooldown.
    ///   - random: Feeds the cooldown's jitter when one is configured.
    public init(_ configuration: Configuration = .standard, random: SharedRandomSource = SharedRandomSource()) {
        self.configuration = configuration
        super.init(RateLimitMachine(configuration: configuration, generator: random.makeGenerator()))
    }

    /// The multiplier the next trip will use (1, 2, 4, 8, then 10).
    public func multiplier() -> Double {
        inspect(RateLimitMachine.self) { $0.multiplier } ?? 1
    }

    /// `rate-limit(threshold: 3, cooldown: 30 s × 2^n ≤ 300 s)`.
    public override var policyDescription: String {
        let cooldown = configuration.cooldown
        return "rate-limit(threshold: \(configuration.threshold), cooldown: \(cooldown.base) × "
            + "\(cooldown.growthFactor)^n ≤ \(cooldown.maximum))"
    }
}

extension RateLimitBreaker {
    /// Settings of a ``RateLimitBreaker``.
    public struct Configuration: Sendable {
        /// Rate-limit answers in a row that trip the breaker.
        public var threshold = 3
        /// Cooldown `30 s × multiplier`; the multiplier doubles on each trip up to 10; at most 300 s:
        /// 30 / 60 / 120 / 240 / 300 s.
        public var cooldown = BreakerBackoff(
            base: .seconds(30), growthFactor: 2, maximumMultiplier: 10, maximum: .seconds(300))
        /// Which failures are rate-limit answers (default: category rate-limited or HTTP 429).
        public var countsAsRateLimit: BreakerFailurePredicate = .rateLimitedOnly
        /// How the server's `Retry-After` on a rate-limit answer lengthens or starts the cooldown (by default
        /// an answer carrying one trips the breaker at once, for at least that long).
        public var retryAfter: BreakerRetryAfter = .standard

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// 3 × 429 (or one 429 with `Retry-After`) trips; 30 / 60 / 120 / 240 / 300 s, at least the
        /// server's `Retry-After`.
        public static var standard: Configuration { Configuration() }

        /// Trips on the first 429 and backs off 10 s doubling up to 120 s (for APIs with strict quotas).
        public static var strict: Configuration {
            var configuration = Configuration()
            configuration.threshold = 1
            configuration.cooldown = BreakerBackoff(
                base: .seconds(10), growthFactor: 2, maximumMultiplier: 12, maximum: .seconds(120))
            return configuration
        }
    }
}

/// The state machine behind ``RateLimitBreaker``: a value type that takes `now`.
struct RateLimitMachine: BreakerMachine {
    let configuration: RateLimitBreaker.Configuration
    var cycle: BreakerCycle
    var consecutiveRateLimits = 0
    var consecutiveSuccesses = 0
    var generator: PseudoRandomGenerator

    init(configuration: RateLimitBreaker.Configuration, generator: PseudoRandomGenerator) {
        self.configuration = configuration
        self.generator = generator
        cycle = BreakerCycle(
            halfOpen: nil, isolatedRetryAfter: configuration.cooldown.maximum, retryAfter: configuration.retryAfter)
    }

    var failurePredicate: BreakerFailurePredicate { configuration.countsAsRateLimit }

    /// The failures this breaker counts are its rate limits in a row.
    var consecutiveFailures: Int { consecutiveRateLimits }

    /// The multiplier the next trip will use (1, 2, 4, 8, 10 …).
    var multiplier: Double { configuration.cooldown.multiplier(tripIndex: cycle.consecutiveTrips) }

    mutating func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    )
        -> BreakerTransition?
    {
        guard cycle.isCurrent(permit), cycle.state == .closed else { return nil }
        switch outcome {
        case .cancelled:
            return nil
        case .success:
            consecutiveRateLimits = 0
            consecutiveSuccesses += 1
            cycle.consecutiveTrips = 0
            return nil
        case .failure(let classification):
            consecutiveSuccesses = 0
            guard configuration.countsAsRateLimit.counts(classification) else {
                consecutiveRateLimits = 0
                return nil
            }
            consecutiveRateLimits += 1
            guard
                consecutiveRateLimits >= max(1, configuration.threshold)
                    || cycle.immediateHint(outcome, counted: true) != nil
            else { return nil }
            consecutiveRateLimits = 0
            let duration = configuration.cooldown.duration(tripIndex: cycle.consecutiveTrips, using: &generator)
            return cycle.trip(now: now, duration: duration, cause: outcome)
        }
    }

    mutating func reset(now: ResilienceInstant) -> BreakerTransition? {
        consecutiveRateLimits = 0
        consecutiveSuccesses = 0
        return cycle.reset(now: now)
    }

    func export(now: ResilienceInstant) -> BreakerSnapshot {
        cycle.snapshot(
            now: now, adding: ["multiplier": multiplier, "consecutiveRateLimits": Double(consecutiveRateLimits)])
    }

    /// A half-open snapshot restores as closed: this cycle has no half-open rules.
    mutating func restore(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        consecutiveRateLimits = SnapshotValues.count(snapshot, "consecutiveRateLimits")
        consecutiveSuccesses = 0
        return cycle.restore(snapshot, now: now, tripLimit: 64)
    }
}
