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
        var queue: WaiterRing<Waiter>
        /// Waiters that have an id but are not queued yet, with the error that ended their wait early (their
        /// deadline timer fired, or they were cancelled) before they could queue.
        var arriving: [UInt64: (any Error)?] = [:]
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
        state = LockedState(initialState: State(queue: WaiterRing(capacity: min(queueLimit, 64))))
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
            state.arriving[state.nextID] = .some(nil)
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
                // Read outside the lock; a deadline that passes after this reading is caught by the timer,
                // which records its expiry for a waiter that has not queued yet.
                let arrival = context.clock.now()
                let action = state.withLock { state -> Action in
                    let early = state.arriving.removeValue(forKey: id) ?? nil
                    if Task.isCancelled { return .fail(CancellationError()) }
                    if let early { return .fail(early) }
                    if state.inFlight < limit && state.queue.isEmpty {
                        state.inFlight += 1
                        return .admit(RateLimitPermit(token: id, admittedAt: arrival))
                    }
                    if let deadline = context.deadline, arrival >= deadline {
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
            return state.queue.popFirst()
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
            if let queued = state.queue.remove(where: { $0.id == id }) { return queued }
            if state.arriving[id] != nil { state.arriving[id] = .some(error) }
            return nil
        }
        waiter?.continuation.resume(throwing: error)
    }
}

/// A first-in-first-out ring buffer: appending and taking the oldest element cost O(1); removing one from
/// the middle (a waiter that gave up) shifts the elements after it.
struct WaiterRing<Element> {
    private var storage: [Element?]
    private var head = 0
    private(set) var count = 0

    /// An empty ring with room for `capacity` elements before it grows.
    init(capacity: Int) {
        storage = Array(repeating: nil, count: max(capacity, 1))
    }

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = element
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        return element
    }

    /// Removes and returns the oldest element matching `predicate`, if any.
    mutating func remove(where predicate: (Element) -> Bool) -> Element? {
        let capacity = storage.count
        guard let offset = (0..<count).first(where: { storage[(head + $0) % capacity].map(predicate) ?? false }) else {
            return nil
        }
        let element = storage[(head + offset) % capacity]
        for later in offset..<(count - 1) {
            storage[(head + later) % capacity] = storage[(head + later + 1) % capacity]
        }
        storage[(head + count - 1) % capacity] = nil
        count -= 1
        return element
    }

    private mutating func grow() {
        var grown = [Element?](repeating: nil, count: storage.count * 2)
        for index in 0..<count { grown[index] = storage[(head + index) % storage.count] }
        storage = grown
        head = 0
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
