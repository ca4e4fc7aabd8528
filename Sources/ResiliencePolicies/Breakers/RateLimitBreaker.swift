/// Seed 004's rate-limit breaker: stops calling a server that keeps answering 429.
///
/// Three rate-limit answers in a row trip it; it stays open for `30 s × multiplier` (capped at 300 s), and
/// each trip doubles the multiplier up to 10: 30 / 60 / 120 / 240 / 300 s. Any other outcome resets the
/// 429 counter; a success also resets the multiplier. When the cooldown ends the breaker closes again (no
/// half-open: the seed lets traffic resume and counts 429s afresh). Export the state and restore it at the
/// next launch so a restart does not hammer a server that asked us to back off.
///
/// ```swift
/// let breaker = RateLimitBreaker()
/// let saved = breaker.exportState(now: clock.now())      // persist `saved` (it is Codable)
/// restored.restoreState(saved, now: newClock.now())      // next launch
/// ```
public final class RateLimitBreaker: BreakerPolicy {
    private let machine: LockedState<RateLimitMachine>
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a breaker; `random` feeds the cooldown's jitter when one is configured.
    public init(_ configuration: Configuration = .standard, random: SharedRandomSource = SharedRandomSource()) {
        self.configuration = configuration
        machine = LockedState(
            initialState: RateLimitMachine(configuration: configuration, generator: random.makeGenerator()))
    }

    /// Admits the call unless the cooldown is running or the breaker is isolated.
    public func admit(now: ResilienceInstant) -> BreakerAdmission {
        machine.withLock { $0.cycle.admit(now: now) }
    }

    /// Counts rate-limit answers in a row; other outcomes reset the count, a success the multiplier.
    @discardableResult
    public func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    )
        -> BreakerTransition?
    {
        machine.withLock { $0.record(outcome, for: permit, now: now) }
    }

    /// Forces the breaker open until ``reset(now:)``.
    @discardableResult
    public func isolate(now: ResilienceInstant) -> BreakerTransition? {
        machine.withLock { $0.cycle.isolate(now: now) }
    }

    /// The seed's manual reset: clears the counter, the cooldown and the multiplier.
    @discardableResult
    public func reset(now: ResilienceInstant) -> BreakerTransition? {
        machine.withLock { $0.reset(now: now) }
    }

    /// The breaker's counters; `consecutiveFailures` is the 429 count.
    public func metrics(now: ResilienceInstant) -> BreakerMetrics {
        machine.withLock { $0.metrics(now: now) }
    }

    /// The multiplier the next trip will use (1, 2, 4, 8, then 10).
    public func multiplier() -> Double {
        machine.withLock { $0.multiplier }
    }

    /// State, cooldown left, `multiplier`, trips in a row, 429 count and total opens.
    public func exportState(now: ResilienceInstant) -> BreakerSnapshot {
        machine.withLock { $0.export(now: now) }
    }

    /// Restores a snapshot from ``exportState(now:)``; the remaining cooldown is honoured.
    @discardableResult
    public func restoreState(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        machine.withLock { $0.restore(snapshot, now: now) }
    }

    /// `rate-limit(threshold: 3, cooldown: 30 s × 2^n ≤ 300 s)`.
    public var policyDescription: String {
        let cooldown = configuration.cooldown
        return "rate-limit(threshold: \(configuration.threshold), cooldown: \(cooldown.base) × "
            + "\(cooldown.growthFactor)^n ≤ \(cooldown.maximum))"
    }
}
