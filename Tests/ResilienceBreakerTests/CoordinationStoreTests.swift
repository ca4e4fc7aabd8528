import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Coordination store")
struct CoordinationStoreTests {
    let clock = ManualClock()
    var resilienceClock: ResilienceClock { ResilienceClock(clock, origin: clock.now) }

    @Test func inMemoryStoreConforms() async throws {
        let store = InMemoryCoordinationStore(clock: resilienceClock)
        let clock = clock
        try await RateCoordinationStoreConformance(advance: { clock.advance(by: $0) }) { store }.check()
        try await BreakerCoordinationStoreConformance(advance: { clock.advance(by: $0) }) { store }.check()
    }

    @Test func conformanceKitCatchesABrokenStore() async {
        let clock = clock
        let store = OverGrantingStore(base: InMemoryCoordinationStore(clock: resilienceClock))
        let violations = await RateCoordinationStoreConformance(advance: { clock.advance(by: $0) }) { store }.run()
        let rules = Set(violations.map(\.rule))
        #expect(rules.contains("lease-bounded-by-burst"))
        #expect(rules.contains("concurrent-leases-share-schedule"))
    }

    @Test func breakerStoreKitCatchesABrokenCompareAndSet() async {
        let clock = clock
        let store = BlindWritingStore(base: InMemoryCoordinationStore(clock: resilienceClock))
        let violations = await BreakerCoordinationStoreConformance(advance: { clock.advance(by: $0) }) { store }.run()
        let rules = Set(violations.map(\.rule))
        #expect(rules.contains("compare-and-set"))
        #expect(!rules.contains("probe-lease-exclusive"))
        #expect(!rules.contains("records-expire"))
    }

    @Test func pacedScheduleHandsOutEachSlotOnce() async throws {
        let store = InMemoryCoordinationStore(clock: resilienceClock)
        let quota = SharedRateQuota(permits: 20, per: .seconds(1))
        var slots: [Duration] = []
        // Four replicas ask in turn for batches of 3 within a 200 ms horizon, over 2 s.
        for _ in 0..<40 {
            for _ in 0..<4 {
                let lease = try await store.leaseTokens(
                    TokenLeaseRequest(key: "api", count: 3, quota: quota, horizon: .milliseconds(200)))
                for index in 0..<lease.granted {
                    slots.append(clock.now.offset + lease.slotOffset(index))
                }
            }
            clock.advance(by: .milliseconds(50))
        }
        let sorted = slots.sorted()
        for (earlier, later) in zip(sorted, sorted.dropFirst()) {
            #expect(later - earlier >= .milliseconds(50))
        }
        #expect(slots.count >= 40)
    }

    @Test func storageDoesNotGrowWithRequests() async throws {
        let store = InMemoryCoordinationStore(clock: resilienceClock)
        let quota = SharedRateQuota(permits: 1000, per: .seconds(1), burst: 10)
        for _ in 0..<500 {
            _ = try await store.leaseTokens(TokenLeaseRequest(key: "one", count: 1, quota: quota))
        }
        #expect(store.rowCount == 1)
        clock.advance(by: .seconds(5))
        #expect(try await store.sweepExpired() == 1)
        #expect(store.rowCount == 0)
    }

    @Test func faultInjectionFailsThenPassesThrough() async throws {
        let store = FaultInjectingCoordinationStore(
            wrapping: InMemoryCoordinationStore(clock: resilienceClock), clock: resilienceClock)
        store.fault = .unavailable
        await #expect(throws: CoordinationStoreError.unavailable("injected fault")) {
            try await store.sweepExpired()
        }
        store.fault = nil
        #expect(try await store.sweepExpired() == 0)
        #expect(store.calls == 2)
        #expect(store.failedCalls == 1)
    }
}

/// Grants every request in full: breaks the burst and the shared schedule. A rate store only: a store may
/// serve one seam.
private struct OverGrantingStore: RateCoordinationStore {
    let base: InMemoryCoordinationStore

    func leaseTokens(_ request: TokenLeaseRequest) async throws(CoordinationStoreError) -> TokenLease {
        TokenLease(granted: request.count, firstSlotOffset: .zero, spacing: .zero, retryAfter: .zero)
    }
    func sweepExpired() async throws(CoordinationStoreError) -> Int { try await base.sweepExpired() }
}

/// Writes every update over whatever version is stored: breaks compare-and-set. A breaker store only.
private struct BlindWritingStore: BreakerCoordinationStore {
    let base: InMemoryCoordinationStore

    func breakerRecord(key: String) async throws(CoordinationStoreError) -> BreakerRecord? {
        try await base.breakerRecord(key: key)
    }
    func updateBreaker(_ update: BreakerRecordUpdate) async throws(CoordinationStoreError) -> BreakerUpdateResult {
        var blind = update
        blind.expectedVersion = try await base.breakerRecord(key: update.key)?.version ?? 0
        return try await base.updateBreaker(blind)
    }
    func acquireProbe(
        key: String, holder: String, ttl: Duration
    ) async throws(CoordinationStoreError)
        -> ProbeLeaseResult
    {
        try await base.acquireProbe(key: key, holder: holder, ttl: ttl)
    }
    func releaseProbe(key: String, holder: String) async throws(CoordinationStoreError) {
        try await base.releaseProbe(key: key, holder: holder)
    }
    func sweepExpired() async throws(CoordinationStoreError) -> Int { try await base.sweepExpired() }
}
