/// The retry stage: runs the operation, asks a ``RetryPolicy`` after each failure, and sleeps on the
/// context's clock before trying again.
///
/// - Sets ``ResilienceContext/attempt`` for each attempt and emits `attemptStarted`, then one of
///   `attemptSucceeded`, `attemptFailed` or `attemptCancelled`, and `retryScheduled` events. An attempt that an
///   enforced deadline outside the stage cut off is `attemptFailed`, classified as a timeout; only an attempt
///   its caller cancelled is `attemptCancelled`.
/// - Never retries cancellation (rethrown as is) nor a ``ResilienceError`` with code `circuitOpen`,
///   whatever the policy says.
/// - With a ``RetryBudget``, every execution deposits one request, a first attempt that failed and would be
///   retried records a failure, and every retry withdraws one token; when the budget is spent it emits
///   `budgetExhausted` and throws ``ResilienceError/Code/budgetExhausted`` carrying the last failure and, as
///   `retryAfter`, the delay the refused retry would have waited. A budget
///   funded by failed first attempts is asked again once that delay is over
///   (``RetryBudget/tryWithdraw(afterFailureAt:now:priority:)``): the retry goes if a later first attempt has
///   succeeded meanwhile (its `retryScheduled` then has a zero delay), else the stage throws as above with a
///   zero `retryAfter` (the delay is spent).
/// - Never sleeps past the context's deadline: a retry whose delay would end after it is not attempted.
/// - The success path draws no randomness and allocates nothing; jitter comes from ``random`` only when a
///   retry is scheduled.
public struct RetryStrategy: ResilienceStrategy {
    /// Decides whether and when to retry.
    public var policy: any RetryPolicy
    /// Caps retries to a share of requests, if set.
    public var budget: RetryBudget?
    /// The source of jitter.
    public var random: SharedRandomSource
    /// A hard limit on attempts, counted or not (hint waits may be configured not to count): default 20.
    public var maximumTotalAttempts: Int

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - policy: Decides whether and when to retry.
    ///   - budget: Caps retries to a share of requests; `nil` for no cap (share one per key).
    ///   - random: The source of jitter (seed it for reproducible schedules).
    ///   - maximumTotalAttempts: A hard limit on attempts, counted or not.
    public init(
        policy: any RetryPolicy = StandardRetryPolicy.standard,
        budget: RetryBudget? = nil,
        random: SharedRandomSource = SharedRandomSource(),
        maximumTotalAttempts: Int = 20
    ) {
        self.policy = policy
        self.budget = budget
        self.random = random
        self.maximumTotalAttempts = maximumTotalAttempts
    }

    /// Deposits the execution in the budget and emits `attemptStarted` if somebody listens; returns whether
    /// somebody does.
    @inlinable @inline(__always)
    func beginFirstAttempt(_ context: ResilienceContext, start: ResilienceInstant) -> Bool {
        budget?.recordRequest(now: start)
        let listening = context.telemetry != nil
        if listening { context.emit(.attemptStarted, at: start) }
        return listening
    }

    /// Emits `attemptSucceeded` for an attempt that started at `start`: the clock is read only for a sink that
    /// is switched on.
    @usableFromInline
    func emitAttemptSucceeded(_ context: ResilienceContext, startedAt start: ResilienceInstant) {
        guard context.telemetry?.isEnabled == true else { return }
        let end = context.clock.now()
        context.emit(.attemptSucceeded, at: end) { $0.duration = start.duration(to: end) }
    }

    /// The attempts after the first one failed with `failure` (which ``unretriedRejection(_:_:)`` did not end):
    /// not inlined, since failures are not the hot path. The failure that ends them is passed on in `failure`.
    @usableFromInline
    func retry<Output: Sendable>(
        after failure: inout StageFailure, start: ResilienceInstant, context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var current = context
        var loop = RetryLoop(start: start)
        try await prepareRetry(after: &failure, attemptStart: start, context: &current, loop: &loop)
        while true {
            // The retry slept: the attempt reads the time afresh.
            let attemptStart = current.clock.now()
            current.emit(.attemptStarted, at: attemptStart)
            do {
                let output = try await next(current)
                if current.telemetry != nil { emitAttemptSucceeded(current, startedAt: attemptStart) }
                return output
            } catch {
                failure.replace(with: error)
                if let unretried = unretriedRejection(&failure, current) { throw unretried }
                try await prepareRetry(after: &failure, attemptStart: attemptStart, context: &current, loop: &loop)
            }
        }
    }

