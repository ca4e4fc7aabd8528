/// Client-side adaptive throttling (Google SRE book): rejects locally, with a probability that grows as
/// the backend rejects more of what it is sent.
///
/// Over a sliding window it counts `requests` (every call asked for, including ones it rejected) and
/// `accepts` (calls the backend accepted, learnt from ``release(_:outcome:now:)``), and rejects a new call
/// with probability `max(0, (requests − K·accepts) / (requests + 1))`, K = 2. Random draws come from an
/// injected generator and happen only when that probability is above zero.
public final class AdaptiveThrottle: RateLimiter {
    private let machine: LockedState<AdaptiveThrottleMachine>
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a throttle; `random` decides the rejections (seed it in tests).
    public init(_ configuration: Configuration = .standard, random: SharedRandomSource = SharedRandomSource()) {
        self.configuration = configuration
        machine = LockedState(
            initialState: AdaptiveThrottleMachine(configuration: configuration, generator: random.makeGenerator()))
    }

    /// Counts the request and admits it, or rejects it with `throttled`.
    public func tryAcquire(now: ResilienceInstant) -> RateLimitDecision {
        machine.withLock { $0.acquire(now: now) }
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
