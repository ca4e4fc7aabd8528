/// The storage side of ``SharedBreaker``: the module's one breaker state machine (a ``BreakerCycle`` and a
/// ``ConsecutiveFailuresRule``, open periods from a ``BreakerBackoff``) kept in step with a versioned record in
/// a ``BreakerCoordinationStore``, plus the probe lease and the store's health. It returns the store calls to
/// make; the breaker makes them outside the lock.
struct SharedBreakerMachine: Sendable {
    enum StoreAction: Hashable, Sendable {
        case read
        case write(BreakerRecordUpdate)
        case acquireProbe(version: UInt64)
        case releaseProbe
    }

    let key: String
    let openDuration: BreakerBackoff
    let pollInterval: Duration
    let retryInterval: Duration
    let recordTimeToLive: Duration
    let failClosed: Bool
    let countsAsFailure: BreakerFailurePredicate

    /// The state machine every breaker of the module runs; here its state mirrors the store's record.
    var cycle: BreakerCycle
    /// When the closed breaker opens: this replica's counted failures in a row.
    var rule: ConsecutiveFailuresRule
    var generator: PseudoRandomGenerator
    /// The last store version this replica saw or wrote.
    var version: UInt64 = 0
    var probeLeased = false
    var probeRequestInFlight = false
    var nextProbeRequest = ResilienceInstant.origin
    /// A local state the store has not accepted yet (written while it was failing).
    var dirty = false
    var writesInFlight = 0
    var outage: StoreOutage?
    /// Store calls are numbered as they start. A call that fails after a later-started one succeeded says
    /// nothing new about the store (it was slow, not down), so it neither starts an outage nor ends one.
    var storeCallsStarted: UInt64 = 0
    var newestAnsweredCall: UInt64 = 0

    init(_ configuration: SharedBreaker.Configuration, generator: PseudoRandomGenerator) {
        key = configuration.key
        rule = ConsecutiveFailuresRule(threshold: configuration.failureThreshold)
        openDuration = configuration.openDuration
        let probeTimeout = max(.milliseconds(1), configuration.probeTimeout)
        pollInterval = max(.milliseconds(1), min(configuration.refreshInterval, configuration.storeDeadline))
        retryInterval = max(.milliseconds(1), configuration.retryInterval)
        recordTimeToLive = max(.seconds(1), configuration.recordTimeToLive)
        failClosed = configuration.failureMode == .failClosed
        countsAsFailure = configuration.countsAsFailure
        self.generator = generator
        cycle = BreakerCycle(
            halfOpen: BreakerHalfOpenRules(probeLimit: 1, successesToClose: 1, probeTimeout: probeTimeout),
            isolatedRetryAfter: recordTimeToLive, retryAfter: configuration.retryAfter)
    }

    // MARK: Admission

    func state(now: ResilienceInstant) -> BreakerState { cycle.effectiveState(now: now) }

    mutating func admit(now: ResilienceInstant) -> (BreakerAdmission, [StoreAction]) {
        if failClosed, let outage {
            let wait = max(.milliseconds(1), now.duration(to: outage.nextAttempt))
            return (.rejected(retryAfter: wait, state: state(now: now) == .isolated ? .isolated : .open), [])
        }
        // Closed, isolated, or open with time left: the state machine answers alone.
        guard cycle.isOpenOrHalfOpen, now >= cycle.openUntil || cycle.state == .halfOpen else {
            return (cycle.admit(now: now), [])
        }
        // Half-open: one probe for all replicas, sent by the holder of the store's lease (or, while the
        // store is failing, by this replica on its own).
        if cycle.probeOutstanding(now: now) { return (.rejected(retryAfter: pollInterval, state: .halfOpen), []) }
        if outage != nil || probeLeased {
            probeLeased = false
            return (cycle.admit(now: now), [])
        }
        var actions: [StoreAction] = []
        if !probeRequestInFlight && now >= nextProbeRequest {
            probeRequestInFlight = true
            actions.append(.acquireProbe(version: version))
        }
        let wait = max(pollInterval, now.duration(to: nextProbeRequest))
        return (.rejected(retryAfter: wait, state: .halfOpen), actions)
    }

    mutating func probeAnswered(_ result: ProbeLeaseResult?, version leasedVersion: UInt64, now: ResilienceInstant) {
        probeRequestInFlight = false
        guard let result else {
            nextProbeRequest = now.advanced(by: pollInterval)
            return
        }
        if result.granted && cycle.isOpenOrHalfOpen && leasedVersion == version {
            probeLeased = true
        } else {
            nextProbeRequest = now.advanced(by: max(pollInterval, result.retryAfter))
        }
    }