    /// The error that ends the attempts at once when `failure` is an open breaker's rejection (never retried)
    /// and nobody listens for the failed attempt: the cancellation when the task is cancelled, else `failure`
    /// passed on; `nil` for any other failure, which ``prepareRetry(after:attemptStart:context:loop:)`` decides.
    /// Synchronous, so a rejection (the commonest failure while a dependency is down) leaves the stage without
    /// starting the retry loop. It throws what that loop would throw for the failure, without asking for
    /// anything an event would need.
    @inlinable @inline(__always)
    func unretriedRejection(_ failure: inout StageFailure, _ context: ResilienceContext) -> (any Error)? {
        guard context.telemetry?.isEnabled != true else { return nil }
        // The classification when a stage inside already asked for it (`circuitOpen` is never retried, and
        // with nobody listening the loop would only pass it on); else the error's own code, which is cheaper
        // to read than a classification.
        if let knownCategory = failure.knownClassification?.category {
            guard knownCategory == .circuitOpen else { return nil }
        } else {
            guard let rejection = failure.error as? ResilienceError, rejection.code == .circuitOpen else { return nil }
        }
        if Task.isCancelled { return CancellationError() }
        return failure.passOn()
    }

    /// Decides what follows a failed attempt that ``unretriedRejection(_:_:)`` did not end: throws (passing
    /// `failure` on, or the stage's own error) when it must not be retried, else sleeps until the next attempt
    /// and prepares its context. Not generic, so the failure path is compiled once.
    @usableFromInline
    func prepareRetry(
        after failure: inout StageFailure, attemptStart: ResilienceInstant, context current: inout ResilienceContext,
        loop: inout RetryLoop
    ) async throws {
        let clock = current.clock
        let classification = failure.classification(in: current)
        if classification.category == .cancelled || Task.isCancelled {
            // The attempt ended (say so, so attempts in flight come back down): timed out when an enforced
            // deadline around this stage cut it off, else cancelled by its caller, which is not a failure.
            let now = clock.now()
            if let timedOut = current.deadlineAware(failure.error) as? DeadlineExceededError {
                let timeout = timedOut.classification
                current.emit(.attemptFailed, at: now) {
                    $0.classification = timeout
                    $0.duration = attemptStart.duration(to: now)
                }
            } else {
                current.emit(.attemptCancelled, at: now) { $0.duration = attemptStart.duration(to: now) }
            }
            if classification.category == .cancelled { throw failure.passOn() }
            throw CancellationError()
        }
        let now = clock.now()
        current.emit(.attemptFailed, at: now) {
            $0.classification = classification
            $0.duration = attemptStart.duration(to: now)
        }
        if classification.category == .circuitOpen || loop.totalAttempts >= maximumTotalAttempts {
            throw failure.passOn()
        }
        let attempt = RetryAttempt(
            number: loop.countedAttempt, failure: classification, previousDelay: loop.previousDelay,
            idempotency: current.idempotency, elapsed: loop.start.duration(to: now))
        var generator = random.makeGenerator()
        let decision = policy.decide(attempt, using: &generator)
        guard let proposed = decision.delay else { throw failure.passOn() }
        // A first attempt that failed and would be retried funds a budget funded by failures.
        if loop.totalAttempts == 1 { budget?.recordFailure(now: now) }
        let delay = DurationArithmetic.clamp(proposed)
        if let deadline = current.deadline, now.advanced(by: delay) >= deadline { throw failure.passOn() }
        var waited = false
        if let budget, !budget.tryWithdraw(now: now, priority: current.priority) {
            // Funded by failures, a refused retry waits out its backoff and goes if a first attempt that started
            // after this failure has succeeded meanwhile: the server answers, so this is a brownout.
            let waits = budget.configuration.funding == .failedFirstAttempts
            var granted = false
            if waits {
                granted = try await waitForGrant(
                    of: budget, failure: now, delay: delay, unjitteredDelay: decision.unjitteredDelay,
                    deadline: current.deadline, priority: current.priority, clock: clock)
                waited = true
            }
            if !granted {
                current.emit(.budgetExhausted, at: clock.now()) { $0.classification = classification }
                // The refused retry's delay is the least a caller that tries again by hand should wait (one that
                // calls again at once turns the budget's refusal into the retry storm it exists to stop); a
                // refusal that already waited it out names no further wait.
                throw ResilienceError(
                    .budgetExhausted, key: current.key, retryAfter: waited ? .zero : delay, underlying: classification)
            }
        }
        current.emit(.retryScheduled, at: waited ? clock.now() : now) {
            $0.duration = waited ? .zero : delay
            $0.classification = classification
            $0.detail = decision.source
        }
        if !waited { try await clock.sleep(for: delay) }
        if decision.countsAsAttempt { loop.countedAttempt += 1 }
        loop.previousDelay = delay
        current.attempt += 1
        loop.totalAttempts += 1
    }

