/// A conformance kit for ``BreakerCoordinationStore`` implementations: the in-memory store, a PostgreSQL
/// store, your own.
///
/// It drives a store through its contract (compare-and-set with one winner, an exclusive probe lease that
/// expires, records that expire, typed errors for bad requests, expired rows swept) and reports every
/// broken rule. The kit waits about 1 s in all on a real clock.
///
/// Time moves through `advance`: advance a manual clock for a store on one, sleep for a store on a real
/// clock. Keys are unique per run, so a shared database needs no cleaning.
///
/// ```swift
/// @Test func conforms() async throws {
///     let clock = ManualClock()
///     try await BreakerCoordinationStoreConformance(advance: { clock.advance(by: $0) }) {
///         InMemoryCoordinationStore(clock: ResilienceClock(clock, origin: clock.now))
///     }.check()
/// }
/// ```
public struct BreakerCoordinationStoreConformance: Sendable {
    /// One broken rule.
    public typealias Violation = ConformanceViolation

    /// Every violation found by `check()`, thrown as one error.
    public typealias Failure = ConformanceFailure

    /// Makes the store for each rule (it may return the same store every time).
    public let makeStore: @Sendable () async throws -> any BreakerCoordinationStore
    /// Moves the store's clock forward by at least the given duration.
    public let advance: @Sendable (Duration) async -> Void

    /// Creates the kit.
    /// - Parameters:
    ///   - advance: Moves the store's clock forward (advance a manual clock, or sleep for a real one).
    ///   - makeStore: Makes or returns the store under test.
    public init(
        advance: @escaping @Sendable (Duration) async -> Void,
        makeStore: @escaping @Sendable () async throws -> any BreakerCoordinationStore
    ) {
        self.advance = advance
        self.makeStore = makeStore
    }

    /// Runs every rule and returns the violations (empty when the store conforms).
    public func run() async -> [Violation] {
        await StoreRuleRunner(makeStore: makeStore).run([
            ("compare-and-set", checkCompareAndSet),
            ("concurrent-compare-and-set-one-winner", checkConcurrentCompareAndSet),
            ("probe-lease-exclusive", checkProbeExclusive),
            ("probe-lease-expires", checkProbeExpires),
            ("probe-needs-open-record", checkProbeNeedsOpen),
            ("records-expire", checkRecordsExpire),
            ("invalid-requests-rejected", checkInvalidRequests),
            ("sweep-removes-expired", checkSweep),
        ])
    }

    /// Runs every rule; throws ``Failure`` listing the violations, if any.
    public func check() async throws {
        let violations = await run()
        if !violations.isEmpty { throw Failure(subject: "BreakerCoordinationStore", violations: violations) }
    }

    private func checkInvalidRequests(_ store: any BreakerCoordinationStore, _ key: String) async throws -> [String] {
        let checks: [(String, () async throws -> Void)] = [
            (
                "a half-open record",
                {
                    _ = try await store.updateBreaker(
                        BreakerRecordUpdate(key: key, expectedVersion: 0, state: .halfOpen, timeToLive: .seconds(10)))
                }
            ),
            (
                "a record without a lifetime",
                {
                    _ = try await store.updateBreaker(
                        BreakerRecordUpdate(key: key, expectedVersion: 0, state: .closed, timeToLive: .zero))
                }
            ),
            (
                "a probe lease without a lifetime",
                { _ = try await store.acquireProbe(key: key, holder: "a", ttl: .zero) }
            ),
        ]
        var problems: [String] = []
        for (name, body) in checks {
            if let problem = await invalidRequestProblem(name, body) { problems.append(problem) }
        }
        return problems
    }

    private func checkSweep(_ store: any BreakerCoordinationStore, _ key: String) async throws -> [String] {
        for index in 0..<3 {
            _ = try await store.updateBreaker(
                BreakerRecordUpdate(
                    key: "\(key)-\(index)", expectedVersion: 0, state: .closed, timeToLive: .milliseconds(100)))
        }
        await advance(.milliseconds(300))
        let removed = try await store.sweepExpired()
        return removed >= 3 ? [] : ["sweeping 3 expired records removed \(removed) rows"]
    }

    private func checkCompareAndSet(_ store: any BreakerCoordinationStore, _ key: String) async throws -> [String] {
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

    private func checkConcurrentCompareAndSet(
        _ store: any BreakerCoordinationStore, _ key: String
    ) async throws -> [String] {
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

    private func open(
        _ store: any BreakerCoordinationStore, _ key: String, for duration: Duration
    ) async throws -> UInt64? {
        let result = try await store.updateBreaker(
            BreakerRecordUpdate(
                key: key, expectedVersion: try await store.breakerRecord(key: key)?.version ?? 0, state: .open,
                openFor: duration, trips: 1, timeToLive: .seconds(60)))
        if case .applied(let record) = result { return record.version }
        return nil
    }

    private func checkProbeExclusive(_ store: any BreakerCoordinationStore, _ key: String) async throws -> [String] {
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

    private func checkProbeExpires(_ store: any BreakerCoordinationStore, _ key: String) async throws -> [String] {
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

    private func checkProbeNeedsOpen(_ store: any BreakerCoordinationStore, _ key: String) async throws -> [String] {
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

    private func checkRecordsExpire(_ store: any BreakerCoordinationStore, _ key: String) async throws -> [String] {
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
}
