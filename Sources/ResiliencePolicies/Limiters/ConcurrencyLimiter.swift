/// A bulkhead: at most `maximumConcurrent` calls at once, and a bounded first-in-first-out queue of waiters.
///
/// ``tryAcquire(now:)`` takes a free slot or answers ``RateLimitDecision/rejected(_:retryAfter:)`` with
/// ``ResilienceError/Code/bulkheadFull``; ``waitForPermit(context:)`` queues the caller (when the queue has
/// room) until a slot is handed over, the context's deadline passes, or the task is cancelled.
///
/// Priorities under overload (``tryAcquire(now:priority:)``, and the context's ``ResilienceContext/priority``
/// when waiting): a ``RequestPriority/sheddable`` call may start only while fewer than
/// `maximumConcurrent × sheddableShare` (default 75 %) run, so the last slots are kept for default and critical
/// calls; waiters
/// queue per class, and a freed slot goes to the oldest waiter of the highest class. No priority runs more than
/// `maximumConcurrent` calls.
///
/// Waiting is a queue of continuations, not polling (one implementation, shared with
/// ``AdaptiveConcurrencyLimiter``): a released slot goes straight to the oldest waiter, which is the only task
/// woken (one wake-up per admission), and a caller that arrives while anybody of its class or a higher one
/// waits queues behind them even if a slot is momentarily free. A waiter that gives up (its deadline passes or
/// its task is cancelled) leaves the queue in O(1) wherever it stands, without consuming a slot; a waiter
/// cancelled just after being handed a slot gives it back, so slots never leak.
public final class ConcurrencyLimiter: RateLimiter {
    /// The slots in use, each class's threshold and the waiters.
    struct State: SlotAdmission {
        var inFlight = 0
        var waiters: PriorityWaiters
        let maximumQueued: Int
        /// Calls each class may have in flight (sheddable, default, critical).
        let thresholds: (Int, Int, Int)

        mutating func takeSlot(now: ResilienceInstant) -> RateLimitPermit {
            inFlight += 1
            return RateLimitPermit(token: 0, admittedAt: now)
        }
    }

    private let state: LockedState<State>
    /// The settings it was created with.
    public let configuration: Configuration
    private let limit: Int
    private let queueLimit: Int
    /// Calls sheddable calls may fill.
    private let sheddableLimit: Int

    /// Creates a bulkhead.
    ///
    /// - Parameter configuration: How many calls run at once, how many may wait, and the share of the slots
    ///   sheddable calls may fill.
    public init(_ configuration: Configuration = .standard) {
        self.configuration = configuration
        limit = min(max(1, configuration.maximumConcurrent), 1_000_000)
        queueLimit = max(0, configuration.maximumQueued)
        let share = configuration.sheddableShare.isFinite ? min(max(configuration.sheddableShare, 0.01), 1) : 1
        sheddableLimit = max(1, Int((Double(limit) * share).rounded(.down)))
        state = LockedState(
            initialState: State(
                waiters: PriorityWaiters(capacity: min(queueLimit, 64)), maximumQueued: queueLimit,
                thresholds: (sheddableLimit, limit, limit)))
    }

    /// Takes a free slot when nobody is queued, else rejects with `bulkheadFull`.
    public func tryAcquire(now: ResilienceInstant) -> RateLimitDecision {
        acquire(now: now, priorityClass: 1)
    }

    /// Takes a free slot for a call of `priority` (a sheddable one only under its share) when nobody of its
    /// class or a higher one is queued, else rejects with `bulkheadFull`.
    public func tryAcquire(now: ResilienceInstant, priority: RequestPriority) -> RateLimitDecision {
        acquire(now: now, priorityClass: PriorityWaiters.priorityClass(priority))
    }

    private func acquire(now: ResilienceInstant, priorityClass: Int) -> RateLimitDecision {
        state.withLock { state in
            guard let permit = state.tryAcquire(priorityClass, now: now) else {
                return .rejected(.bulkheadFull, retryAfter: nil)
            }
            return .admitted(permit)
        }
    }

    /// Takes a free slot or waits in the queue of the context's priority for one, within `context.deadline`.
    ///
    /// Throws ``ResilienceError`` (`bulkheadFull`) when the queue is full or the deadline passes first,
    /// `CancellationError` when the task is cancelled. Either way the caller leaves the queue at once and
    /// holds no slot.
    public func waitForPermit(context: ResilienceContext) async throws -> RateLimitPermit {
        let key = context.key
        return try await SlotWaiting.waitForPermit(
            state, priority: context.priority, context: context, full: { ResilienceError(.bulkheadFull, key: key) },
            giveBack: { release($0, outcome: .abandoned, now: context.clock.now()) })
    }

    /// Frees the slot, handing it to the oldest waiter of the highest class that may start (the only task it
    /// wakes).
    public func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        let handed = state.withLock { state in
            state.inFlight = max(0, state.inFlight - 1)
            return state.handOver(now: now)
        }
        SlotWaiting.resume(handed)
    }

    /// Calls running now and callers waiting.
    public var occupancy: (running: Int, queued: Int) {
        state.withLock { ($0.inFlight, $0.waiters.count) }
    }

    /// `bulkhead(concurrent: 10, queue: 20, sheddable: 7)` (the sheddable share only when it keeps slots back).
    public var policyDescription: String {
        sheddableLimit < limit
            ? "bulkhead(concurrent: \(limit), queue: \(queueLimit), sheddable: \(sheddableLimit))"
            : "bulkhead(concurrent: \(limit), queue: \(queueLimit))"
    }
}

extension ConcurrencyLimiter {
    /// Settings of a ``ConcurrencyLimiter`` (a bulkhead).
    public struct Configuration: Hashable, Sendable {
        /// Calls that may run at once, clamped to `1...1_000_000` (as ``AdaptiveConcurrencyLimiter`` clamps its
        /// maximum limit).
        public var maximumConcurrent = 10
        /// Callers that may wait for a slot, first come first served; more are rejected at once.
        public var maximumQueued = 20
        /// The share of the slots ``RequestPriority/sheddable`` calls may fill (0 < share ≤ 1): the rest is
        /// kept for default and critical calls. Default: 0.75, as ``AdaptiveConcurrencyLimiter`` keeps it.
        public var sheddableShare = 0.75

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// 10 at once, 20 waiting.
        public static var standard: Configuration { Configuration() }

        /// `concurrent` at once, `queued` waiting.
        public static func limit(_ concurrent: Int, queued: Int = 0) -> Configuration {
            var configuration = Configuration()
            configuration.maximumConcurrent = concurrent
            configuration.maximumQueued = queued
            return configuration
        }
    }
}
