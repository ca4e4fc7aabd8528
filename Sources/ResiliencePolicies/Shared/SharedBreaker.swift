/// A circuit breaker whose state every replica of a service shares through a ``BreakerCoordinationStore``: an
/// ordinary ``BreakerPolicy`` that drops into any pipeline or preset.
///
/// It runs the same state machine as every local breaker (a ``CircuitBreaker`` with a
/// ``ConsecutiveFailuresRule``, open periods from a ``BreakerBackoff``); only the storage differs: the state
/// lives in the store as a versioned record that replicas change by compare-and-set.
///
/// Each replica counts its own failures in a row; the one that reaches ``Configuration/failureThreshold``
/// opens the shared record (compare-and-set on its version). Every replica keeps the record cached, so
/// `admit` never waits for the store: the cache is refreshed after each of its own transitions and every
/// ``Configuration/refreshInterval`` by a background task, so all replicas stop calling within about one
/// interval of the record opening. When the open period ends (on the store's clock), a replica with
/// traffic asks for the probe lease; exactly one gets it and sends the half-open probe, and its outcome
/// closes or reopens the shared record for everyone.
///
/// While the store fails or misses ``Configuration/storeDeadline``, the breaker follows
/// ``Configuration/failureMode``: fail open (a local breaker on this replica's calls, published when the
/// store returns) or fail closed (reject every call). Store failures, recoveries and states adopted from
/// other replicas are reported to the telemetry sink. Call ``shutdown()`` when done with it.
///
/// ```swift
/// let breaker = SharedBreaker(store: store, .init(key: "jobs-api"))
/// preset.breaker = .custom("shared") { _ in breaker }
/// ```
public final class SharedBreaker: IsolatableBreaker, PersistableBreaker, MeasurableBreaker {
    /// Settings of a ``SharedBreaker``.
    public struct Configuration: Sendable {
        /// The protected dependency; replicas sharing the breaker use the same key.
        public var key: String
        /// This replica's name in probe leases; unique per replica (a random one by default).
        public var replica: String
        /// Counted failures in a row (on one replica) that open the shared breaker.
        public var failureThreshold = 5
        /// How long the shared breaker stays open: 30 s, doubling with each trip in a row, at most 10 min
        /// (the same ``BreakerBackoff`` every breaker's open periods come from; with jitter, each replica
        /// draws its own).
        public var openDuration = BreakerBackoff(
            base: .seconds(30), growthFactor: 2, maximumMultiplier: 20, maximum: .seconds(600))
        /// How long the probe lease lasts: a probe that does not report within it lets another replica probe.
        public var probeTimeout: Duration = .seconds(10)
        /// How often the cached record is refreshed.
        public var refreshInterval: Duration = .milliseconds(250)
        /// The deadline of every store call.
        public var storeDeadline: Duration = .milliseconds(250)
        /// How often to try the store again while it is failing.
        public var retryInterval: Duration = .seconds(1)
        /// How long a closed or isolated record lives without being written again.
        public var recordTimeToLive: Duration = .seconds(3600)
        /// What to do while the store is failing.
        public var failureMode: SharedStateFailureMode = .failOpen(expectedReplicas: 1)
        /// Which failures count.
        public var countsAsFailure: BreakerFailurePredicate = .standard
        /// How the server's `Retry-After` on a counted failure lengthens or starts the shared open period.
        public var retryAfter: BreakerRetryAfter = .standard

        /// Creates a configuration.
        /// - Parameters:
        ///   - key: The protected dependency; must not be empty.
        ///   - replica: This replica's unique name; a random one when `nil`.
        public init(key: String, replica: String? = nil) {
            self.key = key
            self.replica = replica ?? "replica-\(UInt64.random(in: 0...UInt64.max))"
        }
    }

    private let store: any BreakerCoordinationStore
    private let clock: ResilienceClock
    private let storeCaller: StoreCaller
    private let telemetry: (any TelemetrySink)?
    private let machine: LockedState<SharedBreakerMachine>
    private let refresher = LockedState<Task<Void, Never>?>(initialState: nil)
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a breaker and starts its background refresh.
    /// - Parameters:
    ///   - store: The shared store.
    ///   - configuration: The key, thresholds, intervals and failure handling.
    ///   - clock: The clock callers pass `now` from; refreshes and store deadlines run on it.
    ///   - telemetry: Receives store failures, recoveries and states adopted from other replicas.
    ///   - random: Feeds the open period's jitter when one is configured. Default: a fresh source.
    public init(
        store: any BreakerCoordinationStore, _ configuration: Configuration, clock: ResilienceClock = .continuous,
        telemetry: (any TelemetrySink)? = nil, random: SharedRandomSource = SharedRandomSource()
    ) {
        self.store = store
        self.configuration = configuration
        self.clock = clock
        self.telemetry = telemetry
        storeCaller = StoreCaller(clock: clock, deadline: configuration.storeDeadline)
        machine = LockedState(
            initialState: SharedBreakerMachine(configuration, generator: random.makeGenerator()))
        let interval = max(.milliseconds(1), configuration.refreshInterval)
        refresher.withLock { task in
            task = Task { [weak self] in
                while !Task.isCancelled {
                    do { try await clock.sleep(for: interval) } catch { return }
                    guard let self else { return }
                    await self.refresh()
                }
            }
        }
    }

    deinit {
        refresher.withLock { $0?.cancel() }
    }

    /// Stops the background refresh; the breaker keeps its last state.
    public func shutdown() {
        refresher.withLock { task in
            task?.cancel()
            task = nil
        }
    }

