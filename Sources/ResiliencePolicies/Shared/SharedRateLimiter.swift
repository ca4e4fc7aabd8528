/// A rate limit shared by every replica of a service through a ``RateCoordinationStore``: an ordinary
/// ``RateLimiter`` that drops into any pipeline or preset.
///
/// The store hands out *slots* of one GCRA schedule for the key; this limiter leases them a few at a time
/// (``Configuration/batchSize``) in the background, so an admission with a leased slot due is a lock and a
/// comparison, never a round trip. A slot is usable from its time until ``Configuration/slotGrace`` after
/// it; unused slots lapse. Hence, over any window of length *W*, all replicas together admit at most
/// `burst + (W + slotGrace) / emissionInterval` calls (plus the spread of the replicas' round trips to the
/// store, divided by the emission interval), however many replicas there are.
///
/// When the store fails or misses ``Configuration/storeDeadline``, the limiter follows
/// ``Configuration/failureMode``: fail open (a local schedule at this replica's share of the rate) or fail
/// closed (reject), tries the store again every ``Configuration/retryInterval``, and resumes shared
/// limiting with the first answer. Each change is reported to the telemetry sink
/// (``ResilienceEventKind/coordinationStoreFailed``, ``ResilienceEventKind/coordinationStoreRecovered``).
///
/// ```swift
/// let limiter = SharedRateLimiter(
///     store: store, .init(key: "jobs-api", quota: SharedRateQuota(permits: 20, per: .seconds(1))))
/// preset.limiter = .custom("shared") { _ in limiter }
/// ```
public final class SharedRateLimiter: RateLimiter {
    /// Settings of a ``SharedRateLimiter``.
    public struct Configuration: Sendable {
        /// The limited resource; every replica sharing the limit uses the same key and quota.
        public var key: String
        /// The rate all replicas share.
        public var quota: SharedRateQuota
        /// How many slots to lease at once; more means fewer store calls and coarser sharing.
        public var batchSize = 4
        /// How far ahead a lease may reserve slots; `nil` means `batchSize` emission intervals.
        public var horizon: Duration?
        /// How long after its time a leased slot stays usable; `nil` means half an emission interval.
        public var slotGrace: Duration?
        /// The deadline of every store call.
        public var storeDeadline: Duration = .milliseconds(250)
        /// How often to try the store again while it is failing.
        public var retryInterval: Duration = .seconds(1)
        /// What to do while the store is failing.
        public var failureMode: SharedStateFailureMode = .failOpen(expectedReplicas: 1)
        /// The longest wait offered; beyond it the call is rejected. `nil` offers any wait.
        public var maximumWait: Duration? = .seconds(30)

        /// Creates a configuration.
        /// - Parameters:
        ///   - key: The limited resource; must not be empty.
        ///   - quota: The rate all replicas share.
        public init(key: String, quota: SharedRateQuota) {
            self.key = key
            self.quota = quota
        }
    }

    private let store: any RateCoordinationStore
    private let clock: ResilienceClock
    private let storeCaller: StoreCaller
    private let telemetry: (any TelemetrySink)?
    private let machine: LockedState<SharedLimiterMachine>
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a limiter; it calls the store only when it needs slots.
    /// - Parameters:
    ///   - store: The shared store.
    ///   - configuration: The key, quota and failure handling.
    ///   - clock: The clock callers pass `now` from; store deadlines and slot times run on it.
    ///   - telemetry: Receives store failures and recoveries.
    public init(
        store: any RateCoordinationStore, _ configuration: Configuration, clock: ResilienceClock = .continuous,
        telemetry: (any TelemetrySink)? = nil
    ) {
        self.store = store
        self.configuration = configuration
        self.clock = clock
        self.telemetry = telemetry
        storeCaller = StoreCaller(clock: clock, deadline: configuration.storeDeadline)
        machine = LockedState(initialState: SharedLimiterMachine(configuration))
    }

    /// Takes a leased slot that is due, or says how long until one is; starts a lease when few are left.
    public func tryAcquire(now: ResilienceInstant) -> RateLimitDecision {
        let (decision, lease) = machine.withLock { $0.acquire(now: now) }
        if let lease { startLease(count: lease) }
        return decision
    }

    /// Slots are not returned.
    public func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {}

    /// Leased slots not yet used or lapsed at `now`.
    public func leasedSlots(now: ResilienceInstant) -> Int {
        machine.withLock { $0.usableSlots(now: now) }
    }

    /// The store calls this policy's tasks are waiting for (`StoreCaller.callsAwaited`): what a test that moves
    /// a manual clock waits to reach zero.
    var storeCallsAwaited: Int { storeCaller.callsAwaited }

    /// True while the store is failing and the limiter follows its failure mode.
    public var isDegraded: Bool { machine.withLock { $0.outage != nil } }

    /// `shared-rate(key: jobs-api, 20/1.0 seconds (burst 1), batch: 4, fail-open)`.
    public var policyDescription: String {
        "shared-rate(key: \(configuration.key), \(configuration.quota), batch: \(configuration.batchSize), "
            + "\(configuration.failureMode))"
    }

    private func startLease(count: Int) {
        let request = TokenLeaseRequest(
            key: configuration.key, count: count, quota: configuration.quota,
            horizon: machine.withLock { $0.horizon })
        let store = store
        let storeCaller = storeCaller
        Task { [weak self] in
            let result = await storeCaller.call { () async throws(CoordinationStoreError) in
                try await store.leaseTokens(request)
            }
            self?.finishLease(result)
        }
    }

