/// Admits a call now, after a delay, or not at all: token buckets, bulkheads, adaptive throttles.
///
/// ## Contract
/// - ``tryAcquire(now:)`` is synchronous, lock-protected, allocation-free on admission, and never suspends.
/// - Every ``RateLimitDecision/admitted(_:)`` permit is released exactly once, whatever happens to the call
///   (a bulkhead slot must never leak when a call is cancelled).
/// - ``waitForPermit(context:)`` suspends until a permit is granted or the context's deadline would be
///   missed, and is cancellation-correct: a cancelled waiter leaves no trace (no slot or token consumed).
///   Waiters should be served first come, first served, with one wake-up per admission: the library's
///   limiters book each waiter's turn (token bucket, server quota) or queue it (bulkhead), sleep on the
///   context's clock only, refuse at once a waiter whose turn would come after its deadline, and give a
///   cancelled waiter's turn back. The default implementation is the simple fallback for limiters that
///   cannot book a turn: it sleeps on the context's clock for each ``RateLimitDecision/delayed(retryAfter:)``
///   and asks again, so every waiter wakes at every "later" and the order among waiters is not kept.
public protocol RateLimiter: Sendable {
    /// Asks for a permit at `now`.
    func tryAcquire(now: ResilienceInstant) -> RateLimitDecision

    /// Asks for a permit at `now` for a call of `priority`. Limiters with priority classes (bulkheads,
    /// adaptive limits) keep room for the higher ones and refuse the lower ones first; the default asks
    /// ``tryAcquire(now:)``, the same for every priority. The limiter stages call this one, with
    /// ``ResilienceContext/priority``.
    func tryAcquire(now: ResilienceInstant, priority: RequestPriority) -> RateLimitDecision

    /// Waits (on `context.clock`, within `context.deadline`) for a permit; throws ``ResilienceError`` when
    /// rejected or when the wait would outlive the deadline, `CancellationError` when cancelled.
    func waitForPermit(context: ResilienceContext) async throws -> RateLimitPermit

    /// Returns a permit when its call ends.
    func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant)

    /// A short description of the limiter and its settings.
    var policyDescription: String { get }
}

extension RateLimiter {
    /// Asks ``tryAcquire(now:)``: a limiter without priority classes admits every priority alike.
    public func tryAcquire(now: ResilienceInstant, priority: RequestPriority) -> RateLimitDecision {
        tryAcquire(now: now)
    }

    /// Sleeps for each delay the limiter asks for, until admitted, rejected, or past the deadline.
    ///
    /// A fallback without a queue: every waiter wakes when its delay ends and asks again, so with many
    /// waiters each admission wakes all of them and the order among them is left to chance. Limiters that
    /// can make callers wait long should replace it with a booking or a queue (see the protocol's contract).
    public func waitForPermit(context: ResilienceContext) async throws -> RateLimitPermit {
        while true {
            let now = context.clock.now()
            switch tryAcquire(now: now) {
            case .admitted(let permit):
                return permit
            case .rejected(let code, let retryAfter):
                throw ResilienceError(code, key: context.key, retryAfter: retryAfter)
            case .delayed(let retryAfter):
                if let remaining = context.remaining(now: now), remaining < retryAfter {
                    throw ResilienceError(.rateLimited, key: context.key, retryAfter: retryAfter)
                }
                try await context.clock.sleep(until: now.advanced(by: retryAfter))
            }
        }
    }

    /// The type's name.
    public var policyDescription: String { String(describing: Self.self) }
}

/// A limiter's answer to "may this call run now?".
public enum RateLimitDecision: Hashable, Sendable {
    /// Run the call now; release the permit when it ends.
    case admitted(RateLimitPermit)
    /// Not now; a permit is expected after `retryAfter`. The stage may wait (within the deadline) and ask
    /// again, or reject.
    case delayed(retryAfter: Duration)
    /// Rejected outright (queue full, throttled); `retryAfter` is a hint when known.
    case rejected(ResilienceError.Code, retryAfter: Duration?)
}

/// Proof that a limiter admitted a call; return it with ``RateLimiter/release(_:outcome:now:)``.
public struct RateLimitPermit: Hashable, Sendable {
    /// A limiter-specific identifier (a slot number, a generation); zero when the limiter needs none.
    public var token: UInt64
    /// When the call was admitted.
    public var admittedAt: ResilienceInstant

    /// Creates a permit.
    ///
    /// - Parameters:
    ///   - token: A limiter-specific identifier (a slot number, a generation); zero when the limiter needs none.
    ///     Default: `0`.
    ///   - admittedAt: When the call was admitted.
    public init(token: UInt64 = 0, admittedAt: ResilienceInstant) {
        self.token = token
        self.admittedAt = admittedAt
    }
}

/// How an admitted call ended, for limiters that learn from outcomes (adaptive throttling, bulkheads).
public enum RateLimitOutcome: Hashable, Sendable {
    /// The backend accepted the call.
    case accepted
    /// The backend rejected or failed it (counts against adaptive throttling).
    case rejectedByBackend
    /// The call was cancelled or failed locally; the backend's acceptance is unknown.
    case abandoned
}