    /// Admits from the cached state; asks for the probe lease in the background when the open period ended.
    public func admit(now: ResilienceInstant) -> BreakerAdmission {
        let (admission, actions) = machine.withLock { $0.admit(now: now) }
        perform(actions)
        return admission
    }

    /// Counts the outcome; a trip or a probe's verdict is written to the store in the background.
    @discardableResult
    public func record(
        _ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant
    )
        -> BreakerTransition?
    {
        let (transition, actions) = machine.withLock { $0.record(outcome, for: permit, now: now) }
        perform(actions)
        return transition
    }

    /// Isolates the shared breaker (for every replica) until ``reset(now:)``.
    @discardableResult
    public func isolate(now: ResilienceInstant) -> BreakerTransition? {
        let (transition, actions) = machine.withLock { $0.isolate(now: now) }
        perform(actions)
        return transition
    }

    /// Closes the shared breaker (for every replica) and clears the counters.
    @discardableResult
    public func reset(now: ResilienceInstant) -> BreakerTransition? {
        let (transition, actions) = machine.withLock { $0.reset(now: now) }
        perform(actions)
        return transition
    }

    /// The cached state and this replica's counters.
    public func metrics(now: ResilienceInstant) -> BreakerMetrics {
        machine.withLock { $0.metrics(now: now) }
    }

    /// The cached state as a snapshot.
    public func exportState(now: ResilienceInstant) -> BreakerSnapshot {
        machine.withLock { $0.export(now: now) }
    }

    /// Restores a snapshot locally and publishes it to the store.
    @discardableResult
    public func restoreState(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        let (transition, actions) = machine.withLock { $0.restore(snapshot, now: now) }
        perform(actions)
        return transition
    }

    /// The store calls this policy's tasks are waiting for (`StoreCaller.callsAwaited`): what a test that moves
    /// a manual clock waits to reach zero.
    var storeCallsAwaited: Int { storeCaller.callsAwaited }

    /// True while the store is failing and the breaker follows its failure mode.
    public var isDegraded: Bool { machine.withLock { $0.outage != nil } }

    /// `shared-breaker(key: jobs-api, threshold: 5, open: 30 s, fail-open)`.
    public var policyDescription: String {
        "shared-breaker(key: \(configuration.key), threshold: \(configuration.failureThreshold), "
            + "open: \(configuration.openDuration.base), \(configuration.failureMode))"
    }

    /// Reads the record (or publishes a local state the store missed) once, now.
    public func refresh() async {
        let action = machine.withLock { $0.refreshAction(now: clock.now()) }
        guard let action else { return }
        await run(action)
    }

    // MARK: Store calls

    private func perform(_ actions: [SharedBreakerMachine.StoreAction]) {
        guard !actions.isEmpty else { return }
        Task { [self] in
            for action in actions { await run(action) }
        }
    }

    private func run(_ action: SharedBreakerMachine.StoreAction) async {
        let store = store
        let key = configuration.key
        let holder = configuration.replica
        let probeTimeout = configuration.probeTimeout
        switch action {
        case .read:
            let result = await call { () async throws(CoordinationStoreError) in try await store.breakerRecord(key: key)
            }
            if case .success(let record) = result { adopt(record) }
        case .write(let update):
            let result = await call { () async throws(CoordinationStoreError) in try await store.updateBreaker(update) }
            switch result {
            case .success(.applied(let record)): adopt(record, wrote: true)
            case .success(.conflict(let current)): adopt(current, conflicted: true)
            case .failure: machine.withLock { $0.writeFailed() }
            }
        case .acquireProbe(let version):
            let result = await call { () async throws(CoordinationStoreError) in
                try await store.acquireProbe(key: key, holder: holder, ttl: probeTimeout)
            }
            let now = clock.now()
            machine.withLock { $0.probeAnswered(try? result.get(), version: version, now: now) }
        case .releaseProbe:
            _ = await call { () async throws(CoordinationStoreError) in
                try await store.releaseProbe(key: key, holder: holder)
            }
        }
    }

    private func call<Value: Sendable>(
        _ operation: @escaping @Sendable () async throws(CoordinationStoreError) -> Value
    ) async -> Result<Value, CoordinationStoreError> {
        let number = machine.withLock { $0.startStoreCall() }
        let result = await storeCaller.call(operation)
        let now = clock.now()
        switch result {
        case .success:
            if let outage = machine.withLock({ $0.storeAnswered(call: number, now: now) }) {
                emit(.coordinationStoreRecovered, now: now, duration: outage)
            }
        case .failure(let error):
            if machine.withLock({ $0.storeFailed(call: number, now: now) }) {
                var duration: Duration?
                if case .timedOut(let limit) = error { duration = limit }
                emit(
                    .coordinationStoreFailed, now: now, duration: duration,
                    detail: "\(error); \(configuration.failureMode)")
            }
        }
        return result
    }

    private func adopt(_ record: BreakerRecord?, wrote: Bool = false, conflicted: Bool = false) {
        let now = clock.now()
        let transition = machine.withLock { $0.adopt(record, receivedAt: now, wrote: wrote, conflicted: conflicted) }
        if let transition { emit(.sharedBreakerSynced, now: now, transition: transition) }
    }

    private func emit(
        _ kind: ResilienceEventKind, now: ResilienceInstant, duration: Duration? = nil,
        transition: BreakerTransition? = nil, detail: String? = nil
    ) {
        guard let telemetry, telemetry.isEnabled else { return }
        telemetry.receive(
            ResilienceEvent(
                kind: kind, key: configuration.key, time: now, duration: duration, transition: transition,
                detail: detail))
    }
}