    // MARK: Outcomes

    mutating func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    )
        -> (BreakerTransition?, [StoreAction])
    {
        if case .failure = outcome {
            // The server speaks for the whole key, whichever state admitted the call (as in every breaker).
            let openUntil = cycle.openUntil
            cycle.holdOpen(for: outcome, predicate: countsAsFailure, now: now)
            if let transition = cycle.openForLateHint(outcome, for: permit, predicate: countsAsFailure, now: now) {
                return changed(transition, now: now)
            }
            if cycle.openUntil > openUntil {
                // Published by the next refresh, over the version this replica's own trip is writing now.
                dirty = true
                return (nil, [])
            }
        }
        let isProbe = permit.isProbe && cycle.isCurrent(permit) && cycle.state == .halfOpen
        guard let failed = cycle.countsAsFailure(outcome, for: permit, predicate: countsAsFailure) else {
            // A stale outcome, or a cancelled call (whose probe the state machine released).
            guard isProbe, case .cancelled = outcome else { return (nil, []) }
            return (nil, outage == nil ? [.releaseProbe] : [])
        }
        if cycle.releaseProbe(permit) {
            if failed { return trip(now: now, cause: outcome) }
            return changed(cycle.probeSucceeded(now: now), now: now)
        }
        guard cycle.state == .closed else { return (nil, []) }
        if failed, cycle.immediateHint(outcome, counted: true) != nil { return trip(now: now, cause: outcome) }
        guard rule.shouldOpen(afterCallFailed: failed, admittedAt: permit.admittedAt, now: now) else {
            return (nil, [])
        }
        return trip(now: now, cause: outcome)
    }

    /// Opens the shared record for the next period of the schedule, or for the server's wait on `cause` when
    /// that is longer.
    mutating func trip(now: ResilienceInstant, cause: BreakerOutcome) -> (BreakerTransition?, [StoreAction]) {
        let period = max(.milliseconds(1), openDuration.duration(tripIndex: cycle.consecutiveTrips, using: &generator))
        return changed(cycle.trip(now: now, duration: period, cause: cause), now: now)
    }

    /// After a state change of this replica's own: forget the counts and the lease, and publish the state.
    mutating func changed(
        _ transition: BreakerTransition?, now: ResilienceInstant
    ) -> (
        BreakerTransition?, [StoreAction]
    ) {
        stateChanged()
        return (transition, [write(now: now)])
    }

    /// Clears what belongs to the state just left: the rule's counts and the probe lease.
    mutating func stateChanged() {
        rule.clear()
        probeLeased = false
        nextProbeRequest = .origin
    }

    /// Closes (for every replica) and clears the counters and the trips in a row.
    mutating func reset(now: ResilienceInstant) -> (BreakerTransition?, [StoreAction]) {
        let before = state(now: now)
        _ = cycle.reset(now: now)
        return forced(from: before, now: now)
    }

    /// Isolates (for every replica) until reset.
    mutating func isolate(now: ResilienceInstant) -> (BreakerTransition?, [StoreAction]) {
        let before = state(now: now)
        _ = cycle.isolate(now: now)
        return forced(from: before, now: now)
    }

    mutating func forced(from before: BreakerState, now: ResilienceInstant) -> (BreakerTransition?, [StoreAction]) {
        stateChanged()
        let after = state(now: now)
        let transition = BreakerTransition(from: before, to: after, sequence: cycle.generation)
        return (before == after ? nil : transition, [write(now: now)])
    }

    mutating func restore(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> (BreakerTransition?, [StoreAction]) {
        switch snapshot.state {
        case .closed: return reset(now: now)
        case .isolated: return isolate(now: now)
        case .open, .halfOpen:
            let before = state(now: now)
            _ = cycle.restore(
                state: .open, remainingOpen: snapshot.remainingOpen, totalOpens: cycle.totalOpens, now: now)
            cycle.consecutiveTrips = max(1, SnapshotValues.count(snapshot, "trips", limit: 64))
            return forced(from: before, now: now)
        }
    }

    /// The compare-and-set publishing the local state (half-open is stored as open with its period over).
    mutating func write(now: ResilienceInstant) -> StoreAction {
        writesInFlight += 1
        let storedState: BreakerState = cycle.isOpenOrHalfOpen ? .open : cycle.state
        let openFor = cycle.remainingOpen(now: now)
        return .write(
            BreakerRecordUpdate(
                key: key, expectedVersion: version, state: storedState, openFor: openFor,
                trips: cycle.consecutiveTrips, timeToLive: openFor + recordTimeToLive))
    }

    // MARK: The store's answers

    /// The refresh task's next call: publish a state the store missed, else read; nothing while waiting to
    /// retry a failing store.
    mutating func refreshAction(now: ResilienceInstant) -> StoreAction? {
        if let outage {
            guard now >= outage.nextAttempt else { return nil }
            self.outage?.nextAttempt = now.advanced(by: retryInterval)
        }
        if dirty {
            dirty = false
            return write(now: now)
        }
        return writesInFlight > 0 ? nil : .read
    }

    mutating func writeFailed() {
        writesInFlight = max(0, writesInFlight - 1)
        dirty = true
    }

    /// Numbers a store call as it starts.
    mutating func startStoreCall() -> UInt64 {
        storeCallsStarted += 1
        return storeCallsStarted
    }

    /// Returns how long the store had been failing when an answer ends an outage.
    mutating func storeAnswered(call: UInt64, now: ResilienceInstant) -> Duration? {
        newestAnsweredCall = max(newestAnsweredCall, call)
        defer { outage = nil }
        return outage.map { $0.since.duration(to: now) }
    }

    /// Returns true when a failure starts an outage; a call older than the newest answered one is ignored.
    mutating func storeFailed(call: UInt64, now: ResilienceInstant) -> Bool {
        guard call > newestAnsweredCall else { return false }
        if outage != nil {
            outage?.nextAttempt = now.advanced(by: retryInterval)
            return false
        }
        outage = StoreOutage(since: now, nextAttempt: now.advanced(by: retryInterval))
        return true
    }

    /// Takes the store's record as the truth; returns the change when another replica caused one.
    mutating func adopt(
        _ record: BreakerRecord?, receivedAt now: ResilienceInstant, wrote: Bool, conflicted: Bool
    )
        -> BreakerTransition?
    {
        if wrote || conflicted { writesInFlight = max(0, writesInFlight - 1) }
        if !wrote && !conflicted && (writesInFlight > 0 || dirty) { return nil }
        let storeVersion = record?.version ?? 0
        if record != nil && storeVersion < version { return nil }
        if record == nil && version == 0 && cycle.state == .closed { return nil }
        if let record, storeVersion == version, !wrote {
            // Nothing new; keep the open period in step with the store's clock.
            if record.state == .open {
                cycle.extendOpen(until: now.advanced(by: DurationArithmetic.clamp(record.remainingOpen)))
            }
            return nil
        }
        if conflicted { dirty = false }
        version = storeVersion
        let before = state(now: now)
        switch record?.state ?? .closed {
        case .closed, .halfOpen:
            if cycle.state != .closed {
                cycle.adopt(.closed, now: now)
                stateChanged()
            }
            cycle.consecutiveTrips = record?.trips ?? 0
        case .open:
            // A record from a corrupt row or another implementation may hold any duration; one beyond the
            // clock would trap on every replica that reads it.
            let remaining = DurationArithmetic.clamp(record?.remainingOpen ?? .zero)
            let until = now.advanced(by: remaining)
            if cycle.isOpenOrHalfOpen && wrote {
                cycle.extendOpen(until: until)
            } else if !cycle.isOpenOrHalfOpen || cycle.openUntil != until {
                cycle.adopt(.open, openFor: remaining, now: now)
                stateChanged()
                cycle.consecutiveTrips = record?.trips ?? cycle.consecutiveTrips
            }
        case .isolated:
            if cycle.state != .isolated {
                cycle.adopt(.isolated, now: now)
                stateChanged()
            }
        }
        let after = state(now: now)
        return wrote || before == after ? nil : BreakerTransition(from: before, to: after, sequence: cycle.generation)
    }

    // MARK: Reporting

    func metrics(now: ResilienceInstant) -> BreakerMetrics {
        cycle.metrics(now: now, consecutiveFailures: rule.failures, consecutiveSuccesses: 0)
    }

    func export(now: ResilienceInstant) -> BreakerSnapshot {
        BreakerSnapshot(
            state: state(now: now), remainingOpen: cycle.remainingOpen(now: now),
            values: ["trips": Double(cycle.consecutiveTrips), "consecutiveFailures": Double(rule.failures)])
    }
}
