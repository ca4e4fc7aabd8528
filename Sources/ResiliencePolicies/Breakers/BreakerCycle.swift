/// The implementation every local breaker of this module shares: a state machine (its counters beside the
/// closed → open → half-open cycle) in a ``LockedState``. ``ConsecutiveFailureBreaker``, ``FailureRatioBreaker``,
/// ``RateLimitBreaker`` and ``CircuitBreaker`` differ only in their machine, configuration and description.
///
/// Not meant to be subclassed outside this module (its initializer is internal); a third-party breaker is a
/// ``CircuitBreaker`` with its own ``BreakerTripRule``.
public class StateMachineBreaker: IsolatableBreaker, PersistableBreaker, MeasurableBreaker, CallHoldObserver,
    @unchecked Sendable
{
    /// The machine in its lock: a `MachineLock` of the concrete machine type.
    let storage: AnyObject
    /// The concrete machine type, whose static methods (compiled for that type) run the machine in
    /// `storage`: the hot path never works on an existential machine inside the lock.
    let machineType: any BreakerMachine.Type
    /// The machine type's `admit` and `record`, taken when the breaker is built: each call runs the code
    /// compiled for the concrete machine (a generic machine's included), not its protocol witness.
    private let admitCall: @Sendable (AnyObject, ResilienceInstant) -> BreakerAdmission
    private let recordCall:
        @Sendable (BreakerOutcome, BreakerPermit, ResilienceInstant, AnyObject) -> BreakerTransition?

    init<Machine: BreakerMachine>(_ machine: Machine) {
        storage = MachineLock(machine)
        machineType = Machine.self
        admitCall = { Machine.admit(in: $0, now: $1) }
        recordCall = { Machine.record($0, for: $1, now: $2, in: $3) }
    }

    /// Admits the call when closed, or as a probe when half-open; rejects it when open or isolated.
    public final func admit(now: ResilienceInstant) -> BreakerAdmission {
        admitCall(storage, now)
    }

    /// Counts the outcome of a call admitted in the current generation; an earlier call's outcome counts for
    /// nothing, though a late `Retry-After` opens the breaker and a hung dependency's late success closes it.
    @discardableResult
    public final func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    ) -> BreakerTransition? {
        recordCall(outcome, permit, now, storage)
    }

    /// Forces the breaker open until ``reset(now:)``.
    @discardableResult
    public final func isolate(now: ResilienceInstant) -> BreakerTransition? {
        machineType.isolate(in: storage, now: now)
    }

    /// Closes the breaker and clears its counters (and any growing open time).
    @discardableResult
    public final func reset(now: ResilienceInstant) -> BreakerTransition? {
        machineType.reset(in: storage, now: now)
    }

    /// A stage inside the breaker holds one of its calls from `now` (see ``CallHoldObserver``).
    public final func callHeld(now: ResilienceInstant) -> CallHold {
        machineType.hold(in: storage, now: now)
    }

    /// The stage stopped holding the call of `hold` at `now`.
    public final func callReleased(_ hold: CallHold, now: ResilienceInstant) {
        machineType.release(hold, in: storage, now: now)
    }

    /// The breaker's counters at `now`.
    public final func metrics(now: ResilienceInstant) -> BreakerMetrics {
        machineType.metrics(in: storage, now: now)
    }

    /// The breaker's state as a portable snapshot.
    public final func exportState(now: ResilienceInstant) -> BreakerSnapshot {
        machineType.export(in: storage, now: now)
    }

    /// Restores a snapshot from ``exportState(now:)``.
    @discardableResult
    public final func restoreState(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        machineType.restore(snapshot, in: storage, now: now)
    }

    /// A short description of the breaker and its settings (each breaker names its own).
    public var policyDescription: String { "state-machine-breaker" }

    /// Reads the concrete machine (for the few queries only one breaker has).
    final func inspect<Machine: BreakerMachine, Result>(
        _ type: Machine.Type, _ body: (Machine) -> Result
    ) -> Result? {
        (storage as? MachineLock<Machine>)?.state.withLock { body($0) }
    }
}

