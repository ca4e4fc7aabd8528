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
        /// The instant `nanoseconds` after the origin.
        init(nanoseconds: Int64) {
            // Cannot overflow (|nanoseconds| ≤ 2⁶³, times 10⁹ < 2⁹³): the wrapping product is the exact one.
            offset = Duration(attosecondCount: Int128(nanoseconds) &* 1_000_000_000)
        }
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: Duration(attosecondCount: offset.attosecondCount + duration.attosecondCount))
        }
        /// The duration to `other`.
        public func duration(to other: Instant) -> Duration {
            Duration(attosecondCount: other.offset.attosecondCount - offset.attosecondCount)
        }
        /// Orders instants.
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset.attosecondCount < rhs.offset.attosecondCount
        }
        /// `+offset`.
        public var description: String { "+\(offset)" }
    }

    /// One sleep: its continuation while it waits. Slots are reused; `ticket` (the sleep's sequence number,
    /// zero when the slot is free) tells a cancellation handler whether the slot is still theirs, and `order`
    /// (the sequence number of the sleep's current heap entry) tells a heap entry the same. They differ only
    /// once a relayed sleep (``VirtualClockRelay``) has gone back to sleep.
    fileprivate struct Slot {
        var continuation: UnsafeContinuation<Void, any Error>?
        var ticket: UInt64 = 0
        var order: UInt64 = 0
        var cancelled = false
        /// Runs when the sleep's deadline comes, before the task is resumed (relayed sleeps only).
        var relay: (any VirtualClockRelay)?
        /// Whether the relay is running: the sleep has no heap entry until it is done.
        var relaying = false
    }

    /// A heap entry: plain numbers, so reordering the heap costs no reference counting.
    fileprivate struct Entry {
        /// The wake-up time in nanoseconds from the origin.
        var wake: Int64
        /// The order of the sleep (ties in `wake` wake in this order); also the slot's ticket.
        var sequence: UInt64
        var slot: Int

        func precedes(_ other: Entry) -> Bool {
            wake < other.wake || (wake == other.wake && sequence < other.sequence)
        }
    }

    private struct State: ~Copyable {
        var now = Instant.zero
        var sequence: UInt64 = 0
        var heap: [Entry] = []
        var slots: [Slot] = []
        var freeSlots: [Int] = []
        var pending = 0
        /// Entries of cancelled sleepers still in the heap: dropped when they reach the top, or all at once
        /// when they make up most of it.
        var cancelledEntries = 0

        /// Takes a slot for a new sleep and returns it with the sleep's ticket.
        mutating func reserve() -> (slot: Int, ticket: UInt64) {
            sequence &+= 1
            let slot: Int
            if let free = freeSlots.popLast() {
                slot = free
            } else {
                slot = slots.count
                slots.append(Slot())
            }
            slots[slot] = Slot(continuation: nil, ticket: sequence, order: sequence)
            return (slot, sequence)
        }

        mutating func release(_ slot: Int) {
            slots[slot] = Slot()
            freeSlots.append(slot)
        }

        func isLive(_ entry: Entry) -> Bool { slots[entry.slot].order == entry.sequence }

        /// Pops entries of cancelled sleepers off the top.
        mutating func dropCancelledTop() {
            guard cancelledEntries > 0 else { return }
            while let first = heap.first, !isLive(first) {
                _ = VirtualClock.pop(&heap)
                cancelledEntries -= 1
            }
        }

        mutating func dropCancelledEntries() {
            let slots = slots
            heap.removeAll { slots[$0.slot].order != $0.sequence }
            cancelledEntries = 0
            guard heap.count > 1 else { return }
            for index in stride(from: (heap.count - 2) / VirtualClock.arity, through: 0, by: -1) {
                VirtualClock.siftDown(&heap, from: index)
            }
        }
    }

    private let state = Mutex(State())
    /// The current time in whole nanoseconds from the origin, or -1 when it is not a whole number of them (a
    /// run stopped at a fractional time limit): read without the lock. Only the driving thread moves time,
    /// while holding the lock.
    private let currentNanoseconds = Atomic<Int64>(0)

    /// Creates a clock at its origin.
    public init() {}

    /// The current instant.
    public var now: Instant {
        let nanoseconds = currentNanoseconds.load(ordering: .acquiring)
        if nanoseconds >= 0 { return Instant(nanoseconds: nanoseconds) }
        return state.withLock { $0.now }
    }

    /// The current time in nanoseconds from the origin, rounded down (what ``SimulationTrace`` stamps events with).
    var nanosecondsNow: UInt64 {
        let nanoseconds = currentNanoseconds.load(ordering: .acquiring)
        if nanoseconds >= 0 { return UInt64(nanoseconds) }
        return SimulationTrace.nanoseconds(state.withLock { $0.now }.offset)
    }

    /// `nanoseconds(state.now)`: the current time in nanoseconds, rounded up (with the lock held), from its
    /// lock-free copy when it is a whole number of them.
    private func nanosecondsNow(_ state: borrowing State) -> Int64 {
        let nanoseconds = currentNanoseconds.load(ordering: .relaxed)
        return nanoseconds >= 0 ? nanoseconds : Self.nanoseconds(state.now)
    }

    /// Sets the time (with the lock held) and its lock-free copy.
    private func setNow(_ instant: Instant, _ state: inout State) {
        state.now = instant
        let nanosecond: UInt64 = 1_000_000_000
        let (whole, remainder) = instant.offset.attosecondCount.quotientAndRemainder(dividingBy: nanosecond)
        let exact = remainder == 0 && whole >= 0 && whole <= Int128(Int64.max)
        currentNanoseconds.store(exact ? Int64(whole) : -1, ordering: .releasing)
    }

    /// Sets the time to `nanoseconds` from the origin (with the lock held) and its lock-free copy.
    private func setNow(nanoseconds: Int64, _ state: inout State) {
        state.now = Instant(nanoseconds: nanoseconds)
        currentNanoseconds.store(nanoseconds >= 0 ? nanoseconds : -1, ordering: .releasing)
    }

    /// The smallest step: one nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// How many tasks sleep on this clock.
    public var sleeperCount: Int { state.withLock { $0.pending } }

    /// Suspends until the simulation's time reaches `deadline` (rounded up to a whole nanosecond, and at
    /// least one nanosecond from now); throws `CancellationError` when the task is cancelled first.
    ///
    /// Deadlines more than about 292 years from the origin are treated as that far.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try await suspend(untilNanoseconds: Self.nanoseconds(deadline))
    }

    /// Sleeps until `deadline` and then, at every deadline, runs `step` instead of resuming the task: on the
    /// simulation's driving thread, with the clock reading that deadline and nothing else running, as the
    /// task's own code would have run had it been woken there. The task sleeps on until the instant `step`
    /// returns, and resumes when it returns `nil`; it throws `CancellationError` when cancelled first (no
    /// further step runs).
    ///
    /// For a task whose work at most deadlines is short and synchronous, such as a client that starts a
    /// request at each of a series of instants and hands it to a task that waits for one: a step costs no
    /// task switch, no executor hop and no cancellation handler, and events happen in the same order and at
    /// the same virtual times as with a loop of sleeps (a step's next sleep is ordered, among sleeps with the
    /// same deadline, as a sleep that began when the step returned). Deadlines round and move as in
    /// ``sleep(until:tolerance:)``.
    public func sleep(until deadline: Instant, relaying step: @escaping @Sendable () -> Instant?) async throws {
        try await suspend(untilNanoseconds: Self.nanoseconds(deadline), relay: StepRelay(step: step))
    }

    #if compiler(>=6.2)
    /// ``sleep(until:tolerance:)`` with the deadline in nanoseconds, for this module's own waits.
    ///
    /// It runs on its caller's executor. Its only callers, the two `sleep` methods and the simulated
    /// transport, are non-isolated, so it runs exactly where it did as a plain non-isolated function, minus
    /// executor hops that changed nothing but each cost a look-up of the task's executor preference under the
    /// task's status lock. The cancellation handler is installed by the variant of
    /// `withTaskCancellationHandler` that inherits its caller's executor: the same handler record, without the
    /// hops to the `isolation` parameter's executor (none: the caller is non-isolated) on entry and after the
    /// operation, which the isolated variant makes on every sleep.
    nonisolated(nonsending) func suspend(
        untilNanoseconds target: Int64, relay: (any VirtualClockRelay)? = nil
    ) async throws {
        let (slot, ticket) = try reserveSleep()
        try await _unsafeInheritExecutor_withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation {
                enqueue($0, slot: slot, ticket: ticket, target: target, relay: relay)
            }
        } onCancel: {
            cancel(slot: slot, ticket: ticket)
        }
    }
    #else
    /// ``sleep(until:tolerance:)`` with the deadline in nanoseconds, for this module's own waits.
    func suspend(untilNanoseconds target: Int64, relay: (any VirtualClockRelay)? = nil) async throws {
        let (slot, ticket) = try reserveSleep()
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation {
                enqueue($0, slot: slot, ticket: ticket, target: target, relay: relay)
            }
        } onCancel: {
            cancel(slot: slot, ticket: ticket)
        }
    }
    #endif

    /// Takes a slot and a ticket for a sleep that is about to begin; throws `CancellationError` at once when
    /// the task is already cancelled.
    private func reserveSleep() throws -> (slot: Int, ticket: UInt64) {
        try Task.checkCancellation()
        return state.withLock { $0.reserve() }
    }

    /// Puts the sleep of `slot` in the queue, or ends it at once when it was cancelled before it got there.
    private func enqueue(
        _ continuation: UnsafeContinuation<Void, any Error>, slot: Int, ticket: UInt64, target: Int64,
        relay: (any VirtualClockRelay)?
    ) {
        let cancelled = state.withLock { state -> Bool in
            if state.slots[slot].cancelled {
                state.release(slot)
                return true
            }
            // Every sleep takes at least one nanosecond, as a real one takes some time: a loop that sleeps
            // until "now" (or a rounded-down instant) still lets time move.
            let now = nanosecondsNow(state)
            let wake = max(target, now == .max ? now : now + 1)
            state.slots[slot].continuation = continuation
            state.slots[slot].relay = relay
            state.pending += 1
            Self.push(Entry(wake: wake, sequence: ticket, slot: slot), into: &state.heap)
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
    }

    /// Ends the sleep of `slot` (if it is still that sleep's) with `CancellationError`.
    private func cancel(slot: Int, ticket: UInt64) {
        let continuation = state.withLock { state -> UnsafeContinuation<Void, any Error>? in
            // Woken (and the slot maybe reused) before the cancellation arrived: nothing to do.
            guard state.slots[slot].ticket == ticket else { return nil }
            guard let continuation = state.slots[slot].continuation else {
                // Not asleep yet: the sleep sees the flag and ends at once.
                state.slots[slot].cancelled = true
                return nil
            }
            // A sleep whose relay runs has no heap entry to leave behind.
            let inHeap = !state.slots[slot].relaying
            state.release(slot)
            state.pending -= 1
            guard inHeap else { return continuation }
            state.cancelledEntries += 1
            if state.cancelledEntries > 1024, state.cancelledEntries * 2 > state.heap.count {
                state.dropCancelledEntries()
            }
            return continuation
        }
        continuation?.resume(throwing: CancellationError())
    }

    /// The earliest deadline any task sleeps until, if any.
    public var nextDeadline: Instant? {
        state.withLock { state in
            state.dropCancelledTop()
            return state.heap.first.map { Instant(nanoseconds: $0.wake) }
        }
    }

    /// Wakes the earliest sleeper whose deadline is at or before `limit` (nanoseconds from the origin, an
    /// instant rounded up as a sleep's deadline is by ``nanoseconds(_:)``; any when `nil`), moving time to its
    /// deadline; returns `false` when there is none.
    func wakeNext(notAfterNanoseconds limit: Int64?) -> Bool {
        let woken = state.withLock { state -> Woken? in
            state.dropCancelledTop()
            guard let first = state.heap.first else { return nil }
            if let limit, limit < first.wake { return nil }
            _ = Self.pop(&state.heap)
            if state.now < Instant(nanoseconds: first.wake) { setNow(nanoseconds: first.wake, &state) }
            if let relay = state.slots[first.slot].relay {
                // The sleep goes on after its relay: the slot stays the task's.
                state.slots[first.slot].relay = nil
                state.slots[first.slot].relaying = true
                return .relay(relay, slot: first.slot, ticket: state.slots[first.slot].ticket)
            }
            let continuation = state.slots[first.slot].continuation
            state.release(first.slot)
            state.pending -= 1
            return continuation.map(Woken.resume)
        }
        switch woken {
        case nil:
            return false
        case .resume(let continuation):
            continuation.resume()
        case .relay(let relay, let slot, let ticket):
            // Outside the lock: the relay may read the clock and record events, exactly as the task would have
            // done had it been resumed here (nothing else runs in between: the run queue is empty).
            let next = relay.relay()
            resumeAfterRelay(slot: slot, ticket: ticket, next: next, relay: relay)?.resume()
        }
        return true
    }

    /// What ``wakeNext(notAfter:)`` found at the top of the heap.
    private enum Woken {
        case resume(UnsafeContinuation<Void, any Error>)
        case relay(any VirtualClockRelay, slot: Int, ticket: UInt64)
    }

    /// Puts a relayed sleep back in the heap until `next` (as a new sleep that began now would be: the same
    /// ordering and the same one-nanosecond minimum), or returns its continuation to resume when `next` is
    /// `nil`. Returns `nil` when the sleep was cancelled while its relay ran.
    private func resumeAfterRelay(
        slot: Int, ticket: UInt64, next: Int64?, relay: any VirtualClockRelay
    ) -> UnsafeContinuation<Void, any Error>? {
        state.withLock { state -> UnsafeContinuation<Void, any Error>? in
            guard state.slots[slot].ticket == ticket else { return nil }
            state.slots[slot].relaying = false
            if relay.relaysAgain { state.slots[slot].relay = relay }
            guard let next else {
                let continuation = state.slots[slot].continuation
                state.release(slot)
                state.pending -= 1
                return continuation
            }
            state.sequence &+= 1
            state.slots[slot].order = state.sequence
            let now = nanosecondsNow(state)
            let wake = max(next, now == .max ? now : now + 1)
            Self.push(Entry(wake: wake, sequence: state.sequence, slot: slot), into: &state.heap)
            return nil
        }
    }

    /// Moves time forward to `instant` without waking anybody (used when a run stops at its time limit).
    func advance(to instant: Instant) {
        state.withLock { state in if state.now < instant { setNow(instant, &state) } }
    }

    /// `instant` in whole nanoseconds from the origin, rounded up, clamped to the range of `Int64`.
    static func nanoseconds(_ instant: Instant) -> Int64 {
        let nanosecond: UInt64 = 1_000_000_000
        let (whole, remainder) = instant.offset.attosecondCount.quotientAndRemainder(dividingBy: nanosecond)
        let rounded = remainder > 0 ? whole + 1 : whole
        if rounded > Int128(Int64.max) { return .max }
        if rounded < Int128(Int64.min) { return .min }
        return Int64(rounded)
    }

    /// Children per node of the sleepers' heap: a four-ary heap is half as deep as a binary one, so taking
    /// the earliest sleeper off a heap of thousands touches half as many cache lines. The order in which
    /// sleepers wake does not depend on the heap's shape: (wake, sequence) orders them totally.
    fileprivate static let arity = 4

    private static func push(_ entry: Entry, into heap: inout [Entry]) {
        heap.append(entry)
        heap.withUnsafeMutableBufferPointer { heap in
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / arity
                guard entry.precedes(heap[parent]) else { break }
                heap[child] = heap[parent]
                child = parent
            }
            heap[child] = entry
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
        heap.withUnsafeMutableBufferPointer { heap in
            let entry = heap[start]
            var parent = start
            while true {
                let first = arity * parent + 1
                guard first < heap.count else { break }
                var best = first
                for child in (first + 1)..<min(first + arity, heap.count) where heap[child].precedes(heap[best]) {
                    best = child
                }
                guard heap[best].precedes(entry) else { break }
                heap[parent] = heap[best]
                parent = best
            }
            heap[parent] = entry
        }
    }
}

