/// A bulkhead: at most `maximumConcurrent` calls at once, and a bounded first-in-first-out queue of waiters.
///
/// ``tryAcquire(now:)`` takes a free slot or answers ``RateLimitDecision/rejected(_:retryAfter:)`` with
/// ``ResilienceError/Code/bulkheadFull``; ``waitForPermit(context:)`` queues the caller (when the queue has
/// room) until a slot is handed over, the context's deadline passes, or the task is cancelled.
///
/// Waiting is a queue of continuations, not polling: a released slot goes straight to the oldest waiter,
/// which is the only task woken (one wake-up per admission), and a caller that arrives while anybody waits
/// queues behind them even if a slot is momentarily free. A waiter that gives up (its deadline passes or its
/// task is cancelled) leaves the queue in O(1) wherever it stands, without consuming a slot; a waiter
/// cancelled just after being handed a slot gives it back, so slots never leak. The deadline is watched by a
/// timer on the context's clock, started only for a caller that finds no free slot.
public final class ConcurrencyLimiter: RateLimiter {
    /// A waiter between its arrival and its departure.
    private enum Waiter {
        /// Claimed its place but has not queued yet; holds the error that ended its wait early (its deadline
        /// timer fired or it was cancelled before it could queue).
        case arriving(early: (any Error)?)
        /// Queued, suspended until a slot is handed over.
        case queued(CheckedContinuation<RateLimitPermit, any Error>)
    }

    private struct State {
        var inFlight = 0
        var waiters: WaiterQueue<Waiter>
    }

    private let state: LockedState<State>
    /// The settings it was created with.
    public let configuration: Configuration
    private let limit: Int
    private let queueLimit: Int

    /// Creates a bulkhead.
    ///
    /// - Parameter configuration: How many calls run at once and how many may wait.
    public init(_ configuration: Configuration = .standard) {
        self.configuration = configuration
        limit = max(1, configuration.maximumConcurrent)
        queueLimit = max(0, configuration.maximumQueued)
        state = LockedState(initialState: State(waiters: WaiterQueue(capacity: min(queueLimit, 64))))
    }

    /// Takes a free slot when nobody is queued, else rejects with `bulkheadFull`.
    public func tryAcquire(now: ResilienceInstant) -> RateLimitDecision {
        state.withLock { state in
            guard state.inFlight < limit, state.waiters.isEmpty else {
                return .rejected(.bulkheadFull, retryAfter: nil)
            }
            state.inFlight += 1
            return .admitted(RateLimitPermit(token: 0, admittedAt: now))
        }
    }