/// A breaker's machine and the lock that guards it.
final class MachineLock<Machine: BreakerMachine>: Sendable {
    let state: LockedState<Machine>

    init(_ machine: Machine) {
        state = LockedState(initialState: machine)
    }
}

/// What a breaker's state machine does; the shared ``BreakerCycle`` handles admission and isolation.
protocol BreakerMachine: Sendable {
    var cycle: BreakerCycle { get set }
    /// Which failures the machine counts (the server's `Retry-After` is honoured only on those).
    var failurePredicate: BreakerFailurePredicate { get }
    /// Admits or rejects one call (the shared cycle's admission unless the machine adds a rule of its own).
    mutating func admit(now: ResilienceInstant) -> BreakerAdmission
    mutating func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    )
        -> BreakerTransition?
    mutating func reset(now: ResilienceInstant) -> BreakerTransition?
    /// A stage inside the breaker starts holding one of its calls (machines that judge silence stop counting
    /// it as waiting; the others ignore holds).
    mutating func hold(now: ResilienceInstant) -> CallHold
    /// The stage stopped holding the call of `hold`.
    mutating func release(_ hold: CallHold, now: ResilienceInstant)
    /// The counted failures in a row (what the machine's failure rule counts), for its metrics.
    var consecutiveFailures: Int { get }
    /// The successes in a row, for its metrics.
    var consecutiveSuccesses: Int { get }
    func export(now: ResilienceInstant) -> BreakerSnapshot
    mutating func restore(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition?

    // `StateMachineBreaker`'s operations on the machine in `storage` (a `MachineLock<Self>`), each taking
    // the lock once; implemented below for every machine.
    static func admit(in storage: AnyObject, now: ResilienceInstant) -> BreakerAdmission
    static func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant, in storage: AnyObject
    ) -> BreakerTransition?
    static func isolate(in storage: AnyObject, now: ResilienceInstant) -> BreakerTransition?
    static func hold(in storage: AnyObject, now: ResilienceInstant) -> CallHold
    static func release(_ hold: CallHold, in storage: AnyObject, now: ResilienceInstant)
    static func reset(in storage: AnyObject, now: ResilienceInstant) -> BreakerTransition?
    static func metrics(in storage: AnyObject, now: ResilienceInstant) -> BreakerMetrics
    static func export(in storage: AnyObject, now: ResilienceInstant) -> BreakerSnapshot
    static func restore(
        _ snapshot: BreakerSnapshot, in storage: AnyObject, now: ResilienceInstant
    )
        -> BreakerTransition?
}

extension BreakerMachine {
    mutating func admit(now: ResilienceInstant) -> BreakerAdmission { cycle.admit(now: now) }
    mutating func isolate(now: ResilienceInstant) -> BreakerTransition? { cycle.isolate(now: now) }
    mutating func hold(now: ResilienceInstant) -> CallHold { CallHold(generation: cycle.generation, counted: false) }
    mutating func release(_ hold: CallHold, now: ResilienceInstant) {}

    /// The cycle's counters with the machine's failures and successes in a row.
    func metrics(now: ResilienceInstant) -> BreakerMetrics {
        cycle.metrics(now: now, consecutiveFailures: consecutiveFailures, consecutiveSuccesses: consecutiveSuccesses)
    }

    /// Runs `body` on the machine in `storage` (the `MachineLock<Self>` the breaker created) under its lock.
    /// The lock is borrowed from `storage`, not copied out of it, so a call retains nothing.
    static func locked<Result>(_ storage: AnyObject, _ body: (inout Self) -> Result) -> Result {
        unsafeDowncast(storage, to: MachineLock<Self>.self).state.withLock(body)
    }

    static func admit(in storage: AnyObject, now: ResilienceInstant) -> BreakerAdmission {
        locked(storage) { $0.admit(now: now) }
    }

