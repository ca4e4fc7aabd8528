/// Shared coordination state for many replicas of one service, in two small seams: a
/// ``RateCoordinationStore`` hands out slots of a shared rate, a ``BreakerCoordinationStore`` keeps versioned
/// breaker records and probe leases. A store that serves both (PostgreSQL, the in-memory store) is a
/// `CoordinationStore`.
///
/// Rules both seams share:
/// - **Every decision is made by the store, on the store's clock**: replicas never send their own time, so
///   their clocks may disagree. Durations in answers are relative to the store's decision instant; a replica
///   adds them to the instant it *received* the answer, which can only make it more conservative.
/// - **Atomic.** Each method is one indivisible decision.
/// - **A time to live on everything**; `sweepExpired()` deletes expired rows, so storage never grows with
///   the number of requests. A store adopting both seams implements it once and sweeps everything.
/// - **Typed failures, no hangs of its own making.** Methods throw ``CoordinationStoreError``; invalid
///   requests throw ``CoordinationStoreError/invalidRequest(_:)`` before touching storage. Callers still put
///   a deadline on every call (a network store can stall), and treat a timed-out call as having had an
///   unknown effect.
public typealias CoordinationStore = RateCoordinationStore & BreakerCoordinationStore

/// The rate half of the shared state: GCRA reservations of a key's schedule, shared by every replica.
///
/// ## Contract
/// - **Rate decisions are GCRA reservations.** ``leaseTokens(_:)`` grants up to ``TokenLeaseRequest/count``
///   slots of the key's schedule: slot *j* of a grant may be used ``TokenLease/firstSlotOffset`` +
///   *j* × ``TokenLease/spacing`` after the decision (never before the decision itself). Over any interval of
///   length *W*, the slots a store hands out for one key number at most `burst + W / emissionInterval`,
///   whoever asks. Two replicas leasing at once never receive the same slot. No slot lies further than
///   ``TokenLeaseRequest/horizon`` after the decision.
/// - **Decided on the store's clock**, atomically, with typed errors (see ``CoordinationStore``).
/// - **Rows expire**: a key's row disappears once its schedule is idle (the bucket is full);
///   ``sweepExpired()`` deletes such rows.
///
/// ResilienceTesting's `RateCoordinationStoreConformance` checks these rules against an implementation.
public protocol RateCoordinationStore: Sendable {
    /// Reserves up to `request.count` slots of a key's rate schedule.
    func leaseTokens(_ request: TokenLeaseRequest) async throws(CoordinationStoreError) -> TokenLease

    /// Deletes expired rows; returns how many it removed.
    @discardableResult
    func sweepExpired() async throws(CoordinationStoreError) -> Int
}

/// The breaker half of the shared state: one versioned breaker record per key (a snapshot of the shared
/// state machine) changed only by compare-and-set, and the lease to send the half-open probe.
///
/// ## Contract
/// - **Versioned breaker records.** ``updateBreaker(_:)`` applies only when the stored version equals the
///   expected one (`0` meaning "no record"); it then stores a strictly greater version and returns the new
///   record, otherwise it returns the current record without changing anything. Two compare-and-set calls
///   with the same expected version never both apply.
/// - **One probe at a time.** ``acquireProbe(key:holder:ttl:)`` grants the lease only when the key's
///   record is ``BreakerState/open`` with its open period over on the store's clock, and nobody else holds an
///   unexpired lease; the holder asking again renews it. Two replicas asking at once never both get it. Any
///   breaker update releases the lease.
/// - **Records expire** at their ``BreakerRecordUpdate/timeToLive``, probe leases at their `ttl`; an expired
///   record reads as absent, and ``sweepExpired()`` deletes it.
/// - **Decided on the store's clock**, atomically, with typed errors (see ``CoordinationStore``).
///
/// ResilienceTesting's `BreakerCoordinationStoreConformance` checks these rules against an implementation.
public protocol BreakerCoordinationStore: Sendable {
    /// The key's breaker record, or `nil` when there is none (or it expired).
    func breakerRecord(key: String) async throws(CoordinationStoreError) -> BreakerRecord?

    /// Compare-and-set of a key's breaker record; releases any probe lease when it applies.
    func updateBreaker(_ update: BreakerRecordUpdate) async throws(CoordinationStoreError) -> BreakerUpdateResult

    /// Asks for the lease to probe the key's half-open circuit.
    func acquireProbe(
        key: String, holder: String, ttl: Duration
    ) async throws(CoordinationStoreError)
        -> ProbeLeaseResult

    /// Gives the probe lease back (a cancelled probe); does nothing unless `holder` holds it.
    func releaseProbe(key: String, holder: String) async throws(CoordinationStoreError)

    /// Deletes expired records and leases; returns how many rows it removed.
    @discardableResult
    func sweepExpired() async throws(CoordinationStoreError) -> Int
}

