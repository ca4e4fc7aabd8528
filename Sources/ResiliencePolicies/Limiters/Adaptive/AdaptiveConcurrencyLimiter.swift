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
/// ``RequestPriority/critical`` one while fewer than `limit × criticalShare`; so when the backend has no
/// more room the sheddable calls go first and the critical ones last. Waiters (when
/// ``Configuration/maximumQueued`` allows) queue per class, first come first served, and a freed slot goes
/// to the oldest waiter of the highest class that may start.
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
        AdaptiveLimitState.priorityClass(priority)
    }

    @usableFromInline
    func acquire(now: ResilienceInstant, priorityClass: Int) -> RateLimitDecision {
        state.withLock { state in
            if let permit = state.tryAcquire(priorityClass, now: now) { return .admitted(permit) }
            return .rejected(.bulkheadFull, retryAfter: state.retryHint)
        }
    }

    /// Frees the call's slot, learns from how it ended (its round trip is `now` − the permit's admission) and
    /// hands freed slots to waiters; returns the old and new limit when the limit changed.
    @discardableResult
    public func complete(
        _ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant
    ) -> (from: Int, to: Int)? {
        let (change, handed) = state.withLock { state in
            let change = state.release(permit, outcome: outcome, now: now)
            guard state.waiting > 0 else { return (change, [Handover]()) }
            return (change, Self.handOver(&state, now: now))
        }
        for handover in handed { handover.continuation.resume(returning: handover.permit) }
        return change
    }

    /// Frees the call's slot and learns from it (``complete(_:outcome:now:)``).
    public func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        complete(permit, outcome: outcome, now: now)
    }

    /// The learned limit, the calls running now and the callers waiting.
    public var occupancy: (limit: Int, running: Int, queued: Int) {
        state.withLock { ($0.wholeLimit, $0.inFlight, $0.waiting) }
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
    /// first) until one is handed over, within `context.deadline`.
    ///
    /// Throws ``ResilienceError`` (`bulkheadFull`, with the hint) when the queue is full or the deadline
    /// passes first, `CancellationError` when the task is cancelled; either way the caller holds no slot.
    public func waitForPermit(context: ResilienceContext) async throws -> RateLimitPermit {
        let now = context.clock.now()
        let priorityClass = Self.priorityClass(context.priority)
        let decision = acquire(now: now, priorityClass: priorityClass)
        if case .admitted(let permit) = decision { return permit }
        let hint = state.withLock { $0.retryHint }
        let full = ResilienceError(.bulkheadFull, key: context.key, retryAfter: hint)
        if let remaining = context.remaining(now: now), remaining <= .zero { throw full }
        try Task.checkCancellation()
        let place = state.withLock { state in
            AdaptiveLimitState.Place(
                priorityClass: priorityClass, handle: state.waiters[priorityClass].claim(.arriving(early: nil)))
        }
        let timer = context.deadline.map { deadline in
            Task { [weak self] in
                try? await context.clock.sleep(until: deadline)
                guard !Task.isCancelled else { return }
                self?.expire(place, error: full)
            }
        }
        defer { timer?.cancel() }
        let permit = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<RateLimitPermit, any Error>) in
                let arrival = context.clock.now()
                let outcome = state.withLock { state in
                    queue(place, continuation, arrival: arrival, deadline: context.deadline, &state)
                }
                switch outcome {
                case .none: break
                case .some(.success(let permit)): continuation.resume(returning: permit)
                case .some(.failure(let refusal)):
                    continuation.resume(throwing: refusal.error ?? full)
                }
            }
        } onCancel: {
            expire(place, error: CancellationError())
        }
        if Task.isCancelled {
            complete(permit, outcome: .abandoned, now: context.clock.now())
            throw CancellationError()
        }
        return permit
    }

    /// Why a waiter could not queue: the error that ended its wait, or `nil` for a full queue or a passed
    /// deadline.
    private struct Refusal: Error {
        var error: (any Error)?
    }

    /// Under the lock: admits the arriving waiter if it may start, queues it (returning `nil`), or refuses
    /// it; anything but queueing frees its place.
    private func queue(
        _ place: AdaptiveLimitState.Place, _ continuation: CheckedContinuation<RateLimitPermit, any Error>,
        arrival: ResilienceInstant, deadline: ResilienceInstant?, _ state: inout AdaptiveLimitState
    ) -> Result<RateLimitPermit, Refusal>? {
        let queueIndex = place.priorityClass
        guard case .arriving(let early) = state.waiters[queueIndex][place.handle] else {
            return .failure(Refusal(error: CancellationError()))
        }
        let outcome: Result<RateLimitPermit, Refusal>
        if Task.isCancelled {
            outcome = .failure(Refusal(error: CancellationError()))
        } else if let early {
            outcome = .failure(Refusal(error: early))
        } else if let permit = state.tryAcquire(queueIndex, now: arrival) {
            outcome = .success(permit)
        } else if let deadline, arrival >= deadline {
            outcome = .failure(Refusal(error: nil))
        } else if state.waiting >= configuration.maximumQueued {
            outcome = .failure(Refusal(error: nil))
        } else {
            state.waiters[queueIndex][place.handle] = .queued(continuation)
            state.waiters[queueIndex].enqueue(place.handle)
            return nil
        }
        state.waiters[queueIndex].remove(place.handle)
        return outcome
    }

    /// A slot handed to a waiter, resumed once the lock is released.
    private struct Handover {
        var continuation: CheckedContinuation<RateLimitPermit, any Error>
        var permit: RateLimitPermit
    }

    /// Under the lock: hands free slots to the oldest waiters of the highest classes that may start.
    private static func handOver(
        _ state: inout AdaptiveLimitState, now: ResilienceInstant
    ) -> [Handover] {
        var handed: [Handover] = []
        for priorityClass in stride(from: 2, through: 0, by: -1) {
            while state.inFlight < state.threshold(priorityClass),
                let (_, waiter) = state.waiters[priorityClass].popFirst()
            {
                guard case .queued(let continuation) = waiter else { continue }
                handed.append(Handover(continuation: continuation, permit: state.admitWaiter(now: now)))
            }
            if !state.waiters[priorityClass].isEmpty { break }
        }
        return handed
    }

    /// Ends the wait at `place` with `error`: a queued waiter leaves its queue (O(1)) and is resumed; one
    /// that has not queued yet finds the error when it tries to.
    private func expire(_ place: AdaptiveLimitState.Place, error: any Error) {
        let continuation = state.withLock { state -> CheckedContinuation<RateLimitPermit, any Error>? in
            switch state.waiters[place.priorityClass][place.handle] {
            case .queued(let continuation):
                state.waiters[place.priorityClass].remove(place.handle)
                return continuation
            case .arriving:
                state.waiters[place.priorityClass][place.handle] = .arriving(early: error)
                return nil
            case nil:
                return nil
            }
        }
        continuation?.resume(throwing: error)
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
        /// The limit never goes above this: the most calls the caller can afford to have in flight.
        public var maximumLimit = 1_000
        /// Callers that may wait for a slot (0: a call that finds no slot is rejected at once, as a load
        /// shedder does; the rejection carries a retry hint).
        public var maximumQueued = 0
        /// The share of the limit sheddable calls may fill (0 < share ≤ 1): they are refused first.
        public var sheddableShare = 0.75
        /// The share of the limit critical calls may fill (≥ 1): the room above the limit kept for them.
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