    static func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant, in storage: AnyObject
    ) -> BreakerTransition? {
        guard case .failure = outcome else {
            return locked(storage) { $0.record(outcome, for: permit, now: now) }
        }
        return locked(storage) { machine in
            // A late failure carrying the server's wait keeps an open breaker open until that wait has passed.
            machine.cycle.holdOpen(for: outcome, predicate: machine.failurePredicate, now: now)
            if let transition = machine.cycle.openForLateHint(
                outcome, for: permit, predicate: machine.failurePredicate, now: now)
            {
                return transition
            }
            return machine.record(outcome, for: permit, now: now)
        }
    }

    static func isolate(in storage: AnyObject, now: ResilienceInstant) -> BreakerTransition? {
        locked(storage) { $0.isolate(now: now) }
    }

    static func reset(in storage: AnyObject, now: ResilienceInstant) -> BreakerTransition? {
        locked(storage) { $0.reset(now: now) }
    }

    static func hold(in storage: AnyObject, now: ResilienceInstant) -> CallHold {
        locked(storage) { $0.hold(now: now) }
    }

    static func release(_ hold: CallHold, in storage: AnyObject, now: ResilienceInstant) {
        locked(storage) { $0.release(hold, now: now) }
    }

    static func metrics(in storage: AnyObject, now: ResilienceInstant) -> BreakerMetrics {
        locked(storage) { $0.metrics(now: now) }
    }

    static func export(in storage: AnyObject, now: ResilienceInstant) -> BreakerSnapshot {
        locked(storage) { $0.export(now: now) }
    }

    static func restore(
        _ snapshot: BreakerSnapshot, in storage: AnyObject, now: ResilienceInstant
    )
        -> BreakerTransition?
    {
        locked(storage) { $0.restore(snapshot, now: now) }
    }
}

/// How a breaker's half-open state behaves: how many probes run at once, how many must succeed to close it,
/// and after how long without an answer the probes in flight are treated as lost.
public struct BreakerHalfOpenRules: Hashable, Sendable {
    /// How many probes may run at once (at least 1).
    public var probeLimit: Int
    /// Successful probes needed to close the breaker (at least 1).
    public var successesToClose: Int
    /// After this long without an answer from the probes in flight, half-open admits new probes, so a lost
    /// probe can never wedge the breaker.
    public var probeTimeout: Duration

    /// Creates the rules; values below the minimum are raised to it.
    ///
    /// - Parameters:
    ///   - probeLimit: How many probes may run at once (at least 1). Default: `1`.
    ///   - successesToClose: Successful probes needed to close the breaker (at least 1). Default: `1`.
    ///   - probeTimeout: After this long without an answer from the probes in flight, half-open admits new
    ///     probes. Default: 30 s.
    public init(probeLimit: Int = 1, successesToClose: Int = 1, probeTimeout: Duration = .seconds(30)) {
        self.probeLimit = max(1, probeLimit)
        self.successesToClose = max(1, successesToClose)
        self.probeTimeout = max(.zero, probeTimeout)
    }
}

/// The closed → open → half-open → closed cycle: the one breaker state machine of this module. Every local
/// breaker keeps one inside its lock, and ``SharedBreaker`` keeps one whose state it publishes to (and adopts
/// from) a ``BreakerCoordinationStore``.
///
/// A value type that takes `now`. Every state change bumps ``generation`` so outcomes of calls admitted
/// earlier are recognised as stale.
struct BreakerCycle: Sendable {
    private(set) var state: BreakerState = .closed
    private(set) var generation: UInt64 = 0
    private(set) var openedAt: ResilienceInstant = .origin
    private(set) var openUntil: ResilienceInstant = .origin
    private(set) var totalOpens = 0
    /// Trips in a row without a return to healthy operation: the backoff's trip index.
    var consecutiveTrips = 0
    private(set) var probesInFlight = 0
    private(set) var lastProbeAt: ResilienceInstant = .origin
    private(set) var halfOpenSuccesses = 0
    /// Whether the open period lasts the server's wait (a `Retry-After` that opened or lengthened it): then
    /// only that wait ends it, never an answer the breaker did not ask for.
    private(set) var holdsServerWait = false
    /// How half-open behaves; `nil` means an expired open period closes the breaker directly.
    let halfOpen: BreakerHalfOpenRules?
    /// What an isolated breaker reports as `retryAfter`.
    let isolatedRetryAfter: Duration
    /// How the server's `Retry-After` lengthens (or starts) an open period.
    let retryAfter: BreakerRetryAfter

