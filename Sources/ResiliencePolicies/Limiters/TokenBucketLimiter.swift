/// A token bucket: bursts up to `burst` calls, then admits `refillPerSecond` calls per second.
///
/// When the bucket is empty ``tryAcquire(now:)`` answers ``RateLimitDecision/delayed(retryAfter:)`` with the
/// time until the next free token (plus, when configured, a growing backoff while exhaustion lasts), or
/// rejects when that wait exceeds ``Configuration/maximumWait``. `RateLimiterStrategy` then waits within the
/// deadline or rejects. Create one per key.
///
/// ## Waiting in order
///
/// ``waitForPermit(context:)`` books a *reservation*: it takes the next token that will exist (the bucket's
/// count goes below zero, one per caller waiting) and sleeps once, on the context's clock, until that token's
/// time. Callers are therefore served first come, first served (each reservation is due no earlier than the
/// one before it, and a caller arriving later, or calling ``tryAcquire(now:)``, never overtakes one already
/// waiting), every admission costs one wake-up and O(1) work however many callers wait, and nothing polls. A
/// caller whose reservation would fall after `context.deadline` (or beyond ``Configuration/maximumWait``) is
/// rejected at once with `rateLimited` and the wait as its retry hint, instead of sleeping until it times
/// out. A caller cancelled while it waits gives its token back.
///
/// ```swift
/// let limiter = TokenBucketLimiter(.rate(2, burst: 5))
/// ```
public final class TokenBucketLimiter: RateLimiter {
    private let machine: LockedState<TokenBucketMachine>
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a full bucket.
    ///
    /// - Parameters:
    ///   - configuration: Capacity, refill rate and the optional backoff while exhausted.
    ///   - random: Feeds the exhaustion backoff's jitter (seed it in tests).
    public init(_ configuration: Configuration = .standard, random: SharedRandomSource = SharedRandomSource()) {
        self.configuration = configuration
        machine = LockedState(
            initialState: TokenBucketMachine(configuration: configuration, generator: random.makeGenerator()))
    }

    /// Takes a token, or says how long until one is available.
    public func tryAcquire(now: ResilienceInstant) -> RateLimitDecision {
        machine.withLock { $0.acquire(now: now) }
    }

    /// Waits for the next token in turn: books it now, sleeps once on `context.clock` until it is due, and
    /// returns the permit.
    ///
    /// Throws ``ResilienceError`` (`rateLimited`, with the wait as its retry hint) at once when the token
    /// would come after `context.deadline`, beyond ``Configuration/maximumWait``, or never (a zero refill
    /// rate); `CancellationError` when the task is cancelled, in which case the booked token is given back.
    public func waitForPermit(context: ResilienceContext) async throws -> RateLimitPermit {
        try Task.checkCancellation()
        let now = context.clock.now()
        let due: ResilienceInstant
        switch machine.withLock({ $0.reserve(now: now, deadline: context.deadline) }) {
        case .admitted(let permit):
            return permit
        case .rejected(let code, let retryAfter):
            throw ResilienceError(code, key: context.key, retryAfter: retryAfter)
        case .delayed(let wait):
            due = now.advanced(by: wait)
        }
        do {
            try await context.clock.sleep(until: due)
            try Task.checkCancellation()
        } catch {
            machine.withLock { $0.giveBack() }
            throw error
        }
        return RateLimitPermit(token: 0, admittedAt: due)
    }

    /// Tokens are not returned; an accepted call resets the exhaustion backoff.
    public func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        // Without an exhaustion backoff there is nothing to reset: skip the lock.
        guard configuration.exhaustionBackoff != nil else { return }
        machine.withLock { $0.release(outcome: outcome) }
    }

    /// Tokens in the bucket at `now` (fractional while refilling); below zero while callers wait, by the
    /// number of tokens they have booked ahead.
    public func availableTokens(now: ResilienceInstant) -> Double {
        machine.withLock { state in
            state.refill(now: now)
            return state.tokens
        }
    }

    /// `token-bucket(burst: 10, refill: 10.0/s)`.
    public var policyDescription: String {
        "token-bucket(burst: \(configuration.burst), refill: \(configuration.refillPerSecond)/s)"
    }
}

extension TokenBucketLimiter {
    /// Settings of a ``TokenBucketLimiter``.
    public struct Configuration: Sendable {
        /// The bucket's size: how many calls may burst at once.
        public var burst = 10
        /// Tokens added per second.
        public var refillPerSecond = 10.0
        /// The longest wait a caller is told to accept; beyond it the call is rejected outright.
        /// `nil` means any wait is offered (the stage still honours the deadline).
        public var maximumWait: Duration? = .seconds(30)
        /// Extra delay while the bucket stays exhausted, growing with each refusal in a row and reset by
        /// an accepted call; `nil` waits only for the next token.
        public var exhaustionBackoff: BreakerBackoff?

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// 10 calls of burst, 10 per second, waits of up to 30 s: headroom for a key sending a few requests per
        /// second plus the retries a budget allows and a hedge now and then, so it only bites on a runaway caller
        /// and never queues the traffic it is meant for.
        public static var standard: Configuration { Configuration() }

        /// ``standard``'s bucket (10 burst, 10 per second) plus exponential backoff on exhaustion
        /// (1 s doubling, ±10 % jitter, at most 300 s), reset on success.
        public static var backingOff: Configuration {
            var configuration = Configuration()
            configuration.maximumWait = nil
            configuration.exhaustionBackoff = BreakerBackoff(
                base: .seconds(1), growthFactor: 2, maximumMultiplier: 512, maximum: .seconds(300), jitter: 0.1)
            return configuration
        }

