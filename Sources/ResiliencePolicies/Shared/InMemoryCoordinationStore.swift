/// A ``CoordinationStore`` (both a ``RateCoordinationStore`` and a ``BreakerCoordinationStore``) held in
/// this process's memory: coordination between the pipelines of one process, and the reference
/// implementation the PostgreSQL store is tested against.
///
/// Every decision runs under one lock on the store's own clock (inject a manual clock in tests). Rows are
/// dropped when they expire, on access and in ``sweepExpired()``, so memory follows the number of live keys,
/// never the number of requests.
///
/// ```swift
/// let store = InMemoryCoordinationStore()
/// let limiter = SharedRateLimiter(store: store, .init(key: "jobs-api", quota: .init(permits: 20, per: .seconds(1))))
/// ```
public final class InMemoryCoordinationStore: CoordinationStore {
    private struct RateRow {
        /// The theoretical arrival time of the next slot (GCRA).
        var theoreticalArrival: ResilienceInstant
    }

    private struct BreakerRow {
        var state: BreakerState
        var version: UInt64
        var openUntil: ResilienceInstant
        var trips: Int
        var expiresAt: ResilienceInstant
        var probeHolder: String?
        var probeUntil: ResilienceInstant
    }

    private struct State {
        var rates: [String: RateRow] = [:]
        var breakers: [String: BreakerRow] = [:]
        var lastVersion: UInt64 = 0
    }

    private let state = LockedState(initialState: State())
    private let clock: ResilienceClock

    /// Creates an empty store that decides on `clock`.
    /// - Parameter clock: The store's clock; every replica sharing the store shares it.
    public init(clock: ResilienceClock = .continuous) {
        self.clock = clock
    }

    /// Reserves up to `request.count` slots of the key's GCRA schedule.
    public func leaseTokens(_ request: TokenLeaseRequest) async throws(CoordinationStoreError) -> TokenLease {
        if let problem = request.problem { throw .invalidRequest(problem) }
        let now = clock.now()
        return state.withLock { state in
            let previous = state.rates[request.key]?.theoreticalArrival ?? now
            let decision = GCRADecision(
                now: now, theoreticalArrival: previous, count: request.count, quota: request.quota,
                horizon: request.horizon)
            state.rates[request.key] = RateRow(theoreticalArrival: decision.nextTheoreticalArrival)
            return decision.lease
        }
    }

    /// The key's live record, if any.
    public func breakerRecord(key: String) async throws(CoordinationStoreError) -> BreakerRecord? {
        if key.isEmpty { throw .invalidRequest("key must not be empty") }
        let now = clock.now()
        return state.withLock { state in Self.liveRecord(key: key, in: &state, now: now) }
    }

    /// Applies `update` when the live version equals its expected version.
    public func updateBreaker(
        _ update: BreakerRecordUpdate
    ) async throws(CoordinationStoreError)
        -> BreakerUpdateResult
    {
        if let problem = update.problem { throw .invalidRequest(problem) }
        let now = clock.now()
        return state.withLock { state in
            let current = Self.liveRecord(key: update.key, in: &state, now: now)
            guard (current?.version ?? 0) == update.expectedVersion else { return .conflict(current: current) }
            state.lastVersion += 1
            let row = BreakerRow(
                state: update.state, version: state.lastVersion,
                openUntil: update.state == .open ? now.advanced(by: update.openFor) : now, trips: update.trips,
                expiresAt: now.advanced(by: update.timeToLive), probeHolder: nil, probeUntil: now)
            state.breakers[update.key] = row
            return .applied(Self.record(update.key, row, now: now))
        }
    }