/// Why a ``RateCoordinationStore`` or ``BreakerCoordinationStore`` call failed.
public enum CoordinationStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The store cannot be reached (connection refused or lost, server shutting down).
    case unavailable(String)
    /// The call did not finish within its deadline; its effect is unknown.
    case timedOut(Duration)
    /// The request was malformed (empty key, non-positive count or rate); nothing was stored.
    case invalidRequest(String)
    /// The store answered something it should not have (a schema from another program, a bad row).
    case protocolViolation(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .unavailable(let reason): "coordination store unavailable: \(reason)"
        case .timedOut(let deadline): "coordination store call timed out after \(deadline)"
        case .invalidRequest(let reason): "invalid coordination request: \(reason)"
        case .protocolViolation(let reason): "coordination store misbehaved: \(reason)"
        }
    }
}

/// A shared rate: `permits` per `period`, bursting up to `burst` at once.
public struct SharedRateQuota: Hashable, Sendable, CustomStringConvertible {
    /// Calls allowed per period.
    public var permits: Int
    /// The period.
    public var period: Duration
    /// How many slots may fall at the same instant (1 = strictly paced).
    public var burst: Int

    /// Creates a quota.
    /// - Parameters:
    ///   - permits: Calls allowed per `period`; must be positive.
    ///   - period: The period; must be positive.
    ///   - burst: How many calls may start at once; must be positive.
    public init(permits: Int, per period: Duration, burst: Int = 1) {
        self.permits = permits
        self.period = period
        self.burst = burst
    }

    /// The time between two slots: `period / permits`.
    public var emissionInterval: Duration { period / max(1, permits) }

    /// Why the quota is unusable, or `nil` when it is valid.
    public var problem: String? {
        if permits <= 0 { return "permits must be positive (got \(permits))" }
        if period <= .zero { return "period must be positive (got \(period))" }
        if burst <= 0 { return "burst must be positive (got \(burst))" }
        if emissionInterval <= .zero { return "permits \(permits) per \(period) is finer than a nanosecond" }
        return nil
    }

    /// `20/1.0 seconds (burst 1)`.
    public var description: String { "\(permits)/\(period) (burst \(burst))" }
}

/// A request for slots of a key's shared rate schedule.
public struct TokenLeaseRequest: Hashable, Sendable {
    /// The limited resource (an API key, a host).
    public var key: String
    /// How many slots the replica would like (its batch size).
    public var count: Int
    /// The rate all replicas share; every replica must send the same quota for a key.
    public var quota: SharedRateQuota
    /// How far after the decision a granted slot may lie (zero: only slots usable now).
    public var horizon: Duration

    /// Creates a request.
    /// - Parameters:
    ///   - key: The limited resource; must not be empty.
    ///   - count: How many slots to reserve; must be positive.
    ///   - quota: The shared rate.
    ///   - horizon: The furthest a slot may lie after the decision; must not be negative.
    public init(key: String, count: Int, quota: SharedRateQuota, horizon: Duration = .zero) {
        self.key = key
        self.count = count
        self.quota = quota
        self.horizon = horizon
    }

    /// Why the request is unusable, or `nil` when it is valid.
    public var problem: String? {
        if key.isEmpty { return "key must not be empty" }
        if count <= 0 { return "count must be positive (got \(count))" }
        if horizon < .zero { return "horizon must not be negative (got \(horizon))" }
        return quota.problem
    }
}

/// Slots granted by ``RateCoordinationStore/leaseTokens(_:)``, relative to the store's decision.
public struct TokenLease: Hashable, Sendable {
    /// How many slots were granted (0 … the requested count).
    public var granted: Int
    /// When the first granted slot may be used, relative to the decision (zero or negative: at once).
    public var firstSlotOffset: Duration
    /// The time between consecutive granted slots.
    public var spacing: Duration
    /// When nothing was granted: how long until a slot falls within the horizon again.
    public var retryAfter: Duration

    /// Creates a lease.
    ///
    /// - Parameters:
    ///   - granted: How many slots were granted (0 … the requested count).
    ///   - firstSlotOffset: When the first granted slot may be used, relative to the decision (zero or negative: at
    ///     once).
    ///   - spacing: The time between consecutive granted slots.
    ///   - retryAfter: When nothing was granted: how long until a slot falls within the horizon again.
    public init(granted: Int, firstSlotOffset: Duration, spacing: Duration, retryAfter: Duration) {
        self.granted = granted
        self.firstSlotOffset = firstSlotOffset
        self.spacing = spacing
        self.retryAfter = retryAfter
    }

    /// Slot `index`'s offset from the decision, never negative.
    public func slotOffset(_ index: Int) -> Duration {
        max(.zero, firstSlotOffset + spacing * index)
    }
}

