/// The waiters of a concurrency limit, one first-in-first-out queue per priority class (0 sheddable, 1 default,
/// 2 critical), each left in O(1) wherever a waiter stands (``WaiterQueue``).
struct PriorityWaiters {
    /// A waiter between its arrival and its departure.
    enum Waiter {
        /// Claimed its place but has not queued yet; holds the error that ended its wait early (its deadline
        /// timer fired or it was cancelled before it could queue).
        case arriving(early: (any Error)?)
        /// Queued, suspended until a slot is handed over.
        case queued(CheckedContinuation<RateLimitPermit, any Error>)
    }

    /// A waiter's place: its priority class and its handle in that class's queue.
    struct Place: Sendable {
        var priorityClass: Int
        var handle: WaiterQueue<Waiter>.Handle
    }

    /// The priority classes, lowest first.
    static let classes = 3

    private var queues: [WaiterQueue<Waiter>]
    /// Waiters queued in every class (claimed places that have not queued are not counted): kept beside the
    /// queues, so that admission and release, when nobody waits, read one number instead of three queues.
    private(set) var count = 0

    /// Empty queues with room for `capacity` waiters each before they grow.
    init(capacity: Int) {
        queues = (0..<Self.classes).map { _ in WaiterQueue(capacity: capacity) }
    }

    /// The class of `priority`: 2 for critical and above, 1 for default and above, 0 below.
    static func priorityClass(_ priority: RequestPriority) -> Int {
        priority >= .critical ? 2 : priority >= .default ? 1 : 0
    }

    /// Whether anybody of `priorityClass` or a higher class waits.
    func anyWaiting(from priorityClass: Int) -> Bool {
        guard count > 0 else { return false }
        for waiting in max(priorityClass, 0)..<Self.classes where !queues[waiting].isEmpty { return true }
        return false
    }

    /// Claims a place in `priorityClass`'s queue for a waiter that has not queued yet.
    mutating func claim(_ priorityClass: Int) -> Place {
        Place(priorityClass: priorityClass, handle: queues[priorityClass].claim(.arriving(early: nil)))
    }

    /// The waiter at `place`; `nil` once it has left.
    subscript(place: Place) -> Waiter? {
        get { queues[place.priorityClass][place.handle] }
        set { queues[place.priorityClass][place.handle] = newValue }
    }

    /// Queues the claimed waiter at `place` behind the others of its class.
    mutating func enqueue(_ place: Place) {
        let before = queues[place.priorityClass].count
        queues[place.priorityClass].enqueue(place.handle)
        count += queues[place.priorityClass].count - before
    }

    /// Takes the waiter at `place` out and frees its place.
    mutating func remove(_ place: Place) {
        let before = queues[place.priorityClass].count
        queues[place.priorityClass].remove(place.handle)
        count += queues[place.priorityClass].count - before
    }

    /// Takes the oldest waiter of `priorityClass` out.
    mutating func popFirst(of priorityClass: Int) -> Waiter? {
        let before = queues[priorityClass].count
        let first = queues[priorityClass].popFirst()
        count += queues[priorityClass].count - before
        return first?.element
    }

    /// Whether nobody of `priorityClass` waits.
    func isEmpty(_ priorityClass: Int) -> Bool { queues[priorityClass].isEmpty }

    /// Takes out the newest waiter of the lowest class below `priorityClass` that has one: the waiter a full
    /// queue refuses to make room for a caller of a higher class. `nil` when nobody of a lower class waits.
    mutating func popNewest(below priorityClass: Int) -> Waiter? {
        for lower in 0..<min(max(priorityClass, 0), Self.classes) where !queues[lower].isEmpty {
            let before = queues[lower].count
            let newest = queues[lower].popLast()
            count += queues[lower].count - before
            return newest?.element
        }
        return nil
    }
}

/// The state of a concurrency limit with priority classes, kept under its limiter's lock: the calls in flight,
/// how many each class may have, the slot a call takes and the waiters. ``ConcurrencyLimiter`` (fixed
/// thresholds) and ``AdaptiveConcurrencyLimiter`` (learned ones) both conform, and share ``SlotWaiting``.
protocol SlotAdmission: SendableMetatype {
    /// Calls in flight.
    var inFlight: Int { get }
    /// The waiters of each class.
    var waiters: PriorityWaiters { get set }
    /// The most callers that may wait, every class together.
    var maximumQueued: Int { get }
    /// Calls each class may have in flight: sheddable, default, critical.
    var thresholds: (Int, Int, Int) { get }
    /// Takes a slot (one more call in flight) and returns its permit.
    mutating func takeSlot(now: ResilienceInstant) -> RateLimitPermit
}