    init(halfOpen: BreakerHalfOpenRules?, isolatedRetryAfter: Duration, retryAfter: BreakerRetryAfter) {
        self.retryAfter = retryAfter
        self.halfOpen = halfOpen.map {
            BreakerHalfOpenRules(
                probeLimit: $0.probeLimit, successesToClose: $0.successesToClose, probeTimeout: $0.probeTimeout)
        }
        self.isolatedRetryAfter = isolatedRetryAfter
    }

    /// Whether the breaker is open or half-open: in the open part of the cycle.
    var isOpenOrHalfOpen: Bool { state == .open || state == .halfOpen }

    /// Whether a half-open probe is in flight and not yet overdue at `now`.
    func probeOutstanding(now: ResilienceInstant) -> Bool {
        guard state == .halfOpen, probesInFlight > 0, let halfOpen else { return false }
        return now < lastProbeAt.advanced(by: halfOpen.probeTimeout)
    }

    /// Moves to `next` because another replica's record says so (open for `openFor`); counts no trip.
    mutating func adopt(_ next: BreakerState, openFor: Duration? = nil, now: ResilienceInstant) {
        _ = move(to: next, now: now, openFor: openFor)
    }

    /// Keeps an open breaker open at least until `until`.
    mutating func extendOpen(until: ResilienceInstant) {
        if state == .open && until > openUntil { openUntil = until }
    }

    /// Admits or rejects one call; moves an expired open period to half-open (or closed).
    mutating func admit(now: ResilienceInstant) -> BreakerAdmission {
        var transition: BreakerTransition?
        switch state {
        case .closed:
            return .admitted(BreakerPermit(generation: generation, isProbe: false, admittedAt: now), transition: nil)
        case .isolated:
            return .rejected(retryAfter: isolatedRetryAfter, state: .isolated)
        case .open:
            if now < openUntil { return .rejected(retryAfter: now.duration(to: openUntil), state: .open) }
            if halfOpen == nil {
                transition = move(to: .closed, now: now)
                return .admitted(
                    BreakerPermit(generation: generation, isProbe: false, admittedAt: now), transition: transition)
            }
            transition = move(to: .halfOpen, now: now)
        case .halfOpen:
            break
        }
        guard let rules = halfOpen else {
            return .admitted(BreakerPermit(generation: generation, isProbe: false, admittedAt: now), transition: nil)
        }
        if probesInFlight >= rules.probeLimit {
            let reclaimAt = lastProbeAt.advanced(by: rules.probeTimeout)
            guard now >= reclaimAt else {
                return .rejected(retryAfter: now.duration(to: reclaimAt), state: .halfOpen)
            }
            // The probes never reported back: treat them as lost so half-open cannot get stuck.
            probesInFlight = 0
        }
        probesInFlight += 1
        lastProbeAt = now
        return .admitted(BreakerPermit(generation: generation, isProbe: true, admittedAt: now), transition: transition)
    }

    /// Whether `permit` belongs to the current generation.
    func isCurrent(_ permit: BreakerPermit) -> Bool { permit.generation == generation }

    /// Releases a current half-open probe's slot; returns whether it was a current probe.
    mutating func releaseProbe(_ permit: BreakerPermit) -> Bool {
        guard state == .halfOpen, permit.isProbe, isCurrent(permit) else { return false }
        probesInFlight = max(0, probesInFlight - 1)
        return true
    }

    /// Sorts the outcome of a call admitted with `permit`: `nil` when it must change nothing (a permit from an
    /// older generation, or a cancelled call, whose half-open probe is released here); otherwise whether
    /// `predicate` counts it as a failure.
    mutating func countsAsFailure(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, predicate: BreakerFailurePredicate
    ) -> Bool? {
        guard isCurrent(permit) else { return nil }
        switch outcome {
        case .cancelled:
            _ = releaseProbe(permit)
            return nil
        case .success:
            return false
        case .failure(let classification):
            return predicate.counts(classification)
        }
    }