/// A breaker's shared record, as a ``BreakerCoordinationStore`` keeps it.
public struct BreakerRecord: Hashable, Sendable {
    /// The key.
    public var key: String
    /// The shared state: ``BreakerState/closed``, ``BreakerState/open`` or ``BreakerState/isolated``
    /// (half-open is "open, period over, probe lease held").
    public var state: BreakerState
    /// Incremented by every applied update; `0` is never stored.
    public var version: UInt64
    /// Time left in the open period on the store's clock (zero when over or not open).
    public var remainingOpen: Duration
    /// Trips in a row, for growing open periods.
    public var trips: Int
    /// Who holds the probe lease, if anyone holds an unexpired one.
    public var probeHolder: String?

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - state: The shared state: ``BreakerState/closed``, ``BreakerState/open`` or ``BreakerState/isolated``
    ///     (half-open is "open, period over, probe lease held").
    ///   - version: Incremented by every applied update; `0` is never stored.
    ///   - remainingOpen: Time left in the open period on the store's clock (zero when over or not open). Default:
    ///     `.zero`.
    ///   - trips: Trips in a row, for growing open periods. Default: `0`.
    ///   - probeHolder: Who holds the probe lease, if anyone holds an unexpired one.
    public init(
        key: String, state: BreakerState, version: UInt64, remainingOpen: Duration = .zero, trips: Int = 0,
        probeHolder: String? = nil
    ) {
        self.key = key
        self.state = state
        self.version = version
        self.remainingOpen = remainingOpen
        self.trips = trips
        self.probeHolder = probeHolder
    }
}

/// A compare-and-set of a breaker record.
public struct BreakerRecordUpdate: Hashable, Sendable {
    /// The key.
    public var key: String
    /// The version the writer last saw; `0` when it saw no record.
    public var expectedVersion: UInt64
    /// The new state (``BreakerState/halfOpen`` is not stored: write ``BreakerState/open``).
    public var state: BreakerState
    /// How long the record stays open, from the store's decision instant (ignored unless open).
    public var openFor: Duration
    /// Trips in a row.
    public var trips: Int
    /// How long the record lives after this update; it reads as absent afterwards.
    public var timeToLive: Duration

    /// Creates an update.
    /// - Parameters:
    ///   - key: The breaker's key; must not be empty.
    ///   - expectedVersion: The version the writer saw (`0`: no record).
    ///   - state: The new state; not ``BreakerState/halfOpen``.
    ///   - openFor: The open period when `state` is open; must not be negative.
    ///   - trips: Trips in a row; must not be negative.
    ///   - timeToLive: The record's lifetime; must be positive and, when open, at least `openFor`.
    public init(
        key: String, expectedVersion: UInt64, state: BreakerState, openFor: Duration = .zero, trips: Int = 0,
        timeToLive: Duration
    ) {
        self.key = key
        self.expectedVersion = expectedVersion
        self.state = state
        self.openFor = openFor
        self.trips = trips
        self.timeToLive = timeToLive
    }

    /// Why the update is unusable, or `nil` when it is valid.
    public var problem: String? {
        if key.isEmpty { return "key must not be empty" }
        if state == .halfOpen { return "half-open is not stored; write open and lease the probe" }
        if openFor < .zero { return "openFor must not be negative (got \(openFor))" }
        if trips < 0 { return "trips must not be negative (got \(trips))" }
        if timeToLive <= .zero { return "timeToLive must be positive (got \(timeToLive))" }
        if state == .open && timeToLive < openFor { return "timeToLive \(timeToLive) is shorter than openFor" }
        return nil
    }
}

/// What a compare-and-set did.
public enum BreakerUpdateResult: Hashable, Sendable {
    /// It applied; this is the stored record.
    case applied(BreakerRecord)
    /// Another writer got there first; this is the current record (`nil`: none).
    case conflict(current: BreakerRecord?)
}

/// The answer to ``BreakerCoordinationStore/acquireProbe(key:holder:ttl:)``.
public struct ProbeLeaseResult: Hashable, Sendable {
    /// True when the asking replica holds the lease now.
    public var granted: Bool
    /// The record's version at the decision (`0`: no record).
    public var version: UInt64
    /// When not granted: how long until asking again could succeed (the rest of the open period or of
    /// another holder's lease); zero when the key is not open at all.
    public var retryAfter: Duration

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - granted: True when the asking replica holds the lease now.
    ///   - version: The record's version at the decision (`0`: no record).
    ///   - retryAfter: When not granted: how long until asking again could succeed (the rest of the open period or of
    ///     another holder's lease); zero when the key is not open at all.
    public init(granted: Bool, version: UInt64, retryAfter: Duration) {
        self.granted = granted
        self.version = version
        self.retryAfter = retryAfter
    }
}

extension ResilienceEventKind {
    /// A coordination store call failed or missed its deadline; `detail` is the reason and the fail mode
    /// engaged (`"fail-open"` or `"fail-closed"`), `duration` the deadline when it timed out.
    public static let coordinationStoreFailed: Self = "coordination-store-failed"
    /// The coordination store answered again after failing; `duration` is how long it was unavailable.
    public static let coordinationStoreRecovered: Self = "coordination-store-recovered"
    /// A shared breaker adopted a state written by another replica; `transition` says how.
    public static let sharedBreakerSynced: Self = "shared-breaker-synced"
    /// A shared limiter leased slots from the store; `count` is how many, `total` how many were asked for.
    public static let sharedTokensLeased: Self = "shared-tokens-leased"
}
