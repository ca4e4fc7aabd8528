/// A conformance kit for ``RateCoordinationStore`` implementations: the in-memory store, a PostgreSQL store,
/// your own.
///
/// It drives a store through its contract (GCRA slots bounded by the burst and the horizon, refills,
/// concurrent leases sharing one schedule, typed errors for bad requests, idle rows swept) and reports
/// every broken rule. The kit waits about 0.6 s in all on a real clock.
///
/// Time moves through `advance`: advance a manual clock for a store on one, sleep for a store on a real
/// clock. Keys are unique per run, so a shared database needs no cleaning.
///
/// ```swift
/// @Test func conforms() async throws {
///     let clock = ManualClock()
///     try await RateCoordinationStoreConformance(advance: { clock.advance(by: $0) }) {
///         InMemoryCoordinationStore(clock: ResilienceClock(clock, origin: clock.now))
///     }.check()
/// }
/// ```
public struct RateCoordinationStoreConformance: Sendable {
    /// One broken rule.
    public typealias Violation = ConformanceViolation

    /// Every violation found by `check()`, thrown as one error.
    public typealias Failure = ConformanceFailure

    /// Makes the store for each rule (it may return the same store every time).
    public let makeStore: @Sendable () async throws -> any RateCoordinationStore
    /// Moves the store's clock forward by at least the given duration.
    public let advance: @Sendable (Duration) async -> Void

    /// Creates the kit.
    /// - Parameters:
    ///   - advance: Moves the store's clock forward (advance a manual clock, or sleep for a real one).
    ///   - makeStore: Makes or returns the store under test.
    public init(
        advance: @escaping @Sendable (Duration) async -> Void,
        makeStore: @escaping @Sendable () async throws -> any RateCoordinationStore
    ) {
        self.advance = advance
        self.makeStore = makeStore
    }

    /// Runs every rule and returns the violations (empty when the store conforms).
    public func run() async -> [Violation] {
        await StoreRuleRunner(makeStore: makeStore).run([
            ("lease-bounded-by-burst", checkBurst),
            ("lease-refills-at-rate", checkRefill),
            ("horizon-reserves-spaced-slots", checkHorizon),
            ("keys-independent", checkKeysIndependent),
            ("concurrent-leases-share-schedule", checkConcurrentLeases),
            ("invalid-requests-rejected", checkInvalidRequests),
            ("sweep-removes-idle-rows", checkSweep),
        ])
    }

    /// Runs every rule; throws ``Failure`` listing the violations, if any.
    public func check() async throws {
        let violations = await run()
        if !violations.isEmpty { throw Failure(subject: "RateCoordinationStore", violations: violations) }
    }

    /// 5 per 10 s: slow enough that no slot refills while a rule runs on a real clock.
    private static let slow = SharedRateQuota(permits: 5, per: .seconds(10), burst: 5)

    private func checkInvalidRequests(_ store: any RateCoordinationStore, _ key: String) async throws -> [String] {
        let checks: [(String, () async throws -> Void)] = [
            (
                "a lease of 0 slots",
                { _ = try await store.leaseTokens(TokenLeaseRequest(key: key, count: 0, quota: Self.slow)) }
            ),
            (
                "an empty key",
                { _ = try await store.leaseTokens(TokenLeaseRequest(key: "", count: 1, quota: Self.slow)) }
            ),
            (
                "a quota of 0 permits",
                {
                    _ = try await store.leaseTokens(
                        TokenLeaseRequest(key: key, count: 1, quota: SharedRateQuota(permits: 0, per: .seconds(1))))
                }
            ),
        ]
        var problems: [String] = []
        for (name, body) in checks {
            if let problem = await invalidRequestProblem(name, body) { problems.append(problem) }
        }
        return problems
    }

    private func checkSweep(_ store: any RateCoordinationStore, _ key: String) async throws -> [String] {
        _ = try await store.leaseTokens(
            TokenLeaseRequest(key: key, count: 1, quota: SharedRateQuota(permits: 10, per: .seconds(1))))
        await advance(.milliseconds(300))
        let removed = try await store.sweepExpired()
        return removed >= 1 ? [] : ["sweeping 1 idle rate row removed \(removed) rows"]
    }

    private func checkBurst(_ store: any RateCoordinationStore, _ key: String) async throws -> [String] {
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

    private func checkRefill(_ store: any RateCoordinationStore, _ key: String) async throws -> [String] {
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

    private func checkHorizon(_ store: any RateCoordinationStore, _ key: String) async throws -> [String] {
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

    private func checkKeysIndependent(_ store: any RateCoordinationStore, _ key: String) async throws -> [String] {
        _ = try await store.leaseTokens(TokenLeaseRequest(key: key + "-a", count: 100, quota: Self.slow))
        let other = try await store.leaseTokens(TokenLeaseRequest(key: key + "-b", count: 100, quota: Self.slow))
        return other.granted == 5 ? [] : ["draining one key left \(other.granted) of 5 slots on another"]
    }

    private func checkConcurrentLeases(_ store: any RateCoordinationStore, _ key: String) async throws -> [String] {
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
}
