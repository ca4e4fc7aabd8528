/// A concurrency limit learned from the backend's round trips and drops, instead of a number somebody typed:
/// it grows while the latency holds and shrinks as soon as calls queue at the backend (Netflix
/// concurrency-limits, Envoy's adaptive concurrency filter, failsafe-go's adaptive limiter).
///
/// Every admitted call is a sample: its round trip (from admission to release), the calls in flight when it
/// was admitted, and whether the backend dropped it (``RateLimitOutcome/rejectedByBackend``: a timeout, an
/// overload answer). The ``Configuration/algorithm`` turns samples into the limit: ``AdaptiveLimitAlgorithm/gradient2(_:)``
/// (the default), ``AdaptiveLimitAlgorithm/vegas(_:)`` or ``AdaptiveLimitAlgorithm/aimd(_:)``, bounded by
/// ``Configuration/minimumLimit`` and ``Configuration/maximumLimit``. Abandoned calls (cancelled, failed
/// before reaching the backend) teach it nothing.
///
/// Priorities under overload: a call of ``RequestPriority/default`` priority may start while fewer than
/// `limit` calls run, a ``RequestPriority/sheddable`` one while fewer than `limit × sheddableShare`, a
/// ``RequestPriority/critical`` one while fewer than `limit × criticalShare` (and than
/// ``Configuration/maximumLimit``); so when the backend has no more room the sheddable calls go first and the
/// critical ones last. Waiters (when ``Configuration/maximumQueued`` allows) queue per class, first come
/// first served, and a freed slot goes to the oldest waiter of the highest class that may start.
///
/// ``tryAcquire(now:priority:)`` answers at once; a refusal is ``RateLimitDecision/rejected(_:retryAfter:)``
/// with ``ResilienceError/Code/bulkheadFull`` and a hint (the recent round trip spread over the limit's calls).
/// Thread-safe: one small lock, taken once to admit and once to release; no allocation on either.
public final class AdaptiveConcurrencyLimiter: RateLimiter {
    private let state: LockedState<AdaptiveLimitState>
    /// The settings it was created with, clamped to their ranges.
    public let configuration: Configuration

    /// Creates a limiter.
    ///
    /// - Parameter configuration: The algorithm, the limit's start and bounds, the waiters allowed and the
    ///   priorities' shares. Default: `.standard`.
    public init(_ configuration: Configuration = .standard) {
        let sanitized = configuration.sanitized
        self.configuration = sanitized
        state = LockedState(initialState: AdaptiveLimitState(configuration: sanitized))
    }

    /// Takes a slot for a call of `priority` if one may start now, else rejects with `bulkheadFull` and a hint.
    @inlinable
    public func tryAcquire(now: ResilienceInstant, priority: RequestPriority) -> RateLimitDecision {
        acquire(now: now, priorityClass: Self.priorityClass(priority))
    }

    /// Takes a slot for a call of ``RequestPriority/default`` priority (see ``tryAcquire(now:priority:)``).
    public func tryAcquire(now: ResilienceInstant) -> RateLimitDecision {
        acquire(now: now, priorityClass: 1)
    }

    @usableFromInline
    static func priorityClass(_ priority: RequestPriority) -> Int {
        PriorityWaiters.priorityClass(priority)
    }

    @usableFromInline
    func acquire(now: ResilienceInstant, priorityClass: Int) -> RateLimitDecision {
        state.withLock { state in
            if let permit = state.tryAcquire(priorityClass, now: now) { return .admitted(permit) }
            return .rejected(.bulkheadFull, retryAfter: state.retryHint)
        }
    }

    /// Takes a slot for a call of `priorityClass` if one may start now, else `nil`: the stage's success path,
    /// which has no decision to build (a decision carries an error code, a string, to copy and release).
    @usableFromInline
    func admit(now: ResilienceInstant, priorityClass: Int) -> RateLimitPermit? {
        state.withLock { $0.tryAcquire(priorityClass, now: now) }
    }

    /// The refusal of a call that found no slot: `bulkheadFull`, with the hint (as ``tryAcquire(now:priority:)``
    /// gives it).
    @usableFromInline
    var rejection: RateLimitDecision {
        .rejected(.bulkheadFull, retryAfter: state.withLock { $0.retryHint })
    }

