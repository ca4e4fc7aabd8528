/// A bulkhead: at most `maximumConcurrent` calls at once, and a bounded first-in-first-out queue of waiters.
///
/// ``tryAcquire(now:)`` takes a free slot or answers ``RateLimitDecision/rejected(_:retryAfter:)`` with
/// ``ResilienceError/Code/bulkheadFull``; ``waitForPermit(context:)`` queues the caller (when the queue has
/// room) until a slot is handed over, the context's deadline passes, or the task is cancelled. A released
/// slot goes straight to the oldest waiter. A cancelled waiter leaves the queue without consuming a slot; a
/// waiter cancelled just after being handed a slot gives it back, so slots never leak.
public final class ConcurrencyLimiter: RateLimiter {
    private typealias Waiter = (id: UInt64, continuation: CheckedContinuation<RateLimitPermit, any Error>)

    private struct State {
        var inFlight = 0
        var nextID: UInt64 = 1
        var queue: [Waiter] = []
    }

    private let state: LockedState<State>
    /// The settings it was created with.
    public let configuration: Configuration
    private let limit: Int
    private let queueLimit: Int

    /// Creates a bulkhead.
    public init(_ configuration: Configuration = .standard) {
        self.configuration = configuration
        limit = max(1, configuration.maximumConcurrent)
        queueLimit = max(0, configuration.maximumQueued)
        var initial = State()
        initial.queue.reserveCapacity(queueLimit)
        state = LockedState(initialState: initial)
    }

    /// Takes a free slot when nobody is queued, else rejects with `bulkheadFull`.
    public func tryAcquire(now: ResilienceInstant) -> RateLimitDecision {
        state.withLock { state in
            guard state.inFlight < limit, state.queue.isEmpty else {
                return .rejected(.bulkheadFull, retryAfter: nil)
            }
            state.inFlight += 1
            return .admitted(RateLimitPermit(token: 0, admittedAt: now))
        }
    }

    /// Takes a free slot or waits in the queue for one, within `context.deadline`.
    ///
    /// Throws ``ResilienceError`` (`bulkheadFull`) when the queue is full or the deadline passes first,
    /// `CancellationError` when the task is cancelled.
    public func waitForPermit(context: ResilienceContext) async throws -> RateLimitPermit {
        let now = context.clock.now()
        if case .admitted(let permit) = tryAcquire(now: now) { return permit }
        if let remaining = context.remaining(now: now), remaining <= .zero {
            throw ResilienceError(.bulkheadFull, key: context.key)
        }
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID &+= 1 }
            return state.nextID
        }
        let timer = context.deadline.map { deadline in
            Task { [weak self] in
                try? await context.clock.sleep(until: deadline)
                guard !Task.isCancelled else { return }
                self?.expire(id, error: ResilienceError(.bulkheadFull, key: context.key))
            }
        }
        defer { timer?.cancel() }
        let permit = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<RateLimitPermit, any Error>) in
                enum Action { case wait, admit(RateLimitPermit), fail(any Error) }
                let action = state.withLock { state -> Action in
                    if Task.isCancelled { return .fail(CancellationError()) }
                    if state.inFlight < limit && state.queue.isEmpty {
                        state.inFlight += 1
                        return .admit(RateLimitPermit(token: id, admittedAt: context.clock.now()))
                    }
                    // Checked under the lock, so a deadline timer that fired before this waiter was queued
                    // cannot leave it waiting past the deadline.
                    if let deadline = context.deadline, context.clock.now() >= deadline {
                        return .fail(ResilienceError(.bulkheadFull, key: context.key))
                    }
                    guard state.queue.count < queueLimit else {
                        return .fail(ResilienceError(.bulkheadFull, key: context.key))
                    }
                    state.queue.append((id, continuation))
                    return .wait
                }
                switch action {
                case .wait: break
                case .admit(let permit): continuation.resume(returning: permit)
                case .fail(let error): continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            expire(id, error: CancellationError())
        }
        if Task.isCancelled {
            release(permit, outcome: .abandoned, now: context.clock.now())
            throw CancellationError()
        }
        return permit
    }

    /// Frees the slot, handing it to the oldest waiter if there is one.
    public func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        let next = state.withLock { state -> Waiter? in
            if state.queue.isEmpty {
                state.inFlight = max(0, state.inFlight - 1)
                return nil
            }
            return state.queue.removeFirst()
        }
        next?.continuation.resume(returning: RateLimitPermit(token: next?.id ?? 0, admittedAt: now))
    }

    /// Calls running now and callers waiting.
    public var occupancy: (running: Int, queued: Int) {
        state.withLock { ($0.inFlight, $0.queue.count) }
    }

    /// `bulkhead(concurrent: 10, queue: 20)`.
    public var policyDescription: String {
        "bulkhead(concurrent: \(limit), queue: \(queueLimit))"
    }

    private func expire(_ id: UInt64, error: any Error) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.queue.firstIndex(where: { $0.id == id }) else { return nil }
            return state.queue.remove(at: index)
        }
        waiter?.continuation.resume(throwing: error)
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