extension SlotAdmission {
    /// Calls of `priorityClass` may start while fewer than this many run.
    func threshold(_ priorityClass: Int) -> Int {
        switch priorityClass {
        case 2: thresholds.2
        case 1: thresholds.1
        default: thresholds.0
        }
    }

    /// Whether a call of `priorityClass` may start now: under its threshold, and nobody of its class or a
    /// higher one waiting ahead of it.
    func admits(_ priorityClass: Int) -> Bool {
        inFlight < threshold(priorityClass) && !waiters.anyWaiting(from: priorityClass)
    }

    /// Takes a slot for a call of `priorityClass`, if it may start.
    mutating func tryAcquire(_ priorityClass: Int, now: ResilienceInstant) -> RateLimitPermit? {
        admits(priorityClass) ? takeSlot(now: now) : nil
    }

    /// Hands free slots to the oldest waiters of the highest classes that may start; a class waits while a
    /// higher one still does. `nil` when nobody waits (the success path: no list to make and release).
    mutating func handOver(now: ResilienceInstant) -> [SlotWaiting.Handover]? {
        guard waiters.count > 0 else { return nil }
        return handOverToWaiters(now: now)
    }

    /// ``handOver(now:)`` once somebody waits: kept out of line, so that a release with nobody waiting does
    /// not pay for the waiters' type metadata this needs.
    @inline(never)
    private mutating func handOverToWaiters(now: ResilienceInstant) -> [SlotWaiting.Handover] {
        var handed: [SlotWaiting.Handover] = []
        for priorityClass in stride(from: PriorityWaiters.classes - 1, through: 0, by: -1) {
            while inFlight < threshold(priorityClass), let waiter = waiters.popFirst(of: priorityClass) {
                guard case .queued(let continuation) = waiter else { continue }
                handed.append(SlotWaiting.Handover(continuation: continuation, permit: takeSlot(now: now)))
            }
            if !waiters.isEmpty(priorityClass) { break }
        }
        return handed
    }
}

/// Waiting for a slot of a concurrency limit, written once for every ``SlotAdmission``: a queue of
/// continuations per priority class, not polling.
///
/// A freed slot goes straight to the oldest waiter of the highest class that may start, the only task woken
/// (one wake-up per admission), and a caller that arrives while anybody of its class or a higher one waits
/// queues behind them even if a slot is momentarily free. A full queue makes room for a caller by refusing the
/// newest waiter of the lowest class below the caller's (as if that waiter had found the queue full), and
/// refuses the caller only when nobody of a lower class waits: the sheddable calls are refused first here too.
/// A waiter that gives up (its deadline passes or its task is cancelled) leaves its queue in O(1) wherever it
/// stands, without consuming a slot; a waiter
/// cancelled just after being handed a slot gives it back, so slots never leak. The deadline is Core's one timer
/// race (``raceAgainstDeadline(until:clock:_:)``), started only for a caller that finds no free slot: when it
/// passes, the wait is cancelled and leaves its queue.
enum SlotWaiting {
    /// A slot handed to a waiter, resumed once the lock is released.
    struct Handover {
        var continuation: CheckedContinuation<RateLimitPermit, any Error>
        var permit: RateLimitPermit
    }

    /// Takes a slot for a call of `priority`, or waits for one within `context.deadline`.
    ///
    /// Throws `full` when the queue is full or the deadline passes first, `CancellationError` when the task
    /// is cancelled; either way the caller holds no slot. `giveBack` returns a slot handed over to a waiter
    /// whose task was cancelled meanwhile.
    static func waitForPermit<State: SlotAdmission>(
        _ state: LockedState<State>, priority: RequestPriority, context: ResilienceContext,
        full: @escaping @Sendable () -> ResilienceError, giveBack: (RateLimitPermit) -> Void
    ) async throws -> RateLimitPermit {
        let now = context.clock.now()
        let priorityClass = PriorityWaiters.priorityClass(priority)
        if let permit = state.withLock({ $0.tryAcquire(priorityClass, now: now) }) { return permit }
        if let remaining = context.remaining(now: now), remaining <= .zero { throw full() }
        try Task.checkCancellation()
        let permit: RateLimitPermit
        if let deadline = context.deadline {
            do {
                permit = try await raceAgainstDeadline(until: deadline, clock: context.clock) {
                    try await queueAndWait(state, priorityClass, context: context, full: full)
                }
            } catch is DeadlineExceededError {
                throw full()
            }
        } else {
            permit = try await queueAndWait(state, priorityClass, context: context, full: full)
        }
        if Task.isCancelled {
            giveBack(permit)
            throw CancellationError()
        }
        return permit
    }

