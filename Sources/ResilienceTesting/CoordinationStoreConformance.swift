/// A conformance kit for ``CoordinationStore`` implementations: the in-memory store, a PostgreSQL store,
/// your own.
///
/// It drives a store through its contract (GCRA slots bounded by the burst and the horizon, refills,
/// concurrent leases sharing one schedule, compare-and-set with one winner, an exclusive probe lease that
/// expires, records that expire, typed errors for bad requests) and reports every broken rule. Time moves
/// through `advance`: advance a manual clock for a store on one, sleep for a store on a real clock (the kit
/// waits about 1.5 s in all). Keys are unique per run, so a shared database needs no cleaning.
///
/// ```swift
/// @Test func conforms() async throws {
///     let clock = ManualClock()
///     try await CoordinationStoreConformance(advance: { clock.advance(by: $0) }) {
///         InMemoryCoordinationStore(clock: ResilienceClock(clock, origin: clock.now))
///     }.check()
/// }
/// ```
public struct CoordinationStoreConformance: Sendable {
    /// One broken rule.
    public typealias Violation = ConformanceViolation

    /// Every violation found by `check()`, thrown as one error.
    public typealias Failure = ConformanceFailure

    /// Makes the store for each rule (it may return the same store every time).
    public let makeStore: @Sendable () async throws -> any CoordinationStore
    /// Moves the store's clock forward by at least the given duration.
    public let advance: @Sendable (Duration) async -> Void

    private let prefix = "conformance-\(UInt64.random(in: 0...UInt64.max))"

    /// Creates the kit.
    /// - Parameters:
    ///   - advance: Moves the store's clock forward (advance a manual clock, or sleep for a real one).
    ///   - makeStore: Makes or returns the store under test.
    public init(
        advance: @escaping @Sendable (Duration) async -> Void,
        makeStore: @escaping @Sendable () async throws -> any CoordinationStore
    ) {
        self.advance = advance
        self.makeStore = makeStore
    }

    /// Runs every rule and returns the violations (empty when the store conforms).
    public func run() async -> [Violation] {
        let rules: [(String, @Sendable (any CoordinationStore, String) async throws -> [String])] = [
            ("lease-bounded-by-burst", checkBurst),
            ("lease-refills-at-rate", checkRefill),
            ("horizon-reserves-spaced-slots", checkHorizon),
            ("keys-independent", checkKeysIndependent),
            ("concurrent-leases-share-schedule", checkConcurrentLeases),
            ("invalid-requests-rejected", checkInvalidRequests),
            ("compare-and-set", checkCompareAndSet),
            ("concurrent-compare-and-set-one-winner", checkConcurrentCompareAndSet),
            ("probe-lease-exclusive", checkProbeExclusive),
            ("probe-lease-expires", checkProbeExpires),
            ("probe-needs-open-record", checkProbeNeedsOpen),
            ("records-expire", checkRecordsExpire),
            ("sweep-removes-expired", checkSweep),
        ]
        var violations: [Violation] = []
        for (rule, body) in rules {
            do {
                let store = try await makeStore()
                for detail in try await body(store, "\(prefix)-\(rule)") {
                    violations.append(Violation(rule: rule, detail: detail))
                }
            } catch {
                violations.append(Violation(rule: rule, detail: "unexpected error: \(error)"))
            }
        }
        return violations
    }

    /// Runs every rule; throws ``Failure`` listing the violations, if any.
    public func check() async throws {
        let violations = await run()
        if !violations.isEmpty { throw Failure(subject: "CoordinationStore", violations: violations) }
    }

    // MARK: Rate rules

    /// 5 per 10 s: slow enough that no slot refills while a rule runs on a real clock.
    private static let slow = SharedRateQuota(permits: 5, per: .seconds(10), burst: 5)

    private func checkBurst(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        var problems: [String] = []
        let first = try await store.leaseTokens(TokenLeaseRequest(key: key, count: 100, quota: Self.slow))
        if first.granted != 5 { problems.append("a fresh key with burst 5 granted \(first.granted) slots") }
        for index in 0..<first.granted where first.slotOffset(index) != .zero {
            problems.append("burst slot \(index) lies \(first.slotOffset(index)) after the decision, not at once")
        }
        let second = try await store.leaseTokens(TokenLeaseRequest(key: key, count: 100, quota: Self.slow))
        if second.granted != 0 { problems.append("an exhausted key granted \(second.granted) more slots") }
        if second.retryAfter <= .zero || second.retryAfter > .seconds(2) {
            problems.append("an exhausted key said retry after \(second.retryAfter), expected (0, 2 s]")
        }
        return problems
    }