/// A step that a sleep on a ``VirtualClock`` runs when its deadline comes, on the driving thread, instead of
/// resuming its task there and then: what the task would have done synchronously before its next sleep (a
/// simulated server deciding a request's answer), followed by that next sleep, without the task switch in
/// between. Events happen in the same order and at the same virtual times as with two sleeps.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
protocol VirtualClockRelay: AnyObject, Sendable {
    /// Runs when the sleep's deadline comes (the clock reads that instant); returns the deadline in
    /// nanoseconds to sleep on until, or `nil` to resume the task now.
    func relay() -> Int64?
    /// Whether the relay runs again at the deadline it returned (`true`), or the task resumes there (`false`).
    var relaysAgain: Bool { get }
}

/// Time arithmetic on the simulation's hot paths. The standard library's `Duration` operators and
/// `components` are not inlinable and work on a software 128-bit integer (a few hundred instructions for a
/// `.nanoseconds(_:)` or a `components`, several per simulated request); a duration is a signed count of
/// attoseconds stored as a signed high and an unsigned low half, so the native `Int128` gives the same
/// answers in a few instructions (overflow traps, as the standard library's operators do).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension Duration {
    /// The duration in attoseconds.
    var attosecondCount: Int128 { Int128(_low: _low, _high: _high) }

    /// The duration of `attosecondCount` attoseconds.
    init(attosecondCount: Int128) { self.init(_high: attosecondCount._high, low: attosecondCount._low) }

    /// `self * factor`, the same value as the standard library's operator (the attoseconds converted to the
    /// nearest `Double`, multiplied, and truncated toward zero), without its generic 128-bit conversions.
    func scaled(by factor: Double) -> Duration {
        Duration(attosecondCount: Int128(truncating: attosecondCount.nearestDouble * factor))
    }

    /// `Duration.seconds(seconds)`, the same value as the standard library's (the whole seconds exactly, the
    /// fraction rounded to the nearest attosecond), without its generic 128-bit conversions.
    init(seconds: Double) {
        let whole = seconds.rounded(.towardZero)
        let fraction = Int128(truncating: ((seconds - whole) * 1e18).rounded())
        self.init(attosecondCount: Int128(truncating: whole) * 1_000_000_000_000_000_000 + fraction)
    }

    /// `self / other`, the same value as the standard library's operator (both converted to the nearest
    /// `Double`, then divided), without its generic 128-bit conversions.
    func ratio(to other: Duration) -> Double { attosecondCount.nearestDouble / other.attosecondCount.nearestDouble }
}