        /// A bucket of `burst` calls refilled at `perSecond`.
        public static func rate(_ perSecond: Double, burst: Int) -> Configuration {
            var configuration = Configuration()
            configuration.refillPerSecond = perSecond
            configuration.burst = burst
            return configuration
        }
    }
}

/// The state machine behind ``TokenBucketLimiter``: a value type that takes `now`.
struct TokenBucketMachine: Sendable {
    let burst: Double
    let refillPerSecond: Double
    let maximumWait: Duration?
    let exhaustionBackoff: BreakerBackoff?
    var tokens: Double
    var lastRefill: ResilienceInstant?
    var refusalsInARow = 0
    /// When the last booked caller is due. A caller that waits past its token's time (the exhaustion backoff
    /// lengthens its wait) leaves that token in the bucket meanwhile: nobody takes one before this instant, so
    /// nobody overtakes a caller already waiting.
    var bookedUntil: ResilienceInstant?
    var generator: PseudoRandomGenerator

    init(configuration: TokenBucketLimiter.Configuration, generator: PseudoRandomGenerator) {
        burst = Double(max(1, configuration.burst))
        let rate = configuration.refillPerSecond
        refillPerSecond = rate.isFinite && rate > 0 ? rate : 0
        maximumWait = configuration.maximumWait
        exhaustionBackoff = configuration.exhaustionBackoff
        tokens = burst
        self.generator = generator
    }

    mutating func refill(now: ResilienceInstant) {
        guard let last = lastRefill else {
            lastRefill = now
            return
        }
        // Never move backwards: a caller holding a slightly older instant (read before another caller took
        // the lock) adds nothing, instead of making the next refill count the same time twice.
        guard last < now else { return }
        let elapsed = Self.seconds(last.duration(to: now))
        tokens = min(burst, tokens + elapsed * refillPerSecond)
        lastRefill = now
    }

    /// `elapsed / .seconds(1)`, bit for bit. That operator converts 128-bit attoseconds to `Double` through
    /// the standard library's generic conversion (≈ 5 % of a five-stage pipeline call); a non-negative
    /// duration under 2⁶³ attoseconds (about 9 s, every refill of a busy bucket) fits in a `UInt64`, whose
    /// conversion is one instruction and rounds the same way.
    static func seconds(_ elapsed: Duration) -> Double {
        guard elapsed._high == 0, elapsed._low <= UInt64(Int64.max) else { return elapsed / .seconds(1) }
        return Double(elapsed._low) / 1e18
    }

    /// Takes a token, or answers the wait until one (counting a refusal in a row for the exhaustion backoff).
    mutating func acquire(now: ResilienceInstant) -> RateLimitDecision {
        acquire(now: now, countsRefusal: true)
    }

    /// Takes a token, or answers the wait until one. With an exhaustion backoff, the wait is at least the
    /// backoff of the refusals in a row so far; `countsRefusal` adds this one to them, otherwise the wait is
    /// the last refusal's (the one its caller was given).
    private mutating func acquire(now: ResilienceInstant, countsRefusal: Bool) -> RateLimitDecision {
        refill(now: now)
        let waitingAhead = bookedUntil.map { now < $0 } ?? false
        if tokens >= 1 && !waitingAhead {
            tokens -= 1
            return .admitted(RateLimitPermit(token: 0, admittedAt: now))
        }
        guard refillPerSecond > 0 else { return .rejected(.rateLimited, retryAfter: nil) }
        // At least a nanosecond: a shortfall worth less than one would round to a zero wait, and a waiter on a
        // clock that does not move by itself (a virtual clock) would then ask again at the same instant forever.
        var wait = max(.nanoseconds(1), DurationArithmetic.duration(seconds: (1 - tokens) / refillPerSecond))
        if waitingAhead, let bookedUntil { wait = max(wait, now.duration(to: bookedUntil)) }
        if let exhaustionBackoff {
            let tripIndex = countsRefusal ? refusalsInARow : refusalsInARow - 1
            wait = max(wait, exhaustionBackoff.duration(tripIndex: tripIndex, using: &generator))
            if countsRefusal { refusalsInARow = min(refusalsInARow + 1, 64) }
        }
        if let maximumWait, wait > maximumWait { return .rejected(.rateLimited, retryAfter: wait) }
        return .delayed(retryAfter: wait)
    }

    /// Books the next token for a caller that will wait for it: admits at once when a token is free;
    /// otherwise takes the token that will be free after the ones already booked and answers
    /// `.delayed(until it is due)`; rejects (booking nothing) when that is beyond `deadline`, beyond
    /// `maximumWait`, or never.
    ///
    /// A caller books after the refusal that made it wait (the limiter stage asks ``acquire(now:)`` first),
    /// so a booking counts no refusal of its own and waits that refusal's backoff; only a caller that books
    /// while no refusal is in a row counts one.
    mutating func reserve(now: ResilienceInstant, deadline: ResilienceInstant?) -> RateLimitDecision {
        let decision = acquire(now: now, countsRefusal: refusalsInARow == 0)
        guard case .delayed(let wait) = decision else { return decision }
        let due = now.advanced(by: wait)
        if let deadline, due > deadline { return .rejected(.rateLimited, retryAfter: wait) }
        tokens -= 1
        bookedUntil = max(bookedUntil ?? due, due)
        return decision
    }

    /// Returns a booked token whose caller stopped waiting. Callers booked after it keep their turns; the
    /// token goes to whoever asks next, no earlier than the last caller already waiting.
    mutating func giveBack() {
        tokens = min(burst, tokens + 1)
    }

    mutating func release(outcome: RateLimitOutcome) {
        if outcome == .accepted { refusalsInARow = 0 }
    }
}
