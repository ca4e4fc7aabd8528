/// The state machine behind ``SharedBreaker``: the cached shared record, this replica's counters, the probe
/// lease and the store's health. It returns the store calls to make; the breaker makes them outside the lock.
struct SharedBreakerMachine: Sendable {
    enum StoreAction: Hashable, Sendable {
        case read
        case write(BreakerRecordUpdate)
        case acquireProbe(version: UInt64)
        case releaseProbe
    }

    enum Phase: Hashable, Sendable { case closed, open, isolated }

    let key: String
    let threshold: Int
    let openDuration: Duration
    let maximumOpenDuration: Duration
    let probeTimeout: Duration
    let pollInterval: Duration
    let retryInterval: Duration
    let recordTimeToLive: Duration
    let failClosed: Bool
    let countsAsFailure: BreakerFailurePredicate
    let retryAfter: BreakerRetryAfter

    var phase = Phase.closed
    var openedAt = ResilienceInstant.origin
    var openUntil = ResilienceInstant.origin
    /// The last store version this replica saw or wrote.
    var version: UInt64 = 0
    var failures = 0
    var trips = 0
    var totalOpens = 0
    var generation: UInt64 = 0
    var probeInFlight = false
    var probeLeased = false
    var probeRequestInFlight = false
    var nextProbeRequest = ResilienceInstant.origin
    var announcedHalfOpen = false
    /// A local state the store has not accepted yet (written while it was failing).
    var dirty = false
    var writesInFlight = 0
    var outage: StoreOutage?
    /// Store calls are numbered as they start. A call that fails after a later-started one succeeded says
    /// nothing new about the store (it was slow, not down), so it neither starts an outage nor ends one.
    var storeCallsStarted: UInt64 = 0
    var newestAnsweredCall: UInt64 = 0

    init(_ configuration: SharedBreaker.Configuration) {
        key = configuration.key
        threshold = max(1, configuration.failureThreshold)
        openDuration = max(.milliseconds(1), configuration.openDuration)
        maximumOpenDuration = max(openDuration, configuration.maximumOpenDuration)
        probeTimeout = max(.milliseconds(1), configuration.probeTimeout)
        pollInterval = max(.milliseconds(1), min(configuration.refreshInterval, configuration.storeDeadline))
        retryInterval = max(.milliseconds(1), configuration.retryInterval)
        recordTimeToLive = max(.seconds(1), configuration.recordTimeToLive)
        failClosed = configuration.failureMode == .failClosed
        countsAsFailure = configuration.countsAsFailure
        retryAfter = configuration.retryAfter
    }

    // MARK: Admission

    func state(now: ResilienceInstant) -> BreakerState {
        switch phase {
        case .closed: .closed
        case .isolated: .isolated
        case .open: now < openUntil ? .open : .halfOpen
        }
    }

    mutating func admit(now: ResilienceInstant) -> (BreakerAdmission, [StoreAction]) {
        if failClosed, let outage {
            let wait = max(.milliseconds(1), now.duration(to: outage.nextAttempt))
            return (.rejected(retryAfter: wait, state: state(now: now) == .isolated ? .isolated : .open), [])
        }
        switch phase {
        case .closed:
            return (.admitted(permit(now: now, probe: false), transition: nil), [])
        case .isolated:
            return (.rejected(retryAfter: recordTimeToLive, state: .isolated), [])
        case .open:
            if now < openUntil { return (.rejected(retryAfter: now.duration(to: openUntil), state: .open), []) }
            if probeInFlight { return (.rejected(retryAfter: pollInterval, state: .halfOpen), []) }
            if outage != nil || probeLeased {
                probeLeased = false
                probeInFlight = true
                generation &+= 1
                var transition: BreakerTransition?
                if !announcedHalfOpen {
                    announcedHalfOpen = true
                    transition = BreakerTransition(from: .open, to: .halfOpen)
                }
                return (.admitted(permit(now: now, probe: true), transition: transition), [])
            }
            var actions: [StoreAction] = []
            if !probeRequestInFlight && now >= nextProbeRequest {
                probeRequestInFlight = true
                actions.append(.acquireProbe(version: version))
            }
            let wait = max(pollInterval, now.duration(to: nextProbeRequest))
            return (.rejected(retryAfter: wait, state: .halfOpen), actions)
        }
    }

    func permit(now: ResilienceInstant, probe: Bool) -> BreakerPermit {
        BreakerPermit(generation: generation, isProbe: probe, admittedAt: now)
    }