    /// Takes a free slot or waits in the queue for one, first come first served, within `context.deadline`.
    ///
    /// Throws ``ResilienceError`` (`bulkheadFull`) when the queue is full or the deadline passes first,
    /// `CancellationError` when the task is cancelled. Either way the caller leaves the queue at once and
    /// holds no slot.
    public func waitForPermit(context: ResilienceContext) async throws -> RateLimitPermit {
        let now = context.clock.now()
        if case .admitted(let permit) = tryAcquire(now: now) { return permit }
        if let remaining = context.remaining(now: now), remaining <= .zero {
            throw ResilienceError(.bulkheadFull, key: context.key)
        }
        try Task.checkCancellation()
        let handle = state.withLock { $0.waiters.claim(.arriving(early: nil)) }
        let timer = context.deadline.map { deadline in
            Task { [weak self] in
                try? await context.clock.sleep(until: deadline)
                guard !Task.isCancelled else { return }
                self?.expire(handle, error: ResilienceError(.bulkheadFull, key: context.key))
            }
        }
        defer { timer?.cancel() }
        let permit = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<RateLimitPermit, any Error>) in
                let arrival = context.clock.now()
                let outcome = state.withLock { state in
                    queue(handle, continuation, arrival: arrival, deadline: context.deadline, &state)
                }
                switch outcome {
                case .none: break
                case .some(.success(let permit)): continuation.resume(returning: permit)
                case .some(.failure(let reason)):
                    continuation.resume(throwing: reason.error(key: context.key))
                }
            }
        } onCancel: {
            expire(handle, error: CancellationError())
        }
        if Task.isCancelled {
            release(permit, outcome: .abandoned, now: context.clock.now())
            throw CancellationError()
        }
        return permit
    }

    /// Why a waiter could not queue.
    private enum Refusal: Error {
        case early(any Error)
        case cancelled
        case full

        func error(key: String) -> any Error {
            switch self {
            case .early(let error): error
            case .cancelled: CancellationError()
            case .full: ResilienceError(.bulkheadFull, key: key)
            }
        }
    }

    /// Under the lock: admits the arriving waiter `handle` if a slot is free and nobody is ahead, queues it
    /// (returning `nil`), or refuses it; anything but queueing frees its place.
    private func queue(
        _ handle: WaiterQueue<Waiter>.Handle, _ continuation: CheckedContinuation<RateLimitPermit, any Error>,
        arrival: ResilienceInstant, deadline: ResilienceInstant?, _ state: inout State
    ) -> Result<RateLimitPermit, Refusal>? {
        guard case .arriving(let early) = state.waiters[handle] else { return .failure(.cancelled) }
        let outcome: Result<RateLimitPermit, Refusal>
        if Task.isCancelled {
            outcome = .failure(.cancelled)
        } else if let early {
            outcome = .failure(.early(early))
        } else if state.inFlight < limit && state.waiters.isEmpty {
            state.inFlight += 1
            outcome = .success(RateLimitPermit(token: handle.generation, admittedAt: arrival))
        } else if let deadline, arrival >= deadline {
            // `arrival` was read outside the lock; a deadline that passes after it is caught by the timer.
            outcome = .failure(.full)
        } else if state.waiters.count >= queueLimit {
            outcome = .failure(.full)
        } else {
            state.waiters[handle] = .queued(continuation)
            state.waiters.enqueue(handle)
            return nil
        }
        state.waiters.remove(handle)
        return outcome
    }

    /// Frees the slot, handing it to the oldest waiter if there is one (the only task it wakes).
    public func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        let next = state.withLock { state -> (WaiterQueue<Waiter>.Handle, Waiter)? in
            guard let oldest = state.waiters.popFirst() else {
                state.inFlight = max(0, state.inFlight - 1)
                return nil
            }
            return oldest
        }
        guard let (handle, waiter) = next, case .queued(let continuation) = waiter else { return }
        continuation.resume(returning: RateLimitPermit(token: handle.generation, admittedAt: now))
    }

    /// Calls running now and callers waiting.
    public var occupancy: (running: Int, queued: Int) {
        state.withLock { ($0.inFlight, $0.waiters.count) }
    }

    /// `bulkhead(concurrent: 10, queue: 20)`.
    public var policyDescription: String {
        "bulkhead(concurrent: \(limit), queue: \(queueLimit))"
    }

    /// Ends the wait of `handle` with `error`: a queued waiter leaves the queue (O(1)) and is resumed; one
    /// that has not queued yet finds the error when it tries to.
    private func expire(_ handle: WaiterQueue<Waiter>.Handle, error: any Error) {
        let continuation = state.withLock { state -> CheckedContinuation<RateLimitPermit, any Error>? in
            switch state.waiters[handle] {
            case .queued(let continuation):
                state.waiters.remove(handle)
                return continuation
            case .arriving:
                state.waiters[handle] = .arriving(early: error)
                return nil
            case nil:
                return nil
            }
        }
        continuation?.resume(throwing: error)
    }
}

extension ConcurrencyLimiter {
    /// Settings of a ``ConcurrencyLimiter`` (a bulkhead).
    public struct Configuration: Hashable, Sendable {
        /// Calls that may run at once.
        public var maximumConcurrent = 10
        /// Callers that may wait for a slot, first come first served; more are rejected at once.
        public var maximumQueued = 20

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