    /// Grants the probe lease when the open period is over and nobody else holds it.
    public func acquireProbe(
        key: String, holder: String, ttl: Duration
    ) async throws(CoordinationStoreError)
        -> ProbeLeaseResult
    {
        if key.isEmpty || holder.isEmpty { throw .invalidRequest("key and holder must not be empty") }
        if ttl <= .zero { throw .invalidRequest("ttl must be positive (got \(ttl))") }
        let now = clock.now()
        return state.withLock { state in
            guard Self.liveRecord(key: key, in: &state, now: now) != nil, var row = state.breakers[key],
                row.state == .open
            else {
                return ProbeLeaseResult(granted: false, version: state.breakers[key]?.version ?? 0, retryAfter: .zero)
            }
            if row.openUntil > now {
                return ProbeLeaseResult(
                    granted: false, version: row.version, retryAfter: now.duration(to: row.openUntil))
            }
            if let other = row.probeHolder, other != holder, row.probeUntil > now {
                return ProbeLeaseResult(
                    granted: false, version: row.version, retryAfter: now.duration(to: row.probeUntil))
            }
            row.probeHolder = holder
            row.probeUntil = now.advanced(by: ttl)
            row.expiresAt = max(row.expiresAt, row.probeUntil)
            state.breakers[key] = row
            return ProbeLeaseResult(granted: true, version: row.version, retryAfter: .zero)
        }
    }

    /// Releases the probe lease when `holder` holds it.
    public func releaseProbe(key: String, holder: String) async throws(CoordinationStoreError) {
        if key.isEmpty || holder.isEmpty { throw .invalidRequest("key and holder must not be empty") }
        state.withLock { state in
            guard var row = state.breakers[key], row.probeHolder == holder else { return }
            row.probeHolder = nil
            state.breakers[key] = row
        }
    }

    /// Drops idle rate rows and expired breaker records.
    @discardableResult
    public func sweepExpired() async throws(CoordinationStoreError) -> Int {
        let now = clock.now()
        return state.withLock { state in
            let before = state.rates.count + state.breakers.count
            state.rates = state.rates.filter { $0.value.theoreticalArrival > now }
            state.breakers = state.breakers.filter { $0.value.expiresAt > now }
            return before - state.rates.count - state.breakers.count
        }
    }

    /// How many rows the store holds (live or not yet swept).
    public var rowCount: Int {
        state.withLock { $0.rates.count + $0.breakers.count }
    }

    private static func liveRecord(key: String, in state: inout State, now: ResilienceInstant) -> BreakerRecord? {
        guard let row = state.breakers[key] else { return nil }
        guard row.expiresAt > now else {
            state.breakers[key] = nil
            return nil
        }
        return record(key, row, now: now)
    }

    private static func record(_ key: String, _ row: BreakerRow, now: ResilienceInstant) -> BreakerRecord {
        BreakerRecord(
            key: key, state: row.state, version: row.version,
            remainingOpen: row.state == .open ? max(.zero, now.duration(to: row.openUntil)) : .zero, trips: row.trips,
            probeHolder: row.probeUntil > now ? row.probeHolder : nil)
    }
}

/// One GCRA reservation: which slots a request gets and where the schedule moves.
///
/// Slot *j* lies at `max(now, base + j·T − τ)` with `base = max(TAT, now)`, `T` the emission interval and
/// `τ = (burst − 1)·T`; a request gets every slot up to `now + horizon`, at most `count`, and moves the
/// theoretical arrival time to `base + granted·T`.
struct GCRADecision: Sendable {
    let lease: TokenLease
    let nextTheoreticalArrival: ResilienceInstant

    init(
        now: ResilienceInstant, theoreticalArrival: ResilienceInstant, count: Int, quota: SharedRateQuota,
        horizon: Duration
    ) {
        let interval = quota.emissionInterval
        let tolerance = interval * (quota.burst - 1)
        let base = max(theoreticalArrival, now)
        let room = base.duration(to: now.advanced(by: horizon + tolerance))
        var granted = 0
        if room >= .zero {
            let whole = DurationArithmetic.nanoseconds(room) / DurationArithmetic.nanoseconds(interval)
            granted = whole >= Int64(count) ? count : Int(whole) + 1
        }
        lease = TokenLease(
            granted: granted, firstSlotOffset: now.duration(to: base) - tolerance, spacing: interval,
            retryAfter: granted == 0 ? .zero - room : .zero)
        nextTheoreticalArrival = base.advanced(by: interval * granted)
    }
}
