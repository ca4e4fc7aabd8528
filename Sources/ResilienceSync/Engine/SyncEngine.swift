import Foundation
import ResilienceCore

/// Drains a durable ``MutationQueue`` to a server: a long-lived orchestrator (an actor) that sends every
/// request through an injected ``ResiliencePipeline`` (normally a rate-limit circuit breaker and a per-request
/// timeout built with ResiliencePolicies), with per-mutation retry limits, careful 409 handling and persisted
/// cooldowns. The engine keeps no breaker or backoff of its own: the pipeline's stages decide whether a
/// request goes out and how long it may take; the engine decides what each answer means for the queue.
///
/// ## Rules
/// - **Order.** Mutations go out in enqueue order. When one fails, later mutations *of the same entity* wait
///   for the next pass; other entities continue.
/// - **429.** A rate-limit response does not count against the mutation's attempts; the pipeline's breaker
///   records it (normally ResiliencePolicies' `RateLimitBreaker`: after 3 in a row it opens for 30 s × a
///   multiplier that doubles up to 10, capped at 300 s). While the breaker rejects, the engine is
///   ``SyncState/rateLimited(until:pending:)`` and sends nothing. Any other outcome resets the breaker's
///   counter (``consecutiveRateLimitErrors``); a success resets everything.
/// - **Failures.** Network errors, timeouts and other API errors count against the mutation's attempts; after
///   ``Configuration/maxRetries`` the delegate marks the entity failed and the mutation moves to the failed
///   list. An unreachable network (``FailureCategory/networkUnreachable``) also ends the pass as
///   ``SyncState/offline``.
/// - **Spacing.** The engine counts no failed passes and grows no delay. When a stage of the pipeline refuses
///   to send (an open breaker, a local limit), the pass stops and ``run()`` sleeps until the instant the
///   rejection names; after a pass that left failures behind it passes again after the fixed
///   ``Configuration/pollInterval`` or when woken. For a backoff that grows with repeated network or server
///   errors, add a breaker stage that counts them (ResiliencePolicies' `ConsecutiveFailureBreaker`).
/// - **409.** Only a 409 that confirms the entity already exists (an RFC 9457 problem `type` or error code
///   that ``IdempotencyConflict`` recognises, or ``Configuration/conflicts``' predicate) counts as synced: the
///   delegate deletes the local duplicate. A 409 saying a request with this `Idempotency-Key` is still in
///   progress keeps the mutation queued, uncounted, for a later pass with the same key. Any other 409 is
///   ambiguous: it counts as a failed attempt and never deletes local data (unless
///   ``ConflictRules/ambiguousMeansDuplicate`` says so).
/// - **Idempotency.** Every request carries the mutation's `Idempotency-Key`, so a resend after a crash or a
///   lost response cannot apply twice. A mutation leaves the store only after the server's answer.
/// - **Persistence.** The pipeline's breaker, when handed to the engine as `breaker`, is exported to the store's
///   metadata table and restored on start (its state, multiplier and cooldown, aged by the wall time that
///   passed), so a restart does not hammer a rate-limited server.
/// - **Telemetry.** Every state change emits ``ResilienceEventKind/syncStateChanged``; breaker changes emit
///   ``ResilienceEventKind/breakerTransition``.
///
/// ```swift
/// let breaker = RateLimitBreaker()
/// let pipeline = Pipeline {
///     CircuitBreakerStrategy(breaker: breaker)
///     TimeoutStrategy(.seconds(30))
/// }
/// let engine = SyncEngine(store: store, transport: transport, requestBuilder: EventsAPI(),
///                         pipeline: pipeline, breaker: breaker, delegate: localDatabase)
/// Task { for await state in engine.stateUpdates() { banner.show(state) } }
/// Task { await engine.run() }
/// ```
public actor SyncEngine {
    private let store: any MutationQueue & MutationMetadataStore
    private let transport: any HTTPTransport
    private let requestBuilder: any SyncRequestBuilder
    private let classifier: CompositeErrorClassifier
    private let pipeline: any ResiliencePipeline
    private let breaker: (any ResettableBreaker & PersistableBreaker & MeasurableBreaker)?
    private let delegate: (any SyncEngineDelegate)?
    private let clock: ResilienceClock
    private let telemetry: (any TelemetrySink)?
    private let broadcaster: SyncStateBroadcaster

    /// The engine's settings.
    public let configuration: Configuration

    /// Consecutive 429 responses since the last other outcome, as the breaker counts them (zero without a
    /// breaker).
    public var consecutiveRateLimitErrors: Int {
        breaker?.metrics(now: clock.now()).consecutiveFailures ?? 0
    }

    private var isNetworkAvailable = true
    private var isSyncing = false
    /// How many times ``clearPendingMutations(markEntitiesFailed:)`` has begun: a pass that sees it change stops
    /// before its next request, so nothing cleared goes out from a page it read earlier.
    private var clearings = 0
    /// How many clears are under way (marking entities failed): no pass starts meanwhile.
    private var clearsInProgress = 0
    private var lastPersistedBreaker: PersistedBreakerState?
    /// The store could not read the persisted breaker state (a busy or failing store): until a pass reads it,
    /// no pass sends (the cooldown it holds is unknown) and nothing is saved over it.
    private var breakerStateUnread = false
    /// How many passes have ended, and the report of the last one: a ``run()`` loop that found a pass under way
    /// (``performSync()``'s, or another loop's) waits for it to end and then waits as after its own pass.
    private var passesEnded = 0
    private var lastPassReport = SyncReport()
    /// How many ``run()`` loops wait for the pass under way to end: its end wakes them (`passEndSignal`).
    private var runsAwaitingPass = 0
    private let passEndSignal = SyncWakeSignal()
    private let wakeSignal = SyncWakeSignal()

    /// Creates an engine and restores the breaker state persisted in `store` by an earlier process.
    ///
    /// When the store cannot read that state (it is busy, say), the engine starts in ``SyncState/error(_:)``,
    /// emits ``ResilienceEventKind/syncStoreFailed``, and each pass reads it again before sending: until a read
    /// succeeds no request goes out and the stored state is not overwritten (``resetCircuitBreaker()`` gives it
    /// up).
    ///
    /// `pipeline` runs every request. `breaker`, when given, must be the breaker inside `pipeline`: the engine
    /// reads it for ``isCircuitBreakerTripped()`` and ``circuitBreakerBackoffRemaining()``, resets it for
    /// ``resetCircuitBreaker()``, and persists it with its export/restore. Without it, a breaker rejection still
    /// pauses the engine, but nothing is persisted.
    ///
    /// - Parameters:
    ///   - store: The durable queue, with the metadata table the breaker's state is persisted in.
    ///   - transport: Sends each request.
    ///   - requestBuilder: Turns mutations into requests.
    ///   - classifier: Classifies thrown errors and rejected responses; ``SyncStatusClassifier`` answers for
    ///     statuses it does not recognise.
    ///   - pipeline: Runs each request (a rate-limit breaker stage, a per-request timeout stage).
    ///   - breaker: The breaker inside `pipeline`, for status, manual reset and persistence (so it must be
    ///     resettable, persistable and measurable, as every built-in breaker is).
    ///   - delegate: Marks entities failed and deletes local duplicates.
    ///   - configuration: Retry limit, page and batch sizes, 409 rules, the poll interval after a failed pass.
    ///   - clock: The monotonic clock of the pipeline's stages and of ``run()``'s waits.
    ///   - telemetry: Receives state changes and breaker transitions.
    public init(
        store: any MutationQueue & MutationMetadataStore,
        transport: any HTTPTransport,
        requestBuilder: any SyncRequestBuilder,
        classifier: any ErrorClassifier = CompositeErrorClassifier.standard,
        pipeline: any ResiliencePipeline,
        breaker: (any ResettableBreaker & PersistableBreaker & MeasurableBreaker)? = nil,
        delegate: (any SyncEngineDelegate)? = nil,
        configuration: Configuration = .standard,
        clock: ResilienceClock = .continuous,
        telemetry: (any TelemetrySink)? = nil
    ) {
        self.store = store
        self.transport = transport
        self.requestBuilder = requestBuilder
        self.classifier = CompositeErrorClassifier([
            StatusFallbackClassifier(primary: classifier, fallback: SyncStatusClassifier())
        ])
        self.pipeline = pipeline
        self.breaker = breaker
        self.delegate = delegate
        self.configuration = configuration
        self.clock = clock
        self.telemetry = telemetry
        let restored = Self.restoreBreaker(
            breaker, from: store, configuration: configuration, now: clock.now())
        lastPersistedBreaker = restored.persisted
        breakerStateUnread = restored.readFailure != nil
        broadcaster = SyncStateBroadcaster(initial: restored.state)
        if let failure = restored.readFailure { reportStoreFailure(failure, doing: "read breaker state") }
    }

    /// Ends every ``stateUpdates()`` stream, so their readers do not wait for ever for an engine that is gone.
    deinit { broadcaster.finish() }

    private static func restoreBreaker(
        _ breaker: (any ResettableBreaker & PersistableBreaker & MeasurableBreaker)?,
        from store: any MutationQueue & MutationMetadataStore,
        configuration: Configuration,
        now: ResilienceInstant
    ) -> (state: SyncState, persisted: PersistedBreakerState?, readFailure: (any Error)?) {
        guard let breaker else { return (.idle, nil, nil) }
        let data: Data?
        do {
            data = try store.metadata(forKey: configuration.breakerStateKey)
        } catch {
            return (.error("could not read the rate-limit state: \(error)"), nil, error)
        }
        guard let data else { return (.idle, nil, nil) }
        let persisted: PersistedBreakerState
        do {
            persisted = try JSONDecoder().decode(PersistedBreakerState.self, from: data)
        } catch {
            return (.error("could not restore the rate-limit state: \(error)"), nil, nil)
        }
        breaker.restoreState(persisted.aged(now: configuration.currentDate()), now: now)
        let metrics = breaker.metrics(now: now)
        if let until = heldUntil(metrics, now: now, pollInterval: configuration.appliedPollInterval) {
            let pending = (try? store.pendingCount()) ?? 0
            return (.rateLimited(until: until, pending: pending), persisted, nil)
        }
        return (.idle, persisted, nil)
    }

    /// The instant until which a breaker with `metrics` holds every request back: the end of its cooldown while it
    /// is open; while it is isolated (it rejects every call until reset, and its cooldown reads zero),
    /// `pollInterval` from `now`, when the engine looks again; `nil` while it admits requests.
    private static func heldUntil(
        _ metrics: BreakerMetrics, now: ResilienceInstant, pollInterval: Duration
    ) -> ResilienceInstant? {
        switch metrics.state {
        case .isolated: now.advanced(by: pollInterval)
        case .open where metrics.remainingOpenDuration > .zero: now.advanced(by: metrics.remainingOpenDuration)
        default: nil
        }
    }

    // MARK: Observing

    /// The current state (readable from any task without awaiting the actor).
    public nonisolated var state: SyncState { broadcaster.current }

    /// A stream of states for a UI: the current state first, then every change. Ends when the reader stops or
    /// the engine is released.
    public nonisolated func stateUpdates() -> AsyncStream<SyncState> { broadcaster.stream() }

    /// Whether the rate-limit breaker currently refuses to send.
    public func isCircuitBreakerTripped() -> Bool {
        guard let metrics = breaker?.metrics(now: clock.now()) else { return false }
        return (metrics.state == .open && metrics.remainingOpenDuration > .zero) || metrics.state == .isolated
    }

    /// Time left in the breaker's cooldown (zero when it is not open).
    public func circuitBreakerBackoffRemaining() -> Duration {
        breaker?.metrics(now: clock.now()).remainingOpenDuration ?? .zero
    }

    // MARK: Controlling

    /// Durably enqueues a mutation and wakes ``run()``.
    @discardableResult
    public func enqueue(_ draft: MutationDraft) throws -> Mutation {
        let mutation = try store.enqueue(draft)
        wake()
        return mutation
    }

    /// Tells the engine whether the network is reachable (from a path monitor). Offline, passes do nothing;
    /// back online, ``run()`` wakes.
    public func setNetworkAvailable(_ available: Bool) {
        isNetworkAvailable = available
        if available {
            if case .offline = state { transition(to: .idle) }
            wake()
        } else if !isSyncing {
            transition(to: .offline)
        }
    }

    /// Follows `monitor`'s path until the task is cancelled or the monitor stops: an unsatisfied path pauses
    /// the engine (``SyncState/offline``), a satisfied one resumes it and wakes ``run()`` at once. Run it
    /// beside ``run()``, or use ``run(following:)``; ``setNetworkAvailable(_:)`` stays for apps that bring
    /// their own signal.
    ///
    /// A monitor that stops (shut down, or its source of path information failed; also one already stopped
    /// when this is called) can no longer say when the network is back, so its last path is not kept: the
    /// network is treated as available and ``run()`` woken, and the pipeline's own failures decide from then
    /// on (a pass that finds the network unreachable ends ``SyncState/offline`` and is tried again after
    /// ``Configuration/pollInterval``).
    ///
    /// - Parameter monitor: Where the network path comes from.
    public func follow(_ monitor: any ConnectivityMonitor) async {
        for await path in monitor.paths() { setNetworkAvailable(path.isSatisfied) }
        // The sequence ends when the task is cancelled or when the monitor stops: only the latter releases.
        if !Task.isCancelled, !isNetworkAvailable { setNetworkAvailable(true) }
    }

    /// ``run()`` while following `monitor` (``follow(_:)``): the engine pauses while the device is offline
    /// and drains the queue as soon as the path is back. The current path is read before the first pass, so
    /// an engine started offline sends nothing. When the monitor stops, the engine no longer waits for it
    /// (see ``follow(_:)``). Returns when the task is cancelled.
    ///
    /// - Parameter monitor: Where the network path comes from.
    public func run(following monitor: any ConnectivityMonitor) async {
        setNetworkAvailable(monitor.currentPath.isSatisfied)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.follow(monitor) }
            group.addTask { await self.run() }
            await group.waitForAll()
        }
    }

    /// Wakes ``run()`` for an immediate pass (a pull-to-refresh, a foreground event).
    public func requestSync() { wake() }

    /// The user's "retry now": closes the breaker, clears the 429 counter and the multiplier, and persists it
    /// (over a stored state the engine could not read yet, too).
    public func resetCircuitBreaker() {
        breakerStateUnread = false
        let transition = breaker?.reset(now: clock.now())
        emitBreaker(transition)
        persistBreaker()
        if case .rateLimited = state { self.transition(to: .idle) }
        wake()
    }

    /// Deletes every pending mutation (a recovery for a queue stuck on unrecoverable mutations), optionally
    /// marking their entities failed first, resets the breaker, and returns how many were cleared. A pass
    /// running meanwhile stops before its next request (a request already in flight still gets its answer), and
    /// none starts until the clear is done.
    @discardableResult
    public func clearPendingMutations(markEntitiesFailed: Bool = true) async throws -> Int {
        clearings += 1
        clearsInProgress += 1
        var cleared = false
        defer {
            clearsInProgress -= 1
            // A pass asked for meanwhile did not start and waits to be woken: a clear that completes wakes it
            // (resetCircuitBreaker()), and so does one that fails, whose mutations are all still pending.
            if !cleared { wake() }
        }
        if markEntitiesFailed, let delegate {
            var cursor: Int64 = 0
            while true {
                let page = try store.pending(after: cursor, limit: configuration.appliedPageSize)
                guard let last = page.last else { break }
                cursor = last.id
                for mutation in page { await delegate.markEntityFailed(mutation, reason: "cleared by the user") }
            }
        }
        let count = try store.removeAllPending()
        cleared = true
        resetCircuitBreaker()
        if !isSyncing { transition(to: isNetworkAvailable ? .idle : .offline) }
        return count
    }

    // MARK: Running

    /// Runs passes until the task is cancelled: after enqueues and wake-ups; when a stage of the pipeline held
    /// a pass back (an open breaker, a local limit), at the instant its rejection named; after a pass that
    /// left failures behind, after the fixed ``Configuration/pollInterval``. The engine computes no growing
    /// delay: repeated failures are spaced out by the pipeline's own policies. A pass under way when it looks
    /// (one ``performSync()`` started) counts as its own: it waits for that pass to end, then as after it.
    public func run() async {
        while !Task.isCancelled {
            var report: SyncReport
            var passRan = true
            if let skipped = reportIfBusy() {
                report = skipped
                passRan = false
                if isSyncing {
                    guard let ended = await reportOfRunningPass() else { continue }
                    report = ended
                    passRan = true
                }
            } else {
                report = await sendPending()
            }
            if Task.isCancelled { break }
            await wakeSignal.wait(orAfter: delay(after: report, passRan: passRan), on: clock)
        }
    }

    /// Waits for the pass under way to end and returns its report; `nil` when the wait ended before the pass did
    /// (a cancellation). A wake-up meanwhile is kept for the wait after the pass, as during the loop's own pass.
    private func reportOfRunningPass() async -> SyncReport? {
        let endedBefore = passesEnded
        runsAwaitingPass += 1
        await passEndSignal.wait(orAfter: nil, on: clock)
        runsAwaitingPass -= 1
        return passesEnded != endedBefore ? lastPassReport : nil
    }

    /// How long to wait before the next pass (`nil`: until a wake-up). `passRan` is `false` for a pass that did
    /// not start because a clear was under way.
    private func delay(after report: SyncReport, passRan: Bool) -> Duration? {
        if let next = report.nextAttempt { return max(clock.now().duration(to: next), .milliseconds(1)) }
        switch report.finalState {
        case .rateLimited(let until, _):
            return max(clock.now().duration(to: until), .milliseconds(1))
        case .error:
            return configuration.appliedPollInterval
        case .offline:
            // Told offline by the integrator: wait for `setNetworkAvailable(true)`. Found offline by a failed
            // request: probe again after the poll interval (or when the pipeline admits requests again).
            return isNetworkAvailable ? configuration.appliedPollInterval : nil
        case .idle, .syncing:
            // What is pending after a pass that did not start is the clear's (which wakes run() when done):
            // passing again at once would only spin beside it.
            return passRan && report.remaining > 0 ? .zero : nil
        }
    }

    private func wake() { wakeSignal.signal() }

    /// One pass over the queue: sends pending mutations in order until the queue is drained, a stage of the
    /// pipeline refuses to send (the breaker opened, a local limit), the network is gone, or the task is
    /// cancelled. Returns what it did.
    ///
    /// When another pass or a clear (``clearPendingMutations(markEntitiesFailed:)``) is under way, it returns at
    /// once without sending: the report's ``SyncReport/finalState`` is the engine's state and its
    /// ``SyncReport/remaining`` the store's pending count.
    @discardableResult
    public func performSync() async -> SyncReport {
        if let skipped = reportIfBusy() { return skipped }
        return await sendPending()
    }

    /// The report of a pass that does not start because a pass is under way, or a clear is (the clear wakes
    /// run() when it is done); `nil` when a pass may start. Nothing is sent, so it reports the engine's state and
    /// what the store counts as pending (0 if the count fails, as for a pass that ran).
    private func reportIfBusy() -> SyncReport? {
        guard isSyncing || clearsInProgress > 0 else { return nil }
        var report = SyncReport()
        report.finalState = state
        report.remaining = (try? store.pendingCount()) ?? 0
        return report
    }

    /// ``performSync()`` once no other pass or clear is under way.
    private func sendPending() async -> SyncReport {
        var pass = SyncPass()
        guard isNetworkAvailable else {
            transition(to: .offline)
            return finish(pass, ending: .offline)
        }
        // The stored cooldown could not be read at start: read it now, and send nothing until it is known.
        if breakerStateUnread {
            let restored = Self.restoreBreaker(breaker, from: store, configuration: configuration, now: clock.now())
            if let failure = restored.readFailure {
                reportStoreFailure(failure, doing: "read breaker state")
                return finish(pass, ending: .storage("read breaker state: \(failure)"))
            }
            breakerStateUnread = false
            lastPersistedBreaker = restored.persisted
        }
        let now = clock.now()
        if let metrics = breaker?.metrics(now: now),
            let until = Self.heldUntil(metrics, now: now, pollInterval: configuration.appliedPollInterval)
        {
            return finish(pass, ending: .rateLimited(until: until))
        }
        let before = state
        isSyncing = true
        defer { isSyncing = false }
        transition(to: .syncing)
        let clearingsBefore = clearings
        var cursor: Int64 = 0
        pages: while pass.stop == nil {
            let page: [Mutation]
            do {
                page = try store.pending(after: cursor, limit: configuration.appliedPageSize)
            } catch {
                pass.stop = .storage("\(error)")
                break
            }
            guard let last = page.last else { break }
            cursor = last.id
            var index = 0
            while index < page.count {
                if Task.isCancelled {
                    pass.stop = .cancelled
                    break pages
                }
                // The queue is being cleared: the rest of this page is cleared too, and run() passes again.
                if clearings != clearingsBefore { break pages }
                // Told offline (setNetworkAvailable(false)) during the pass: nothing more goes out.
                if !isNetworkAvailable {
                    pass.stop = .offline
                    break pages
                }
                let mutation = page[index]
                if pass.blocked.contains(EntityKey(mutation)) {
                    index += 1
                    continue
                }
                if mutation.attempts >= configuration.appliedMaxRetries {
                    await finishGivingUp(mutation, pass: &pass)
                    index += 1
                    if pass.stop != nil { break pages }
                    continue
                }
                let group = batchGroup(in: page, from: index, blocked: pass.blocked)
                if group.count > 1, let request = try? requestBuilder.batchRequest(for: group) {
                    await sendBatch(group, request: request, pass: &pass)
                    index += group.count
                } else {
                    await sendOne(mutation, pass: &pass)
                    index += 1
                }
                if pass.stop != nil { break pages }
            }
        }
        // Told offline while the pass's last request was out: the pass ends paused, like one told before it.
        if pass.stop == nil, !isNetworkAvailable { pass.stop = .offline }
        return finish(pass, ending: pass.stop, after: before)
    }

    /// Ends a pass. `previous` is the state before it: a pass the pipeline held back before anything failed
    /// keeps showing the failure (or the lost network) that led the pipeline to hold it back.
    private func finish(
        _ pass: SyncPass, ending stop: SyncPass.Stop?, after previous: SyncState = .idle
    )
        -> SyncReport
    {
        var report = pass.report
        // A count that fails says nothing about what is left: end as a storage failure, so the next pass
        // comes after the poll interval instead of waiting for an enqueue that may never come.
        var stop = stop
        let pending: Int
        do {
            pending = try store.pendingCount()
        } catch {
            pending = 0
            if stop == nil { stop = .storage("\(error)") }
        }
        report.remaining = pending
        let final: SyncState
        switch stop {
        case .rateLimited(let until):
            final = .rateLimited(until: until, pending: pending)
            report.nextAttempt = until
        case .heldBack(let until, let reason):
            switch (pass.lastFailure, previous) {
            case (let failure?, _): final = .error(failure)
            case (nil, .offline), (nil, .error): final = previous
            case (nil, _): final = .error(reason)
            }
            report.nextAttempt = until
        case .offline: final = .offline
        case .storage(let message): final = .error("storage failed: \(message)")
        case .cancelled:
            // A cancellation the engine's task did not ask for (an invalidated URL session answers every request
            // `URLError.cancelled`) leaves the queue stuck: it is a failure, so run() waits the poll interval
            // instead of passing again at once, without end.
            final =
                Task.isCancelled
                ? .idle : .error("a request was cancelled while the sync was not; the mutation stays queued")
        case nil: final = pass.lastFailure.map { SyncState.error($0) } ?? .idle
        }
        persistBreaker()
        transition(to: final)
        report.finalState = final
        passesEnded += 1
        lastPassReport = report
        if runsAwaitingPass > 0 { passEndSignal.signal() }
        return report
    }

    // MARK: Sending

    /// Consecutive creates at `start`, of distinct unblocked entities, up to the batch size.
    private func batchGroup(in page: [Mutation], from start: Int, blocked: Set<EntityKey>) -> [Mutation] {
        guard configuration.maximumBatchSize > 1, page[start].operation == .create else { return [] }
        var group: [Mutation] = []
        var entities = Set<EntityKey>()
        for mutation in page[start...] {
            let key = EntityKey(mutation)
            guard mutation.operation == .create, !blocked.contains(key), !entities.contains(key),
                mutation.attempts < configuration.appliedMaxRetries, group.count < configuration.maximumBatchSize
            else { break }
            entities.insert(key)
            group.append(mutation)
        }
        return group
    }

    private func sendOne(_ mutation: Mutation, pass: inout SyncPass) async {
        var request: HTTPRequest
        do {
            request = try requestBuilder.request(for: mutation)
        } catch {
            await settle(mutation, .failed(classifier.classification(of: error), "\(error)"), pass: &pass)
            return
        }
        request.headers["Idempotency-Key"] = mutation.idempotencyKey
        request.idempotency = .keyed(mutation.idempotencyKey)
        let verdict: Verdict
        do {
            let response = try await execute(request, pass: &pass) { [self, request] response in
                guard !response.isSuccess else { return }
                if case .duplicate = self.conflictVerdict(for: response, mutation: mutation) { return }
                throw HTTPStatusError(response: response, request: request)
            }
            verdict = response.isSuccess ? .applied(response) : .duplicate
        } catch {
            verdict = self.verdict(for: error, mutation: mutation)
        }
        stopIfBreakerOpened(verdict, pass: &pass)
        await settle(mutation, verdict, pass: &pass)
    }

    private func sendBatch(_ group: [Mutation], request original: HTTPRequest, pass: inout SyncPass) async {
        var request = original
        let key = Self.batchKey(group)
        request.headers["Idempotency-Key"] = key
        request.idempotency = .keyed(key)
        let verdicts: [Verdict]
        let itemVerdicts = LockedState<[Verdict]?>(initialState: nil)
        do {
            _ = try await execute(request, pass: &pass) { [self, request] response in
                guard response.isSuccess else { throw HTTPStatusError(response: response, request: request) }
                let verdicts = self.batchVerdicts(response, group: group, request: request)
                itemVerdicts.withLock { $0 = verdicts }
                // A rate-limited item teaches the breaker what a rate-limited request would.
                if case .rateLimited(let classification) = verdicts.first(where: \.isRateLimited) {
                    throw SyncRateLimitedItem(classification: classification)
                }
            }
            verdicts = itemVerdicts.withLock { $0 } ?? []
        } catch {
            if let items = itemVerdicts.withLock({ $0 }) {
                verdicts = items
            } else {
                verdicts = group.map { verdict(for: error, mutation: $0, answersBatch: true) }
            }
        }
        stopIfBreakerOpened(verdicts.first(where: \.isRateLimited) ?? verdicts.first ?? .cancelled, pass: &pass)
        for (mutation, verdict) in zip(group, verdicts) {
            await settle(mutation, verdict, pass: &pass)
            if case .storage = pass.stop { return }
        }
    }

    /// Runs one request through the pipeline; `accept` throws for answers the pipeline's stages should see as
    /// failures. A rejection by the pipeline (an open breaker, a local limit) ends the pass as rate limited.
    private func execute(
        _ request: HTTPRequest, pass: inout SyncPass,
        accept: @escaping @Sendable (HTTPResponse) throws -> Void
    ) async throws -> HTTPResponse {
        let sent = LockedState(initialState: 0)
        defer { pass.report.requestsSent += sent.withLock { $0 } }
        return try await pipeline.execute(context(for: request)) { [transport] context in
            sent.withLock { $0 += 1 }
            let response = try await transport.send(request, context: context)
            try accept(response)
            return response
        }
    }

    /// The per-item verdicts of a successful batch response (every item failed when it cannot be split).
    private nonisolated func batchVerdicts(
        _ response: HTTPResponse, group: [Mutation], request: HTTPRequest
    ) -> [Verdict] {
        do {
            let results = try requestBuilder.batchResults(from: response, for: group)
            guard results.count == group.count else {
                throw MutationBatchError(
                    message: "the batch response has \(results.count) results for \(group.count) items")
            }
            return zip(results, group).map { result, mutation in
                result.isSuccess
                    ? .applied(result) : verdict(forUnaccepted: result, request: request, mutation: mutation)
            }
        } catch {
            let classification = FailureClassification(
                category: .invalidResponse, code: .invalidResponse, message: "\(error)")
            return Array(repeating: .failed(classification, "\(error)"), count: group.count)
        }
    }

    /// A stable key for a batch: the same items always get the same key.
    static func batchKey(_ group: [Mutation]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for mutation in group {
            for byte in mutation.idempotencyKey.utf8 {
                hash ^= UInt64(byte)
                hash = hash &* 0x100_0000_01b3
            }
            hash ^= 0xff
            hash = hash &* 0x100_0000_01b3
        }
        return "batch-\(group.count)-\(String(hash, radix: 16))"
    }

    private func context(for request: HTTPRequest) -> ResilienceContext {
        ResilienceContext(
            key: configuration.telemetryKey, operation: "\(request.method) sync", idempotency: request.idempotency,
            telemetry: telemetry, clock: clock, classifier: classifier)
    }

    /// Ends the pass as rate limited when the answer just opened the pipeline's breaker (so the pass does not
    /// run on into rejections), and saves the new cooldown at once.
    private func stopIfBreakerOpened(_ verdict: Verdict, pass: inout SyncPass) {
        guard verdict.mayOpenBreaker, let breaker else { return }
        let now = clock.now()
        guard
            let until = Self.heldUntil(
                breaker.metrics(now: now), now: now, pollInterval: configuration.appliedPollInterval)
        else { return }
        pass.stop = .rateLimited(until: until)
        persistBreaker()
    }

    // MARK: Verdicts

    /// What a 409 means for `mutation`: a confirmed duplicate, a request still in progress, or ambiguous.
    /// `answersBatch`: the 409 answers a whole batch request, so an "already exists" in it cannot say which of
    /// the batch's entities exists, and is ambiguous for each of them.
    private nonisolated func conflictVerdict(
        for response: HTTPResponse, mutation: Mutation?, answersBatch: Bool = false
    ) -> Verdict? {
        guard var meaning = IdempotencyConflict.meaning(of: response) else { return nil }
        let rules = configuration.conflicts
        if let mutation, let confirms = rules.confirmsExisting, confirms(response, mutation) { return .duplicate }
        if answersBatch, meaning == .entityExists { meaning = .ambiguous }
        switch meaning {
        case .entityExists:
            return .duplicate
        case .requestInProgress:
            return .inProgress(
                FailureClassification(
                    category: .conflict, code: .http(409), httpStatus: 409, isTransient: true,
                    message: "a request with this idempotency key is still in progress"))
        case .ambiguous:
            if rules.ambiguousMeansDuplicate { return .duplicate }
            return .failed(
                FailureClassification(
                    category: .conflict, code: .http(409), httpStatus: 409, isTransient: false,
                    message: "409 conflict that does not confirm the entity exists"),
                "HTTP 409 without a recognised meaning (local data kept)")
        }
    }

    /// The verdict for a response the engine did not accept as applied.
    private nonisolated func verdict(
        forUnaccepted response: HTTPResponse, request: HTTPRequest?, mutation: Mutation?, answersBatch: Bool = false
    ) -> Verdict {
        if let conflict = conflictVerdict(for: response, mutation: mutation, answersBatch: answersBatch) {
            return conflict
        }
        let classification = classifier.classification(of: HTTPStatusError(response: response, request: request))
        if classification.category == .rateLimited { return .rateLimited(classification) }
        return .failed(classification, classification.message ?? "HTTP \(response.status)")
    }

    private func verdict(for error: any Error, mutation: Mutation?, answersBatch: Bool = false) -> Verdict {
        if let statusError = error as? HTTPStatusError {
            return verdict(
                forUnaccepted: statusError.response, request: statusError.request, mutation: mutation,
                answersBatch: answersBatch)
        }
        if let rejection = error as? ResilienceError, Self.localRejections.contains(rejection.code) {
            let until = clock.now().advanced(by: rejection.retryAfter ?? configuration.appliedPollInterval)
            return .rejected(until: until, isRateLimit: isRateLimit(rejection), reason: "\(rejection)")
        }
        let classification = classifier.classification(of: error)
        if classification.category == .cancelled { return .cancelled }
        if classification.category == .rateLimited { return .rateLimited(classification) }
        return .failed(classification, classification.message ?? "\(error)")
    }

    /// Whether a pipeline rejection holds the queue back for a rate limit: a local rate limiter or throttle, or
    /// the rate-limit breaker handed to the engine. Another open breaker (one counting network or server
    /// errors, say), a full bulkhead or a spent budget holds the pass back without calling it a rate limit.
    private func isRateLimit(_ rejection: ResilienceError) -> Bool {
        switch rejection.code {
        case .rateLimited, .throttled: return true
        case .circuitOpen:
            guard let metrics = breaker?.metrics(now: clock.now()) else { return false }
            return metrics.state == .isolated || (metrics.state == .open && metrics.remainingOpenDuration > .zero)
        default: return false
        }
    }

    /// Pipeline errors that mean the request was refused locally and never sent.
    private static let localRejections: Set<ResilienceError.Code> = [
        .circuitOpen, .rateLimited, .bulkheadFull, .throttled, .budgetExhausted,
    ]

    private func settle(_ mutation: Mutation, _ verdict: Verdict, pass: inout SyncPass) async {
        do {
            switch verdict {
            case .applied(let response):
                try store.record(.applied, for: mutation.id)
                pass.report.synced += 1
                await delegate?.mutationApplied(mutation, response: response)
            case .duplicate:
                await delegate?.deleteLocalDuplicate(mutation)
                try store.record(.applied, for: mutation.id)
                pass.report.synced += 1
                pass.report.duplicates += 1
            case .rateLimited:
                pass.report.rateLimitResponses += 1
                pass.blocked.insert(EntityKey(mutation))
                pass.lastFailure = "rate limited by the server (\(consecutiveRateLimitErrors) in a row)"
            case .inProgress(let classification):
                pass.report.inProgressConflicts += 1
                pass.blocked.insert(EntityKey(mutation))
                pass.lastFailure = classification.message
            case .rejected(let until, let isRateLimit, let reason):
                pass.blocked.insert(EntityKey(mutation))
                pass.stop = isRateLimit ? .rateLimited(until: until) : .heldBack(until: until, reason: reason)
            case .cancelled:
                pass.stop = .cancelled
            case .failed(let classification, let message):
                pass.blocked.insert(EntityKey(mutation))
                pass.lastFailure = message
                let description = "\(classification.code): \(message)"
                if mutation.attempts + 1 >= configuration.appliedMaxRetries {
                    let reason = "gave up after \(mutation.attempts + 1) attempts; last error \(description)"
                    try store.record(.attemptFailed(error: description), for: mutation.id)
                    await delegate?.markEntityFailed(mutation, reason: reason)
                    try store.record(.givenUp(reason: reason), for: mutation.id)
                    pass.report.movedToFailed += 1
                } else {
                    try store.record(.attemptFailed(error: description), for: mutation.id)
                    pass.report.failedAttempts += 1
                }
                if classification.category == .networkUnreachable { pass.stop = .offline }
            }
        } catch {
            pass.stop = .storage("\(error)")
        }
    }

    /// Finishes the give-up of a mutation whose attempts already reached the limit: its last attempt was
    /// counted, but the store failed (a full disk, a crash) before it moved to the failed list. It is not sent
    /// again; the delegate is told once more (it may not have been) and the mutation moves to the failed list.
    private func finishGivingUp(_ mutation: Mutation, pass: inout SyncPass) async {
        pass.blocked.insert(EntityKey(mutation))
        let reason = "gave up after \(mutation.attempts) attempts; last error \(mutation.lastError ?? "unknown")"
        pass.lastFailure = mutation.lastError ?? reason
        await delegate?.markEntityFailed(mutation, reason: reason)
        do {
            try store.record(.givenUp(reason: reason), for: mutation.id)
            pass.report.movedToFailed += 1
        } catch {
            pass.stop = .storage("\(error)")
        }
    }

    // MARK: State, telemetry, persistence

    private func transition(to newState: SyncState) {
        let old = broadcaster.current
        guard old != newState else { return }
        broadcaster.publish(newState)
        guard let telemetry, telemetry.isEnabled else { return }
        let pending: Int? =
            if case .rateLimited(_, let pending) = newState { pending } else { try? store.pendingCount() }
        telemetry.receive(
            ResilienceEvent(
                kind: .syncStateChanged, key: configuration.telemetryKey, operation: "sync", time: clock.now(),
                detail: "\(old.name) → \(newState.name)", count: pending))
    }

    private func emitBreaker(_ transition: BreakerTransition?) {
        guard let transition, let telemetry, telemetry.isEnabled else { return }
        telemetry.receive(
            ResilienceEvent(
                kind: .breakerTransition, key: configuration.telemetryKey, operation: "sync", time: clock.now(),
                duration: transition.openFor, transition: transition))
    }

    /// Saves the breaker's state when it changed since the last save. A failed save is reported
    /// (``ResilienceEventKind/syncStoreFailed``) and tried again on the next pass: without it, a restarted app
    /// would forget a server's cooldown and send at once. Nothing is saved while the stored state is unread.
    private func persistBreaker() {
        guard let breaker, !breakerStateUnread else { return }
        let now = clock.now()
        let snapshot = breaker.exportState(now: now)
        let persisted = PersistedBreakerState(
            snapshot: snapshot, savedAt: configuration.currentDate(),
            consecutiveRateLimitErrors: breaker.metrics(now: now).consecutiveFailures)
        if let last = lastPersistedBreaker, last.snapshot.state == snapshot.state,
            last.snapshot.values == snapshot.values,
            last.consecutiveRateLimitErrors == persisted.consecutiveRateLimitErrors,
            snapshot.state != .open
        {
            return
        }
        do {
            try store.setMetadata(try JSONEncoder().encode(persisted), forKey: configuration.breakerStateKey)
            lastPersistedBreaker = persisted
        } catch {
            lastPersistedBreaker = nil
            reportStoreFailure(error, doing: "save breaker state")
        }
    }

    /// Emits ``ResilienceEventKind/syncStoreFailed`` for a breaker state the store could not read or save.
    private nonisolated func reportStoreFailure(_ error: any Error, doing what: String) {
        guard let telemetry, telemetry.isEnabled else { return }
        telemetry.receive(
            ResilienceEvent(
                kind: .syncStoreFailed, key: configuration.telemetryKey, operation: "sync", time: clock.now(),
                classification: (error as? any ClassifiedError)?.classification, detail: "\(what): \(error)"))
    }
}