    /// The counters every breaker reports, with the breaker's own failure and success counts.
    func metrics(now: ResilienceInstant, consecutiveFailures: Int, consecutiveSuccesses: Int) -> BreakerMetrics {
        BreakerMetrics(
            state: effectiveState(now: now), consecutiveFailures: consecutiveFailures,
            consecutiveSuccesses: consecutiveSuccesses, totalOpens: totalOpens,
            currentOpenDuration: currentOpenDuration(now: now), remainingOpenDuration: remainingOpen(now: now))
    }

    /// Closes the open (or half-open) breaker because a call admitted before it opened has been answered with
    /// a success: the answer a probe would bring, arriving without adding a call. Changes nothing while the
    /// open period lasts the server's wait.
    mutating func closeOnLateSuccess(now: ResilienceInstant) -> BreakerTransition? {
        guard isOpenOrHalfOpen, !holdsServerWait else { return nil }
        consecutiveTrips = 0
        return move(to: .closed, now: now)
    }

    /// Records a half-open success; closes when enough probes succeeded.
    mutating func probeSucceeded(now: ResilienceInstant) -> BreakerTransition? {
        halfOpenSuccesses += 1
        guard halfOpenSuccesses >= (halfOpen?.successesToClose ?? 1) else { return nil }
        consecutiveTrips = 0
        return move(to: .closed, now: now)
    }

    /// The server's wait on a counted failure that must open the breaker at once (whatever the threshold).
    func immediateHint(_ outcome: BreakerOutcome, counted: Bool) -> Duration? {
        retryAfter.immediateHint(outcome, counted: counted)
    }

    /// Keeps an open breaker open until the wait carried by a counted failure (from a call admitted before
    /// the trip) has passed.
    mutating func holdOpen(for outcome: BreakerOutcome, predicate: BreakerFailurePredicate, now: ResilienceInstant) {
        guard state == .open, case .failure(let classification) = outcome,
            let hint = retryAfter.hint(outcome, counted: predicate.counts(classification))
        else { return }
        let until = now.advanced(by: hint)
        if until > openUntil {
            openUntil = until
            holdsServerWait = true
        }
    }

    /// Opens the breaker for the server's wait when the answer of a call admitted in an earlier state (whose
    /// outcome no longer counts) carries one that must open it at once: the server speaks for the whole key,
    /// whichever state admitted the call. Without this, a probe's success closing the breaker would let the
    /// 429 of a call admitted beside it go unheeded.
    mutating func openForLateHint(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, predicate: BreakerFailurePredicate,
        now: ResilienceInstant
    ) -> BreakerTransition? {
        guard !isCurrent(permit), state == .closed || state == .halfOpen, case .failure(let classification) = outcome,
            let hint = retryAfter.immediateHint(outcome, counted: predicate.counts(classification))
        else { return nil }
        let transition = trip(now: now, duration: hint)
        holdsServerWait = true
        return transition
    }

    /// Opens the breaker for `duration`, or for the server's wait on the failure that tripped it when that is
    /// longer (one more trip in a row).
    mutating func trip(now: ResilienceInstant, duration: Duration, cause: BreakerOutcome? = nil) -> BreakerTransition? {
        let hint = cause.flatMap { retryAfter.hint($0, counted: true) } ?? .zero
        let transition = move(to: .open, now: now, openFor: max(duration, hint))
        holdsServerWait = hint > duration
        totalOpens += 1
        consecutiveTrips += 1
        return transition
    }

    /// Forces the breaker open until reset.
    mutating func isolate(now: ResilienceInstant) -> BreakerTransition? {
        guard state != .isolated else { return nil }
        return move(to: .isolated, now: now)
    }

    /// Closes the breaker and forgets the trips in a row.
    mutating func reset(now: ResilienceInstant) -> BreakerTransition? {
        consecutiveTrips = 0
        guard state != .closed else {
            generation &+= 1
            return nil
        }
        return move(to: .closed, now: now)
    }