    private func checkRefill(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        let quota = SharedRateQuota(permits: 10, per: .seconds(1), burst: 5)
        let first = try await store.leaseTokens(TokenLeaseRequest(key: key, count: 100, quota: quota))
        await advance(.milliseconds(250))
        let second = try await store.leaseTokens(TokenLeaseRequest(key: key, count: 100, quota: quota))
        var problems: [String] = []
        if first.granted != 5 { problems.append("a fresh key with burst 5 granted \(first.granted) slots") }
        if second.granted < 2 || second.granted > 5 {
            problems.append("250 ms at 10/s after draining granted \(second.granted) slots, expected 2 … 5")
        }
        return problems
    }

    private func checkHorizon(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        let quota = SharedRateQuota(permits: 10, per: .seconds(1), burst: 1)
        let lease = try await store.leaseTokens(
            TokenLeaseRequest(key: key, count: 100, quota: quota, horizon: .milliseconds(450)))
        var problems: [String] = []
        if lease.granted != 5 { problems.append("a 450 ms horizon at 10/s granted \(lease.granted) slots, not 5") }
        if lease.spacing != .milliseconds(100) { problems.append("spacing \(lease.spacing), expected 100 ms") }
        if lease.slotOffset(0) != .zero || lease.slotOffset(4) != .milliseconds(400) {
            problems.append("slots at \(lease.slotOffset(0)) and \(lease.slotOffset(4)), expected 0 and 400 ms")
        }
        let next = try await store.leaseTokens(
            TokenLeaseRequest(key: key, count: 100, quota: quota, horizon: .milliseconds(450)))
        if next.granted > 1 { problems.append("the horizon was full yet \(next.granted) more slots were granted") }
        if next.granted == 0 && (next.retryAfter <= .zero || next.retryAfter > .milliseconds(100)) {
            problems.append("a full horizon said retry after \(next.retryAfter), expected (0, 100 ms]")
        }
        return problems
    }

    private func checkKeysIndependent(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        _ = try await store.leaseTokens(TokenLeaseRequest(key: key + "-a", count: 100, quota: Self.slow))
        let other = try await store.leaseTokens(TokenLeaseRequest(key: key + "-b", count: 100, quota: Self.slow))
        return other.granted == 5 ? [] : ["draining one key left \(other.granted) of 5 slots on another"]
    }

