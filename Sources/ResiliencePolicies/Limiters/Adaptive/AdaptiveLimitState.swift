/// The state behind an ``AdaptiveConcurrencyLimiter``: calls in flight, the learned limit, what the algorithm
/// remembers, the admission threshold of each priority class and the waiters of each class. A value type
/// that takes its inputs as arguments, kept under the limiter's lock.
struct AdaptiveLimitState: SlotAdmission {
    let configuration: AdaptiveConcurrencyLimiter.Configuration
    private(set) var inFlight = 0
    /// The learned limit, unrounded.
    private(set) var limit: Double
    /// The whole limit, as admission uses it.
    private(set) var wholeLimit: Int
    /// Calls each priority class may have in flight (sheddable, default, critical).
    private(set) var thresholds: (Int, Int, Int) = (0, 0, 0)
    /// An average of the latest round trips, in seconds, for the retry hint: an exponential average with weight
    /// 0.1, each round trip entering at most at ``hintSampleBound`` × the average.
    private(set) var recentRoundTrip = 0.0
    /// The most a round trip enters the hint's average at, as a multiple of the average: one call that spanned
    /// something other than the backend (an app suspended for minutes mid-request) raises the hint to at most
    /// 1.9 × what it was (a 300 s call would otherwise add 30 s ÷ limit), while a backend that is slower for good
    /// is followed at up to 1.9 × per call (100 × slower within 8 calls).
    static let hintSampleBound = 10.0
    var memory = AdaptiveLimitMemory()
    /// The waiters of each priority class (sheddable, default, critical), first come first served.
    var waiters: PriorityWaiters
    /// The most callers that may wait.
    var maximumQueued: Int { configuration.maximumQueued }
    /// The configuration's minimum limit, converted once.
    private let minimumLimit: Double
    /// The configuration's maximum limit, converted once.
    private let maximumLimit: Double

    init(configuration: AdaptiveConcurrencyLimiter.Configuration) {
        self.configuration = configuration
        minimumLimit = Double(configuration.minimumLimit)
        maximumLimit = Double(configuration.maximumLimit)
        limit = Double(configuration.initialLimit)
        wholeLimit = configuration.initialLimit
        waiters = PriorityWaiters(capacity: min(configuration.maximumQueued, 64))
        updateThresholds()
    }

    /// Takes a slot; the permit's token is the calls then in flight (the sample's `inFlight`).
    mutating func takeSlot(now: ResilienceInstant) -> RateLimitPermit {
        inFlight += 1
        return RateLimitPermit(token: UInt64(inFlight), admittedAt: now)
    }

    /// Frees the slot of a call that ended with `outcome` at `now`, learning from it; returns the old and new
    /// whole limit when it changed.
    mutating func release(
        _ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant
    ) -> (from: Int, to: Int)? {
        inFlight = max(0, inFlight - 1)
        guard outcome != .abandoned else { return nil }
        let roundTrip = max(DurationArithmetic.seconds(permit.admittedAt.duration(to: now)), VegasLimit.noTime)
        recentRoundTrip =
            recentRoundTrip == 0
            ? roundTrip : recentRoundTrip * 0.9 + min(roundTrip, recentRoundTrip * Self.hintSampleBound) * 0.1
        let sample = AdaptiveLimitSample(
            roundTrip: roundTrip, inFlight: Int(clamping: permit.token), dropped: outcome == .rejectedByBackend,
            completedAt: DurationArithmetic.seconds(now.offset))
        let next = configuration.algorithm.nextLimit(limit, sample, minimum: minimumLimit, &memory)
        limit = next.isFinite ? next : limit
        limit = min(max(limit, minimumLimit), maximumLimit)
        let previous = wholeLimit
        wholeLimit = Int(limit)
        guard wholeLimit != previous else { return nil }
        updateThresholds()
        return (previous, wholeLimit)
    }

    /// How long until a slot is likely to free: the recent round trip spread over the limit's calls.
    var retryHint: Duration {
        let seconds = recentRoundTrip / Double(max(wholeLimit, 1))
        return seconds > 0.001 ? .nanoseconds(Int64(seconds * 1e9)) : .milliseconds(1)
    }

    /// Critical calls may go past the limit by its critical share, never past the maximum: the most calls the
    /// caller can afford in flight.
    private mutating func updateThresholds() {
        func share(_ fraction: Double) -> Int { max(1, Int((Double(wholeLimit) * fraction).rounded(.down))) }
        thresholds = (
            share(configuration.sheddableShare), wholeLimit,
            min(share(configuration.criticalShare), configuration.maximumLimit)
        )
    }
}