    /// Frees the call's slot, learns from how it ended (its round trip is `now` − the permit's admission) and
    /// hands freed slots to waiters; returns the old and new limit when the limit changed.
    @discardableResult
    public func complete(
        _ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant
    ) -> (from: Int, to: Int)? {
        let (change, handed) = state.withLock { state in
            (state.release(permit, outcome: outcome, now: now), state.handOver(now: now))
        }
        SlotWaiting.resume(handed)
        return change
    }

    /// Frees the call's slot and learns from it (``complete(_:outcome:now:)``).
    public func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        complete(permit, outcome: outcome, now: now)
    }

    /// The learned limit, the calls running now and the callers waiting.
    public var occupancy: (limit: Int, running: Int, queued: Int) {
        state.withLock { ($0.wholeLimit, $0.inFlight, $0.waiters.count) }
    }

    /// `adaptive-concurrency(gradient2(…), limit: 20 in 4...1000, queue: 0)`.
    public var policyDescription: String {
        let configuration = configuration
        return
            "adaptive-concurrency(\(configuration.algorithm), limit: \(configuration.initialLimit) in "
            + "\(configuration.minimumLimit)...\(configuration.maximumLimit), queue: \(configuration.maximumQueued), "
            + "shares: sheddable \(configuration.sheddableShare), critical \(configuration.criticalShare))"
    }

    // MARK: Waiting

    /// Takes a slot, or waits (first come first served within the caller's priority class, higher classes
    /// first) until one is handed over, within `context.deadline` (one implementation, shared with
    /// ``ConcurrencyLimiter``).
    ///
    /// Throws ``ResilienceError`` (`bulkheadFull`, with the hint) when the queue is full or the deadline
    /// passes first, `CancellationError` when the task is cancelled; either way the caller holds no slot.
    public func waitForPermit(context: ResilienceContext) async throws -> RateLimitPermit {
        let hint = state.withLock { $0.retryHint }
        let key = context.key
        return try await SlotWaiting.waitForPermit(
            state, priority: context.priority, context: context,
            full: { ResilienceError(.bulkheadFull, key: key, retryAfter: hint) },
            giveBack: { complete($0, outcome: .abandoned, now: context.clock.now()) })
    }
}

extension AdaptiveConcurrencyLimiter {
    /// Settings of an ``AdaptiveConcurrencyLimiter``.
    public struct Configuration: Hashable, Sendable {
        /// How the limit is learned. Default: ``AdaptiveLimitAlgorithm/gradient2(_:)`` with Netflix's settings.
        public var algorithm: AdaptiveLimitAlgorithm = .gradient2()
        /// The limit before the first sample (Netflix's 20: enough for a quiet key to start without
        /// rejections; a busy one grows past it within a few dozen samples).
        public var initialLimit = 20
        /// The limit never goes below this (≥ 1): a backend that slows down for a reason other than load
        /// still gets some calls, which is how the limiter sees it recover.
        public var minimumLimit = 4
        /// The limit never goes above this: the most calls the caller can afford to have in flight (critical
        /// calls included).
        public var maximumLimit = 1_000
        /// Callers that may wait for a slot (0: a call that finds no slot is rejected at once, as a load
        /// shedder does; the rejection carries a retry hint).
        public var maximumQueued = 0
        /// The share of the limit sheddable calls may fill (0 < share ≤ 1): they are refused first.
        public var sheddableShare = 0.75
        /// The share of the limit critical calls may fill (≥ 1): the room above the limit kept for them, up to
        /// ``maximumLimit`` (the calls in flight never exceed it, whatever their priority).
        public var criticalShare = 1.25

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// Gradient2, starting at 20, between 4 and 1,000, no queue, sheddable 75 %, critical 125 %.
        public static var standard: Configuration { Configuration() }

        /// The settings clamped to their ranges.
        var sanitized: Configuration {
            var clamped = self
            clamped.maximumLimit = min(max(maximumLimit, 1), 1_000_000)
            clamped.minimumLimit = min(max(minimumLimit, 1), clamped.maximumLimit)
            clamped.initialLimit = min(max(initialLimit, clamped.minimumLimit), clamped.maximumLimit)
            clamped.maximumQueued = min(max(maximumQueued, 0), 1_000_000)
            clamped.sheddableShare = AdaptiveLimitMemory.clamp(sheddableShare, 0.01...1, or: 0.75)
            clamped.criticalShare = AdaptiveLimitMemory.clamp(criticalShare, 1...10, or: 1.25)
            return clamped
        }
    }
}
