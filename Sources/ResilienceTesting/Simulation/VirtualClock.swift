import Synchronization

/// A `Clock` for simulations: time stands still while any task can run and jumps to the earliest sleeper's
/// deadline when none can.
///
/// A ``Simulation`` moves it: whenever its executor's run queue is empty, it wakes the sleeper with the
/// earliest deadline (ties in the order they went to sleep) and sets the time to that deadline. Sleeping
/// costs no real time and the clock never reads the system clock. A cancelled sleeper throws
/// `CancellationError` at once and leaves the queue. Wrap it in a `ResilienceClock` with
/// ``Simulation/resilienceClock`` for the library's stages.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public final class VirtualClock: Clock, Sendable {
    /// An instant on a virtual clock: the time since the simulation started.
    public struct Instant: InstantProtocol, Hashable, Sendable, CustomStringConvertible {
        /// Time since the clock's origin.
        public var offset: Duration
        /// Creates an instant `offset` after the origin.
        ///
        /// - Parameter offset: Time since the clock's origin.
        public init(offset: Duration) { self.offset = offset }
        /// The clock's origin.
        public static let zero = Instant(offset: .zero)
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The duration to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Orders instants.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        /// `+offset`.
        public var description: String { "+\(offset)" }
    }

    /// One suspended sleeper; its fields are guarded by the clock's lock.
    fileprivate final class Sleeper: @unchecked Sendable {
        var continuation: UnsafeContinuation<Void, any Error>?
        var cancelled = false
    }

    fileprivate struct Entry {
        var deadline: Instant
        var sequence: UInt64
        var sleeper: Sleeper

        func precedes(_ other: Entry) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && sequence < other.sequence)
        }
    }

    private struct State: ~Copyable {
        var now = Instant.zero
        var sequence: UInt64 = 0
        var heap: [Entry] = []
        var pending = 0
        /// Entries of cancelled sleepers still in the heap: dropped when they reach the top, or all at once
        /// when they make up most of it.
        var cancelledEntries = 0

        mutating func dropCancelledEntries() {
            heap.removeAll { $0.sleeper.continuation == nil }
            cancelledEntries = 0
            guard heap.count > 1 else { return }
            for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) {
                VirtualClock.siftDown(&heap, from: index)
            }
        }
    }

    private let state = Mutex(State())

    /// Creates a clock at its origin.
    public init() {}

    /// The current instant.
    public var now: Instant { state.withLock { $0.now } }

    /// The smallest step: one nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks sleep on this clock.
    public var sleeperCount: Int { state.withLock { $0.pending } }

    /// Suspends until the simulation's time reaches `deadline` (rounded up to a whole nanosecond, and at
    /// least one nanosecond from now); throws `CancellationError` when the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        let sleeper = Sleeper()
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                let cancelled = state.withLock { state -> Bool in
                    if sleeper.cancelled { return true }
                    // Every sleep takes at least one nanosecond, as a real one takes some time: a loop that
                    // sleeps until "now" (or a rounded-down instant) still lets time move.
                    let wake = max(Self.roundedUp(deadline), state.now.advanced(by: .nanoseconds(1)))
                    sleeper.continuation = continuation
                    state.sequence &+= 1
                    state.pending += 1
                    Self.push(Entry(deadline: wake, sequence: state.sequence, sleeper: sleeper), into: &state.heap)
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let continuation = state.withLock { state -> UnsafeContinuation<Void, any Error>? in
                sleeper.cancelled = true
                guard let continuation = sleeper.continuation else { return nil }
                sleeper.continuation = nil
                state.pending -= 1
                state.cancelledEntries += 1
                if state.cancelledEntries > 1024, state.cancelledEntries * 2 > state.heap.count {
                    state.dropCancelledEntries()
                }
                return continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// The earliest deadline any task sleeps until, if any.
    public var nextDeadline: Instant? {
        state.withLock { state in
            while let first = state.heap.first, first.sleeper.continuation == nil {
                _ = Self.pop(&state.heap)
                state.cancelledEntries -= 1
            }
            return state.heap.first?.deadline
        }
    }

    /// Wakes the earliest sleeper whose deadline is at or before `limit` (any when `nil`), moving time to its
    /// deadline; returns `false` when there is none.
    func wakeNext(notAfter limit: Instant?) -> Bool {
        let continuation = state.withLock { state -> UnsafeContinuation<Void, any Error>? in
            while let first = state.heap.first {
                guard let continuation = first.sleeper.continuation else {
                    // Cancelled while asleep: already resumed, only its entry is left.
                    _ = Self.pop(&state.heap)
                    state.cancelledEntries -= 1
                    continue
                }
                if let limit, limit < first.deadline { return nil }
                _ = Self.pop(&state.heap)
                first.sleeper.continuation = nil
                state.pending -= 1
                if state.now < first.deadline { state.now = first.deadline }
                return continuation
            }
            return nil
        }
        guard let continuation else { return false }
        continuation.resume()
        return true
    }

    /// Moves time forward to `instant` without waking anybody (used when a run stops at its time limit).
    func advance(to instant: Instant) {
        state.withLock { state in if state.now < instant { state.now = instant } }
    }

    /// `instant` rounded up to a whole nanosecond.
    private static func roundedUp(_ instant: Instant) -> Instant {
        let (seconds, attoseconds) = instant.offset.components
        let remainder = attoseconds % 1_000_000_000
        guard remainder != 0 else { return instant }
        let nanoseconds = attoseconds / 1_000_000_000 + (remainder > 0 ? 1 : 0)
        return Instant(offset: .seconds(seconds) + .nanoseconds(nanoseconds))
    }

    private static func push(_ entry: Entry, into heap: inout [Entry]) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func pop(_ heap: inout [Entry]) -> Entry {
        let top = heap[0]
        let last = heap.removeLast()
        guard !heap.isEmpty else { return top }
        heap[0] = last
        siftDown(&heap, from: 0)
        return top
    }

    fileprivate static func siftDown(_ heap: inout [Entry], from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { break }
            var best = left
            if left + 1 < heap.count, heap[left + 1].precedes(heap[left]) { best = left + 1 }
            guard heap[best].precedes(heap[parent]) else { break }
            heap.swapAt(best, parent)
            parent = best
        }
    }
}