/// The 128-bit conversions and divisions behind the time arithmetic above. The standard library's
/// conversions between `Int128` and `Double` go through a generic routine (about a hundred instructions),
/// and a 128-bit division calls a library routine; these give the same results, in a few instructions for
/// the values a simulation meets.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension Int128 {
    /// `Double(self)`: the nearest `Double`, ties to even.
    ///
    /// A value of 64 bits converts in one instruction. A wider one keeps its top 64 bits, with the lowest of
    /// them set when any bit below was (a sticky bit), and converts that: with 11 bits to spare below the 53
    /// the `Double` keeps, rounding that number rounds the whole value the same way. The power-of-two scale
    /// that follows is exact.
    var nearestDouble: Double {
        if _high == Int64(bitPattern: _low) >> 63 { return Double(Int64(bitPattern: _low)) }
        let magnitude = self.magnitude
        let shift = 64 - magnitude._high.leadingZeroBitCount
        let kept = UInt64(truncatingIfNeeded: magnitude >> shift)
        let sticky: UInt64 = magnitude & ((1 as UInt128) << shift &- 1) == 0 ? 0 : 1
        let value = Double(kept | sticky) * Double(sign: .plus, exponent: shift, significand: 1)
        return self < 0 ? -value : value
    }

    /// `Int128(value)`: `value` truncated toward zero (traps when it is not finite or out of range).
    init(truncating value: Double) {
        if abs(value) < 0x1p63 {
            self.init(Int64(value))
        } else {
            self.init(value)
        }
    }

    /// `quotientAndRemainder(dividingBy: Int128(divisor))`: in one 64-bit hardware division when the value
    /// is not negative and the quotient fits in 64 bits (every instant of a simulation, in nanoseconds or
    /// seconds), else with the 128-bit division.
    func quotientAndRemainder(dividingBy divisor: UInt64) -> (quotient: Int128, remainder: Int128) {
        guard self >= 0, UInt64(bitPattern: _high) < divisor else {
            return quotientAndRemainder(dividingBy: Int128(divisor))
        }
        let (quotient, remainder) = divisor.dividingFullWidth((high: UInt64(bitPattern: _high), low: _low))
        return (Int128(quotient), Int128(remainder))
    }
}

/// The relay of ``VirtualClock/sleep(until:relaying:)``: runs the step at every deadline it returns.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
private final class StepRelay: VirtualClockRelay {
    let step: @Sendable () -> VirtualClock.Instant?

    init(step: @escaping @Sendable () -> VirtualClock.Instant?) { self.step = step }

    func relay() -> Int64? { step().map(VirtualClock.nanoseconds) }

    var relaysAgain: Bool { true }
}
