/// A `Clock` whose time moves only when a test says so: deterministic timing without real sleeping.
///
/// Sleepers suspend until ``advance(by:)`` or ``advance(to:)`` moves time past their deadline; they resume
/// in deadline order (ties in the order they went to sleep). A cancelled sleeper throws
/// `CancellationError` at once. Tests can see and await pending sleepers, so they advance time only after
/// the code under test has actually gone to sleep.
///
/// ```swift
/// let clock = ManualClock()
/// let task = Task { try await clock.sleep(for: .seconds(5)) }
/// await clock.waitForSleepers(count: 1)
/// clock.advance(by: .seconds(5))   // the task resumes
/// ```
public final class ManualClock: Clock, Sendable {
    /// An instant on a manual clock: the time since the clock was created.
    public struct Instant: InstantProtocol, Hashable, Sendable, CustomStringConvertible {
        /// Time since the clock's origin.
        public var offset: Duration
        /// Creates an instant.
        ///
        /// - Parameter offset: Time since the clock's origin.
        public init(offset: Duration) { self.offset = offset }
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The duration to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Orders instants.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        /// `+offset`.
        public var description: String { "+\(offset)" }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>?
        var cancelled: Bool
    }

    private struct State {
        var now: Instant
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
        var nextWaiterID: UInt64 = 0
        var sleeperWaiters: [(id: UInt64, count: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// Waiters whose task was cancelled before they were queued.
        var cancelledWaiters: Set<UInt64> = []
    }

    private let state: LockedState<State>

    /// Creates a clock at `offset` past its origin (zero by default).
    ///
    /// - Parameter offset: Time since the clock's origin. Default: `.zero`.
    public init(now offset: Duration = .zero) {
        state = LockedState(initialState: State(now: Instant(offset: offset)))
    }

    /// The current instant.
    public var now: Instant { state.withLock { $0.now } }

    /// The smallest step: one nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks are asleep on this clock.
    public var sleeperCount: Int { state.withLock { $0.sleepers.values.filter { $0.continuation != nil }.count } }

    /// The earliest pending deadline, if anybody sleeps.
    public var nextDeadline: Instant? {
        state.withLock { $0.sleepers.values.filter { $0.continuation != nil }.map(\.deadline).min() }
    }

    /// Suspends until time reaches `deadline`; throws `CancellationError` when the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Action { case resume, cancel, wait([CheckedContinuation<Void, Never>]) }
                let action = state.withLock { state -> Action in
                    if state.sleepers[id]?.cancelled == true {
                        state.sleepers[id] = nil
                        return .cancel
                    }
                    if deadline <= state.now { return .resume }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation, cancelled: false)
                    return .wait(Self.releaseSleeperWaiters(&state))
                }
                switch action {
                case .resume: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                case .wait(let waiters): waiters.forEach { $0.resume() }
                }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                if let sleeper = state.sleepers[id] {
                    state.sleepers[id] = nil
                    return sleeper.continuation
                }
                state.sleepers[id] = Sleeper(deadline: deadline, continuation: nil, cancelled: true)
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration`, waking every sleeper whose deadline is reached.
    public func advance(by duration: Duration) {
        advance(to: now.advanced(by: duration))
    }

    /// Moves time to `instant` (never backwards), waking sleepers in deadline order.
    public func advance(to instant: Instant) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            if instant > state.now { state.now = instant }
            let ready = state.sleepers
                .filter { $0.value.continuation != nil && $0.value.deadline <= state.now }
                .sorted { ($0.value.deadline, $0.key) < ($1.value.deadline, $1.key) }
            for (id, _) in ready { state.sleepers[id] = nil }
            return ready.compactMap(\.value.continuation)
        }
        due.forEach { $0.resume() }
    }

    /// Advances to the earliest pending deadline, if any; returns whether anybody was woken.
    @discardableResult
    public func advanceToNextDeadline() -> Bool {
        guard let deadline = nextDeadline else { return false }
        advance(to: deadline)
        return true
    }

    /// Suspends until at least `count` tasks are asleep on this clock, or until the waiting task is cancelled
    /// (a test's time limit), whichever comes first.
    public func waitForSleepers(count: Int = 1) async {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextWaiterID += 1 }
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.cancelledWaiters.remove(id) != nil { return true }
                    if state.sleepers.values.filter({ $0.continuation != nil }).count >= count { return true }
                    state.sleeperWaiters.append((id, count, continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.sleeperWaiters.firstIndex(where: { $0.id == id }) else {
                    state.cancelledWaiters.insert(id)
                    return nil
                }
                return state.sleeperWaiters.remove(at: index).continuation
            }
            continuation?.resume()
        }
    }

    private static func releaseSleeperWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        let asleep = state.sleepers.values.filter { $0.continuation != nil }.count
        var released: [CheckedContinuation<Void, Never>] = []
        state.sleeperWaiters.removeAll { waiter in
            guard waiter.count <= asleep else { return false }
            released.append(waiter.continuation)
            return true
        }
        return released
    }
}

extension ResilienceClock {
    /// Wraps a ``ManualClock`` with the manual clock's zero as origin, so both report the same offsets
    /// whenever the wrapper is made.
    public static func manual(_ clock: ManualClock) -> ResilienceClock {
        ResilienceClock(clock, origin: ManualClock.Instant(offset: .zero))
    }
}