    /// The snapshot of a machine on this cycle at `now`: the state, the time left open, the trips in a row
    /// and the opens, beside the machine's own `counts`.
    func snapshot(now: ResilienceInstant, adding counts: [String: Double]) -> BreakerSnapshot {
        var values = counts
        values["consecutiveTrips"] = Double(consecutiveTrips)
        values["totalOpens"] = Double(totalOpens)
        return BreakerSnapshot(state: state, remainingOpen: remainingOpen(now: now), values: values)
    }

    /// Puts the cycle into the state a ``snapshot(now:adding:)`` recorded, keeping at most `tripLimit` trips in
    /// a row; a cycle without half-open rules restores a half-open snapshot as closed.
    mutating func restore(
        _ snapshot: BreakerSnapshot, now: ResilienceInstant, tripLimit: Int = SnapshotValues.largestCount
    ) -> BreakerTransition? {
        let restored = halfOpen == nil && snapshot.state == .halfOpen ? BreakerState.closed : snapshot.state
        let transition = restore(
            state: restored, remainingOpen: snapshot.remainingOpen,
            totalOpens: SnapshotValues.count(snapshot, "totalOpens"), now: now)
        consecutiveTrips = SnapshotValues.count(snapshot, "consecutiveTrips", limit: tripLimit)
        return transition
    }

    /// Puts the breaker into a restored state, open for `remainingOpen` clamped to `0...`
    /// ``DurationArithmetic/maximum`` (about 31 years).
    mutating func restore(
        state restored: BreakerState, remainingOpen: Duration, totalOpens restoredOpens: Int, now: ResilienceInstant
    ) -> BreakerTransition? {
        let previous = state
        // A snapshot read from disk or a store may hold any duration: one beyond the clock would trap.
        let remaining = DurationArithmetic.clamp(remainingOpen)
        _ = move(to: restored, now: now, openFor: restored == .open ? remaining : nil)
        totalOpens = max(0, restoredOpens)
        guard previous != restored else { return nil }
        return BreakerTransition(
            from: previous, to: restored, openFor: restored == .open ? remaining : nil, sequence: generation)
    }

    /// The state a call at `now` would find: an expired open period reads as half-open (or closed).
    func effectiveState(now: ResilienceInstant) -> BreakerState {
        guard state == .open, now >= openUntil else { return state }
        return halfOpen == nil ? .closed : .halfOpen
    }

    /// Time left in the open state at `now` (zero unless open).
    func remainingOpen(now: ResilienceInstant) -> Duration {
        guard state == .open, now < openUntil else { return .zero }
        return now.duration(to: openUntil)
    }

    /// How long the breaker has been open or isolated at `now`.
    func currentOpenDuration(now: ResilienceInstant) -> Duration {
        guard state == .open || state == .isolated else { return .zero }
        return max(.zero, openedAt.duration(to: now))
    }

    private mutating func move(
        to next: BreakerState, now: ResilienceInstant, openFor: Duration? = nil
    ) -> BreakerTransition? {
        let previous = state
        state = next
        generation &+= 1
        probesInFlight = 0
        halfOpenSuccesses = 0
        holdsServerWait = false
        if next == .open || next == .isolated {
            if previous != .open && previous != .isolated { openedAt = now }
            openUntil = now.advanced(by: openFor ?? .zero)
        }
        if next == .open && previous == .open { openedAt = now }
        guard previous != next else { return nil }
        return BreakerTransition(from: previous, to: next, openFor: next == .open ? openFor : nil, sequence: generation)
    }
}

/// Reads numbers out of a ``BreakerSnapshot`` defensively: restored state may come from disk.
enum SnapshotValues {
    /// The largest count read back unless the caller sets a lower limit.
    static let largestCount = 1_000_000_000

    /// The non-negative whole number stored under `key` (zero when missing, negative, NaN or huge).
    static func count(_ snapshot: BreakerSnapshot, _ key: String, limit: Int = largestCount) -> Int {
        guard let value = snapshot.values[key], value.isFinite, value > 0 else { return 0 }
        return Int(min(value, Double(limit)))
    }
}