    private func finishLease(_ result: Result<TokenLease, CoordinationStoreError>) {
        let now = clock.now()
        switch result {
        case .success(let lease):
            if let outage = machine.withLock({ $0.leaseSucceeded(lease, receivedAt: now) }) {
                emit(.coordinationStoreRecovered, now: now, duration: outage, detail: nil)
            }
        case .failure(let error):
            if machine.withLock({ $0.leaseFailed(now: now) }) {
                var duration: Duration?
                if case .timedOut(let limit) = error { duration = limit }
                emit(
                    .coordinationStoreFailed, now: now, duration: duration,
                    detail: "\(error); \(configuration.failureMode)")
            }
        }
    }

    private func emit(_ kind: ResilienceEventKind, now: ResilienceInstant, duration: Duration?, detail: String?) {
        guard let telemetry, telemetry.isEnabled else { return }
        telemetry.receive(
            ResilienceEvent(kind: kind, key: configuration.key, time: now, duration: duration, detail: detail))
    }
}

/// The state machine behind ``SharedRateLimiter``: leased slots, the lease in flight, the outage.
struct SharedLimiterMachine: Sendable {
    let batchSize: Int
    let horizon: Duration
    let grace: Duration
    let interval: Duration
    let tolerance: Duration
    let retryInterval: Duration
    let maximumWait: Duration?
    let failureMode: SharedStateFailureMode
    /// Leased slot times, ascending.
    var slots: [ResilienceInstant] = []
    var leaseInFlight = false
    var nextLeaseAt = ResilienceInstant.origin
    var outage: StoreOutage?
    /// The local schedule used while failing open.
    var localArrival: ResilienceInstant?

    init(_ configuration: SharedRateLimiter.Configuration) {
        batchSize = max(1, configuration.batchSize)
        interval = max(.nanoseconds(1), configuration.quota.emissionInterval)
        horizon = max(.zero, configuration.horizon ?? interval * batchSize)
        grace = max(.zero, configuration.slotGrace ?? interval / 2)
        tolerance = interval * max(0, configuration.quota.burst - 1)
        retryInterval = max(.milliseconds(1), configuration.retryInterval)
        maximumWait = configuration.maximumWait
        failureMode = configuration.failureMode
    }

    mutating func dropLapsed(now: ResilienceInstant) {
        let lapsed = slots.prefix { $0.advanced(by: grace) < now }.count
        if lapsed > 0 { slots.removeFirst(lapsed) }
    }

    mutating func usableSlots(now: ResilienceInstant) -> Int {
        dropLapsed(now: now)
        return slots.count
    }

    mutating func acquire(now: ResilienceInstant) -> (RateLimitDecision, lease: Int?) {
        dropLapsed(now: now)
        var lease: Int?
        let mayCallStore = outage.map { now >= $0.nextAttempt } ?? true
        if mayCallStore && !leaseInFlight && now >= nextLeaseAt && slots.count <= batchSize / 2 {
            leaseInFlight = true
            lease = batchSize - slots.count
            if outage != nil { outage?.nextAttempt = now.advanced(by: retryInterval) }
        }
        if let first = slots.first, first <= now {
            slots.removeFirst()
            return (.admitted(RateLimitPermit(admittedAt: now)), lease)
        }
        if let outage {
            switch failureMode {
            case .failClosed:
                return (.rejected(.rateLimited, retryAfter: max(.zero, now.duration(to: outage.nextAttempt))), lease)
            case .failOpen(let replicas):
                return (acquireLocally(now: now, replicas: max(1, replicas)), lease)
            }
        }
        let wait: Duration
        if let first = slots.first {
            wait = now.duration(to: first)
        } else {
            // Nothing leased yet: ask again once the lease in flight can have answered.
            wait = max(now.duration(to: nextLeaseAt), min(interval, .milliseconds(5)))
        }
        return (delay(wait), lease)
    }

    /// A GCRA at `1 / replicas` of the shared rate, with the shared burst.
    mutating func acquireLocally(now: ResilienceInstant, replicas: Int) -> RateLimitDecision {
        let localInterval = interval * replicas
        let base = max(localArrival ?? now, now)
        let earliest = base.advanced(by: .zero - tolerance * replicas)
        guard earliest <= now else { return delay(now.duration(to: earliest)) }
        localArrival = base.advanced(by: localInterval)
        return .admitted(RateLimitPermit(admittedAt: now))
    }

    func delay(_ wait: Duration) -> RateLimitDecision {
        if let maximumWait, wait > maximumWait { return .rejected(.rateLimited, retryAfter: wait) }
        return .delayed(retryAfter: wait)
    }

    /// Adds the granted slots; returns how long the store had been failing when this ends an outage.
    mutating func leaseSucceeded(_ lease: TokenLease, receivedAt: ResilienceInstant) -> Duration? {
        leaseInFlight = false
        for index in 0..<max(0, lease.granted) {
            slots.append(receivedAt.advanced(by: lease.slotOffset(index)))
        }
        slots.sort()
        nextLeaseAt = lease.granted == 0 ? receivedAt.advanced(by: max(lease.retryAfter, .milliseconds(1))) : receivedAt
        defer {
            outage = nil
            localArrival = nil
        }
        return outage.map { $0.since.duration(to: receivedAt) }
    }

    /// Records a failed lease; returns true when this starts an outage.
    mutating func leaseFailed(now: ResilienceInstant) -> Bool {
        leaseInFlight = false
        if outage != nil { return false }
        outage = StoreOutage(since: now, nextAttempt: now.advanced(by: retryInterval))
        return true
    }
}