    mutating func probeAnswered(_ result: ProbeLeaseResult?, version leasedVersion: UInt64, now: ResilienceInstant) {
        probeRequestInFlight = false
        guard let result else {
            nextProbeRequest = now.advanced(by: pollInterval)
            return
        }
        if result.granted && phase == .open && leasedVersion == version {
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
        guard permit.generation == generation else { return (nil, []) }
        let isProbe = permit.isProbe && phase == .open && probeInFlight
        switch outcome {
        case .cancelled:
            guard isProbe else { return (nil, []) }
            probeInFlight = false
            return (nil, outage == nil ? [.releaseProbe] : [])
        case .success:
            failures = 0
            return isProbe ? close(now: now, from: .halfOpen) : (nil, [])
        case .failure(let classification):
            guard countsAsFailure.counts(classification) else {
                failures = 0
                return isProbe ? close(now: now, from: .halfOpen) : (nil, [])
            }
            let hint = retryAfter.hint(outcome, counted: true) ?? .zero
            if isProbe { return trip(now: now, from: .halfOpen, hint: hint) }
            guard phase == .closed else { return (nil, []) }
            failures += 1
            let opensAtOnce = retryAfter.immediateHint(outcome, counted: true) != nil
            return failures >= threshold || opensAtOnce ? trip(now: now, from: .closed, hint: hint) : (nil, [])
        }
    }

    /// Opens the shared record for the next period of the schedule, or for the server's wait `hint` when that
    /// is longer.
    mutating func trip(
        now: ResilienceInstant, from: BreakerState, hint: Duration = .zero
    ) -> (BreakerTransition?, [StoreAction]) {
        trips = min(trips + 1, 62)
        totalOpens += 1
        let openFor = max(openPeriod(trips: trips), hint)
        enterOpen(now: now, until: now.advanced(by: openFor))
        return (BreakerTransition(from: from, to: .open, openFor: openFor), [write(now: now)])
    }

    func openPeriod(trips: Int) -> Duration {
        var period = openDuration
        for _ in 1..<max(1, trips) where period < maximumOpenDuration { period = period * 2 }
        return min(period, maximumOpenDuration)
    }

    mutating func enterOpen(now: ResilienceInstant, until: ResilienceInstant) {
        phase = .open
        openedAt = now
        openUntil = until
        failures = 0
        resetProbe()
        generation &+= 1
    }

    mutating func resetProbe() {
        probeInFlight = false
        probeLeased = false
        announcedHalfOpen = false
        nextProbeRequest = .origin
    }

    mutating func close(now: ResilienceInstant, from: BreakerState) -> (BreakerTransition?, [StoreAction]) {
        phase = .closed
        trips = 0
        failures = 0
        resetProbe()
        generation &+= 1
        return (BreakerTransition(from: from, to: .closed), [write(now: now)])
    }

    mutating func force(_ target: Phase, now: ResilienceInstant) -> (BreakerTransition?, [StoreAction]) {
        let before = state(now: now)
        switch target {
        case .closed:
            phase = .closed
            trips = 0
        case .isolated:
            phase = .isolated
        case .open:
            enterOpen(now: now, until: now.advanced(by: openPeriod(trips: max(1, trips))))
        }
        failures = 0
        resetProbe()
        generation &+= 1
        let after = state(now: now)
        return (before == after ? nil : BreakerTransition(from: before, to: after), [write(now: now)])
    }

    mutating func restore(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> (BreakerTransition?, [StoreAction]) {
        switch snapshot.state {
        case .closed: return force(.closed, now: now)
        case .isolated: return force(.isolated, now: now)
        case .open, .halfOpen:
            let before = state(now: now)
            trips = max(1, Int(snapshot.values["trips"] ?? 1))
            enterOpen(now: now, until: now.advanced(by: max(.zero, snapshot.remainingOpen)))
            let after = state(now: now)
            return (before == after ? nil : BreakerTransition(from: before, to: after), [write(now: now)])
        }
    }

    /// The compare-and-set publishing the local state.
    mutating func write(now: ResilienceInstant) -> StoreAction {
        writesInFlight += 1
        let storedState: BreakerState = phase == .closed ? .closed : (phase == .isolated ? .isolated : .open)
        let openFor = phase == .open ? max(.zero, now.duration(to: openUntil)) : .zero
        return .write(
            BreakerRecordUpdate(
                key: key, expectedVersion: version, state: storedState, openFor: openFor, trips: trips,
                timeToLive: openFor + recordTimeToLive))
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
        if record == nil && version == 0 && phase == .closed { return nil }
        if let record, storeVersion == version, !wrote {
            // Nothing new; keep the open period in step with the store's clock.
            if phase == .open && record.state == .open {
                openUntil = max(openUntil, now.advanced(by: record.remainingOpen))
            }
            return nil
        }
        if conflicted { dirty = false }
        version = storeVersion
        let before = state(now: now)
        switch record?.state ?? .closed {
        case .closed, .halfOpen:
            if phase != .closed {
                phase = .closed
                failures = 0
                resetProbe()
                generation &+= 1
            }
            trips = record?.trips ?? 0
        case .open:
            let until = now.advanced(by: record?.remainingOpen ?? .zero)
            if phase == .open && wrote {
                openUntil = max(openUntil, until)
            } else if phase != .open || openUntil != until {
                enterOpen(now: now, until: until)
                trips = record?.trips ?? trips
            }
        case .isolated:
            if phase != .isolated {
                phase = .isolated
                resetProbe()
                generation &+= 1
            }
        }
        let after = state(now: now)
        return wrote || before == after ? nil : BreakerTransition(from: before, to: after)
    }

    // MARK: Reporting

    func metrics(now: ResilienceInstant) -> BreakerMetrics {
        let current = state(now: now)
        return BreakerMetrics(
            state: current, consecutiveFailures: failures, totalOpens: totalOpens,
            currentOpenDuration: phase == .open ? openedAt.duration(to: now) : .zero,
            remainingOpenDuration: current == .open ? now.duration(to: openUntil) : .zero)
    }

    func export(now: ResilienceInstant) -> BreakerSnapshot {
        let current = state(now: now)
        return BreakerSnapshot(
            state: current, remainingOpen: current == .open ? now.duration(to: openUntil) : .zero,
            values: ["trips": Double(trips), "consecutiveFailures": Double(failures)])
    }
}