    private func checkConcurrentLeases(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await store.leaseTokens(TokenLeaseRequest(key: key, count: 1, quota: Self.slow)).granted
                }
            }
            return try await group.reduce(0, +)
        }
        return total == 5 ? [] : ["20 concurrent leases on a burst of 5 were granted \(total) slots"]
    }

    private func checkInvalidRequests(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        var problems: [String] = []
        func expectInvalid(_ name: String, _ body: () async throws -> Void) async {
            do {
                try await body()
                problems.append("\(name) was accepted")
            } catch let error as CoordinationStoreError {
                if case .invalidRequest = error { return }
                problems.append("\(name) threw \(error), not invalidRequest")
            } catch {
                problems.append("\(name) threw \(error), not a CoordinationStoreError")
            }
        }
        await expectInvalid("a lease of 0 slots") {
            _ = try await store.leaseTokens(TokenLeaseRequest(key: key, count: 0, quota: Self.slow))
        }
        await expectInvalid("an empty key") {
            _ = try await store.leaseTokens(TokenLeaseRequest(key: "", count: 1, quota: Self.slow))
        }
        await expectInvalid("a quota of 0 permits") {
            _ = try await store.leaseTokens(
                TokenLeaseRequest(key: key, count: 1, quota: SharedRateQuota(permits: 0, per: .seconds(1))))
        }
        await expectInvalid("a half-open record") {
            _ = try await store.updateBreaker(
                BreakerRecordUpdate(key: key, expectedVersion: 0, state: .halfOpen, timeToLive: .seconds(10)))
        }
        await expectInvalid("a record without a lifetime") {
            _ = try await store.updateBreaker(
                BreakerRecordUpdate(key: key, expectedVersion: 0, state: .closed, timeToLive: .zero))
        }
        await expectInvalid("a probe lease without a lifetime") {
            _ = try await store.acquireProbe(key: key, holder: "a", ttl: .zero)
        }
        return problems
    }

    // MARK: Breaker rules

    private func checkCompareAndSet(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        var problems: [String] = []
        if let record = try await store.breakerRecord(key: key) {
            problems.append("a key never written reads as \(record)")
        }
        let create = BreakerRecordUpdate(key: key, expectedVersion: 0, state: .closed, timeToLive: .seconds(60))
        guard case .applied(let created) = try await store.updateBreaker(create), created.version > 0 else {
            return problems + ["creating a record (expected version 0) did not apply with a positive version"]
        }
        switch try await store.updateBreaker(create) {
        case .applied: problems.append("a second create with expected version 0 applied")
        case .conflict(let current):
            if current?.version != created.version {
                problems.append("the conflict reported \(String(describing: current))")
            }
        }
        let open = BreakerRecordUpdate(
            key: key, expectedVersion: created.version, state: .open, openFor: .seconds(2), trips: 1,
            timeToLive: .seconds(60))
        guard case .applied(let opened) = try await store.updateBreaker(open) else {
            return problems + ["an update with the current version did not apply"]
        }
        if opened.version <= created.version { problems.append("the version did not grow: \(opened.version)") }
        if opened.remainingOpen <= .zero || opened.remainingOpen > .seconds(2) {
            problems.append("open for 2 s reports \(opened.remainingOpen) left")
        }
        let read = try await store.breakerRecord(key: key)
        if read?.version != opened.version || read?.state != .open || read?.trips != 1 {
            problems.append("reading back gave \(String(describing: read)), wrote \(opened)")
        }
        return problems
    }

    private func checkConcurrentCompareAndSet(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        guard
            case .applied(let created) = try await store.updateBreaker(
                BreakerRecordUpdate(key: key, expectedVersion: 0, state: .closed, timeToLive: .seconds(60)))
        else { return ["creating a record did not apply"] }
        let applied = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let result = try await store.updateBreaker(
                        BreakerRecordUpdate(
                            key: key, expectedVersion: created.version, state: .open, openFor: .seconds(5),
                            trips: 1, timeToLive: .seconds(60)))
                    if case .applied = result { return 1 }
                    return 0
                }
            }
            return try await group.reduce(0, +)
        }
        return applied == 1 ? [] : ["8 concurrent writers of version \(created.version): \(applied) applied"]
    }

    private func open(_ store: any CoordinationStore, _ key: String, for duration: Duration) async throws -> UInt64? {
        let result = try await store.updateBreaker(
            BreakerRecordUpdate(
                key: key, expectedVersion: try await store.breakerRecord(key: key)?.version ?? 0, state: .open,
                openFor: duration, trips: 1, timeToLive: .seconds(60)))
        if case .applied(let record) = result { return record.version }
        return nil
    }

    private func checkProbeExclusive(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        guard let version = try await open(store, key, for: .milliseconds(200)) else {
            return ["opening did not apply"]
        }
        var problems: [String] = []
        let early = try await store.acquireProbe(key: key, holder: "early", ttl: .seconds(10))
        if early.granted { problems.append("the probe lease was granted during the open period") }
        if !early.granted && (early.retryAfter <= .zero || early.retryAfter > .milliseconds(200)) {
            problems.append("during the open period retry after \(early.retryAfter), expected (0, 200 ms]")
        }
        await advance(.milliseconds(300))
        let winners = try await withThrowingTaskGroup(of: String?.self) { group in
            for replica in 0..<6 {
                group.addTask {
                    let holder = "replica-\(replica)"
                    return try await store.acquireProbe(key: key, holder: holder, ttl: .seconds(10)).granted
                        ? holder : nil
                }
            }
            return try await group.reduce(into: [String]()) { if let holder = $1 { $0.append(holder) } }
        }
        guard winners.count == 1, let winner = winners.first else {
            return problems + ["6 replicas asked for the probe lease at once: \(winners.count) got it"]
        }
        let loser = winner == "replica-0" ? "replica-1" : "replica-0"
        if try await !store.acquireProbe(key: key, holder: winner, ttl: .seconds(10)).granted {
            problems.append("the holder could not renew its lease")
        }
        if try await store.acquireProbe(key: key, holder: loser, ttl: .seconds(10)).granted {
            problems.append("a second replica got the lease while it was held")
        }
        if try await store.breakerRecord(key: key)?.probeHolder != winner {
            problems.append("the record does not name the holder")
        }
        try await store.releaseProbe(key: key, holder: loser)
        if try await store.acquireProbe(key: key, holder: loser, ttl: .seconds(10)).granted {
            problems.append("a release by a replica that did not hold the lease freed it")
        }
        try await store.releaseProbe(key: key, holder: winner)
        if try await !store.acquireProbe(key: key, holder: loser, ttl: .seconds(10)).granted {
            problems.append("after the holder released it, another replica could not lease the probe")
        }
        let current = try await store.breakerRecord(key: key)
        _ = try await store.updateBreaker(
            BreakerRecordUpdate(
                key: key, expectedVersion: current?.version ?? version, state: .closed, timeToLive: .seconds(60)))
        if let holder = try await store.breakerRecord(key: key)?.probeHolder {
            problems.append("an applied update left the lease with \(holder)")
        }
        return problems
    }

    private func checkProbeExpires(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        guard try await open(store, key, for: .zero) != nil else { return ["opening did not apply"] }
        var problems: [String] = []
        if try await !store.acquireProbe(key: key, holder: "a", ttl: .milliseconds(200)).granted {
            problems.append("an open record whose period is over did not grant the lease")
        }
        if try await store.acquireProbe(key: key, holder: "b", ttl: .milliseconds(200)).granted {
            problems.append("a second holder got the lease before it expired")
        }
        await advance(.milliseconds(300))
        if try await !store.acquireProbe(key: key, holder: "b", ttl: .milliseconds(200)).granted {
            problems.append("an expired lease was not granted to another holder")
        }
        return problems
    }

    private func checkProbeNeedsOpen(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        var problems: [String] = []
        if try await store.acquireProbe(key: key, holder: "a", ttl: .seconds(10)).granted {
            problems.append("the probe lease was granted for a key without a record")
        }
        _ = try await store.updateBreaker(
            BreakerRecordUpdate(key: key, expectedVersion: 0, state: .closed, timeToLive: .seconds(60)))
        if try await store.acquireProbe(key: key, holder: "a", ttl: .seconds(10)).granted {
            problems.append("the probe lease was granted for a closed record")
        }
        return problems
    }

    private func checkRecordsExpire(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        guard
            case .applied(let first) = try await store.updateBreaker(
                BreakerRecordUpdate(key: key, expectedVersion: 0, state: .closed, timeToLive: .milliseconds(200)))
        else { return ["creating a record did not apply"] }
        var problems: [String] = []
        if try await store.breakerRecord(key: key) == nil { problems.append("a live record reads as absent") }
        await advance(.milliseconds(300))
        if let record = try await store.breakerRecord(key: key) {
            problems.append("a record past its lifetime reads as \(record)")
        }
        let again = try await store.updateBreaker(
            BreakerRecordUpdate(key: key, expectedVersion: 0, state: .closed, timeToLive: .seconds(10)))
        switch again {
        case .applied(let record):
            if record.version <= first.version {
                problems.append("a recreated record reused version \(record.version)")
            }
        case .conflict(let current):
            problems.append("recreating an expired record conflicted with \(String(describing: current))")
        }
        return problems
    }

    private func checkSweep(_ store: any CoordinationStore, _ key: String) async throws -> [String] {
        for index in 0..<3 {
            _ = try await store.updateBreaker(
                BreakerRecordUpdate(
                    key: "\(key)-\(index)", expectedVersion: 0, state: .closed, timeToLive: .milliseconds(100)))
        }
        _ = try await store.leaseTokens(
            TokenLeaseRequest(key: key, count: 1, quota: SharedRateQuota(permits: 10, per: .seconds(1))))
        await advance(.milliseconds(300))
        let removed = try await store.sweepExpired()
        return removed >= 4 ? [] : ["sweeping 3 expired records and 1 idle rate row removed \(removed) rows"]
    }
}