    /// Waits out a refused retry's backoff, `delay` after `failure`, then asks `budget` again
    /// (``RetryBudget/tryWithdraw(afterFailureAt:now:priority:)``); returns whether it granted the retry.
    ///
    /// While the scope has traffic that does not wait on its refused retries
    /// (``RetryBudget/hasTrafficBesideHeldRetries(now:)``), a refusal waits on and asks again at the backoff's
    /// `unjitteredDelay` after `failure` (jitter may have drawn `delay` short) and at the budget's
    /// ``RetryBudgetConfiguration/evidenceWait`` after it, each only when it comes before `deadline` (a retry at
    /// or after the deadline is never attempted, so the refusal stands at the first ask that would reach it): the
    /// evidence of a live server, and the window's share of the requests that arrive meanwhile, have that long
    /// to come. A caller alone in its scope gives up at `delay`, keeping the spread of its jitter.
    func waitForGrant(
        of budget: RetryBudget, failure: ResilienceInstant, delay: Duration, unjitteredDelay: Duration?,
        deadline: ResilienceInstant?, priority: RequestPriority, clock: ResilienceClock
    ) async throws -> Bool {
        budget.beginHold()
        defer { budget.endHold() }
        try await clock.sleep(for: delay)
        if budget.tryWithdraw(afterFailureAt: failure, priority: priority) { return true }
        var asked = delay
        for wait in [unjitteredDelay ?? .zero, budget.configuration.evidenceWait] where wait > asked {
            asked = wait
            let end = failure.advanced(by: DurationArithmetic.clamp(wait))
            // A retry granted then would start at or after the deadline, which the stage never attempts.
            if let deadline, deadline <= end { return false }
            let now = clock.now()
            guard budget.hasTrafficBesideHeldRetries(now: now) else { return false }
            // A task that woke late asks at once for the moment it missed.
            if now < end { try await clock.sleep(for: now.duration(to: end)) }
            if budget.tryWithdraw(afterFailureAt: failure, priority: priority) { return true }
        }
        return false
    }

    /// `retry(policy: …, budget: …)`.
    public var stageDescription: StageDescription {
        var settings = [StageDescription.Setting("policy", policy.policyDescription)]
        if let budget { settings.append(.init("budget", budget.configuration.description)) }
        settings.append(.init("maximumTotalAttempts", "\(maximumTotalAttempts)"))
        return StageDescription(name: "retry", settings: settings)
    }
}

// The stage's steps (`StageDriver.swift`): `enter` starts the first attempt, `exit` reports its success,
// `recover` runs the attempts after it.
extension RetryStrategy: SteppedStage {
    /// Its record: whether somebody listens (asked once: comparing the context's optional sink with `nil`
    /// copies it).
    @inlinable var recordSize: Int { MemoryLayout<UInt64>.stride }

    /// Deposits the execution in the budget and emits `attemptStarted`.
    @inlinable @inline(__always)
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        frame.store(beginFirstAttempt(context, start: frame.start), at: offset)
        return nil
    }

    /// Tells the budget that the first attempt succeeded and emits `attemptSucceeded` if somebody listens.
    @inlinable @inline(__always)
    func exit(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) {
        budget?.recordSuccess(startedAt: frame.start)
        if frame.load(Bool.self, at: offset) { emitAttemptSucceeded(context, startedAt: frame.start) }
    }

    /// The attempts after the first one failed (none after an open breaker's rejection nobody listens for).
    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after failure: inout StageFailure, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        if let unretried = unretriedRejection(&failure, context) { throw unretried }
        return try await retry(after: &failure, start: frame.start, context: context, next: next)
    }
}

/// The retry stage's counters across the attempts of one execution.
@usableFromInline
struct RetryLoop: Sendable {
    @usableFromInline let start: ResilienceInstant
    @usableFromInline var countedAttempt = 1
    @usableFromInline var previousDelay: Duration?
    @usableFromInline var totalAttempts = 1

    @usableFromInline
    init(start: ResilienceInstant) {
        self.start = start
    }
}