    /// Queues the caller in its class and waits until a slot is handed to it; a cancelled wait (the caller's,
    /// or the deadline's race) leaves its queue and throws `CancellationError`.
    private static func queueAndWait<State: SlotAdmission>(
        _ state: LockedState<State>, _ priorityClass: Int, context: ResilienceContext,
        full: @escaping @Sendable () -> ResilienceError
    ) async throws -> RateLimitPermit {
        let place = state.withLock { $0.waiters.claim(priorityClass) }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<RateLimitPermit, any Error>) in
                    let arrival = context.clock.now()
                    let (outcome, displaced) = state.withLock { state in
                        queue(place, continuation, arrival: arrival, deadline: context.deadline, &state)
                    }
                    displaced?.resume(throwing: Displaced())
                    switch outcome {
                    case .none: break
                    case .some(.success(let permit)): continuation.resume(returning: permit)
                    case .some(.failure(let refusal)): continuation.resume(throwing: refusal.error ?? full())
                    }
                }
            } onCancel: {
                expire(state, place)
            }
        } catch is Displaced {
            throw full()
        }
    }

    /// A queued waiter refused by a full queue to make room for a caller of a higher class.
    private struct Displaced: Error {}

    /// Resumes the waiters handed a slot (after the lock is released). Inlined, so that a release with
    /// nobody waiting (`nil`) checks one pointer and pays nothing for the handovers' type metadata.
    @inline(__always)
    static func resume(_ handed: [Handover]?) {
        guard let handed, !handed.isEmpty else { return }
        resumeAll(handed)
    }

    /// ``resume(_:)`` once somebody was handed a slot.
    @inline(never)
    private static func resumeAll(_ handed: [Handover]) {
        for handover in handed { handover.continuation.resume(returning: handover.permit) }
    }

    /// Why a waiter could not queue: the error that ended its wait, or `nil` for a full queue or a passed
    /// deadline.
    private struct Refusal: Error {
        var error: (any Error)?
    }

    /// Under the lock: admits the arriving waiter if it may start, queues it (an outcome of `nil`), or refuses
    /// it; anything but queueing frees its place. A waiter queued in a full queue comes with the waiter of a
    /// lower class it displaced, to be refused once the lock is released.
    private static func queue<State: SlotAdmission>(
        _ place: PriorityWaiters.Place, _ continuation: CheckedContinuation<RateLimitPermit, any Error>,
        arrival: ResilienceInstant, deadline: ResilienceInstant?, _ state: inout State
    ) -> (Result<RateLimitPermit, Refusal>?, displaced: CheckedContinuation<RateLimitPermit, any Error>?) {
        guard case .arriving(let early) = state.waiters[place] else {
            return (.failure(Refusal(error: CancellationError())), nil)
        }
        var displaced: CheckedContinuation<RateLimitPermit, any Error>?
        let outcome: Result<RateLimitPermit, Refusal>
        if Task.isCancelled {
            outcome = .failure(Refusal(error: CancellationError()))
        } else if let early {
            outcome = .failure(Refusal(error: early))
        } else if let permit = state.tryAcquire(place.priorityClass, now: arrival) {
            outcome = .success(permit)
        } else if let deadline, arrival >= deadline {
            // `arrival` was read outside the lock; a deadline that passes after it is caught by the race.
            outcome = .failure(Refusal(error: nil))
        } else if state.waiters.count >= state.maximumQueued,
            !makeRoom(below: place.priorityClass, displacing: &displaced, &state.waiters)
        {
            outcome = .failure(Refusal(error: nil))
        } else {
            state.waiters[place] = .queued(continuation)
            state.waiters.enqueue(place)
            return (nil, displaced)
        }
        state.waiters.remove(place)
        return (outcome, nil)
    }

    /// Takes the newest waiter of the lowest class below `priorityClass` out of a full queue; returns whether
    /// one was (its continuation in `displaced`).
    private static func makeRoom(
        below priorityClass: Int, displacing displaced: inout CheckedContinuation<RateLimitPermit, any Error>?,
        _ waiters: inout PriorityWaiters
    ) -> Bool {
        guard case .queued(let continuation)? = waiters.popNewest(below: priorityClass) else { return false }
        displaced = continuation
        return true
    }

    /// Ends the wait at `place` with `CancellationError`: a queued waiter leaves its queue (O(1)) and is
    /// resumed; one that has not queued yet finds the error when it tries to.
    private static func expire<State: SlotAdmission>(_ state: LockedState<State>, _ place: PriorityWaiters.Place) {
        let error = CancellationError()
        let continuation = state.withLock { state -> CheckedContinuation<RateLimitPermit, any Error>? in
            switch state.waiters[place] {
            case .queued(let continuation):
                state.waiters.remove(place)
                return continuation
            case .arriving:
                state.waiters[place] = .arriving(early: error)
                return nil
            case nil:
                return nil
            }
        }
        continuation?.resume(throwing: error)
    }
}
