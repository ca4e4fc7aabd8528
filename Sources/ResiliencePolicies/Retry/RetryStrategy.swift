/// The retry stage: runs the operation, asks a ``RetryPolicy`` after each failure, and sleeps on the
/// context's clock before trying again.
///
/// - Sets ``ResilienceContext/attempt`` for each attempt and emits `attemptStarted`, `attemptSucceeded`,
///   `attemptFailed` and `retryScheduled` events.
/// - Never retries cancellation (rethrown as is) nor a ``ResilienceError`` with code `circuitOpen`,
///   whatever the policy says.
/// - With a ``RetryBudget``, every execution deposits one request and every retry withdraws one token; when
///   the budget is spent it emits `budgetExhausted` and throws ``ResilienceError/Code/budgetExhausted``
///   carrying the last failure.
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

    /// Runs `next`, retrying as the policy decides.
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let clock = context.clock
        let start = clock.now()
        budget?.recordRequest(now: start)
        var current = context
        var countedAttempt = 1
        var previousDelay: Duration?
        var totalAttempts = 1
        while true {
            current.emit(.attemptStarted)
            let attemptStart = current.telemetry == nil ? start : clock.now()
            do {
                let output = try await next(current)
                current.emit(.attemptSucceeded) { $0.duration = attemptStart.duration(to: clock.now()) }
                return output
            } catch {
                let failure = current.classify(error)
                if failure.category == .cancelled { throw error }
                if Task.isCancelled { throw CancellationError() }
                let now = clock.now()
                current.emit(.attemptFailed) {
                    $0.classification = failure
                    $0.duration = attemptStart.duration(to: now)
                }
                if failure.category == .circuitOpen || totalAttempts >= maximumTotalAttempts { throw error }
                let attempt = RetryAttempt(
                    number: countedAttempt, failure: failure, previousDelay: previousDelay,
                    idempotency: current.idempotency, elapsed: start.duration(to: now))
                var generator = random.makeGenerator()
                let decision = policy.decide(attempt, using: &generator)
                guard let proposed = decision.delay else { throw error }
                let delay = DurationArithmetic.clamp(proposed)
                if let deadline = current.deadline, now.advanced(by: delay) >= deadline { throw error }
                if let budget, !budget.tryWithdraw(now: now) {
                    current.emit(.budgetExhausted) { $0.classification = failure }
                    throw ResilienceError(.budgetExhausted, key: current.key, underlying: failure)
                }
                current.emit(.retryScheduled) {
                    $0.duration = delay
                    $0.classification = failure
                    $0.detail = decision.source
                }
                try await clock.sleep(for: delay)
                if decision.countsAsAttempt { countedAttempt += 1 }
                previousDelay = delay
                current.attempt += 1
                totalAttempts += 1
            }
        }
    }

    /// `retry(policy: …, budget: …)`.
    public var stageDescription: StageDescription {
        var settings = [StageDescription.Setting("policy", policy.policyDescription)]
        if let budget { settings.append(.init("budget", budget.configuration.description)) }
        settings.append(.init("maximumTotalAttempts", "\(maximumTotalAttempts)"))
        return StageDescription(name: "retry", settings: settings)
    }
}
