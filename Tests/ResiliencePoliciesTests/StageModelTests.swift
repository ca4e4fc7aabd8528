import ResilienceTesting
import Testing

@testable import ResiliencePolicies

// A model-based test of the built-in stages. A seeded generator makes random pipelines (every built-in stage
// type, every breaker and limiter, random orders and settings) and random scripts of what the operation does
// (succeeds, fails with a classified failure, is cancelled, stalls past a deadline, succeeds slowly). Each
// pipeline runs three ways, each with its own fresh breakers, limiters and budget on its own `ManualClock`:
//
// - through `Pipeline.execute` (production's path: one chain of steps when every stage has steps);
// - stage by stage, through each stage's public `execute(_:next:)` (a third-party stage outermost);
// - through `ReferenceInterpreter` below: each stage as a plain nested closure, written from the stages'
//   documentation, that asks the same kinds of breaker and limiter directly.
//
// All three must agree on every result, every call of the operation (with its attempt and deadline), every
// telemetry event and the breakers' and limiters' final state.

/// A third-party stage that only calls `next`: putting it outermost makes `Pipeline` run every stage through
/// its public `execute(_:next:)`.
struct ForwardingStage: ResilienceStrategy {
    func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await next(context)
    }

    var stageDescription: StageDescription { StageDescription(name: "forwarding") }
}

/// What one call of the scripted operation does.
enum ScriptedStep: Sendable, CustomStringConvertible {
    case succeed
    case fail(TestFailure)
    /// Throws `CancellationError` (the operation saw its task cancelled) without the task being cancelled.
    case cancelled
    /// Cancels the task that runs the executions, then throws `CancellationError`.
    case cancelTask
    /// Sleeps on the context's clock, then fails.
    case stallThenFail(Duration, TestFailure)
    /// Sleeps on the context's clock, then succeeds (a slow call).
    case stallThenSucceed(Duration)

    var description: String {
        switch self {
        case .succeed: "succeed"
        case .fail(let failure): "fail(\(failure))"
        case .cancelled: "cancelled"
        case .cancelTask: "cancelTask"
        case .stallThenFail(let pause, let failure): "stallThenFail(\(pause), \(failure))"
        case .stallThenSucceed(let pause): "stallThenSucceed(\(pause))"
        }
    }
}

/// The breakers of this module.
enum BreakerKind: CaseIterable, Sendable {
    case consecutiveFailures, failureRatioByCount, failureRatioByTime, rateLimit
}

/// The limiters of this module.
enum LimiterKind: CaseIterable, Sendable {
    case tokenBucket, backingOffBucket, concurrency, adaptiveThrottle, serverQuota
}

/// One generated stage.
enum StageSpec: Sendable, CustomStringConvertible {
    case totalDeadline(Duration)
    case timeout(Duration)
    case retry(maxAttempts: Int, delay: Duration, jittered: Bool, budget: Bool, seed: UInt64)
    case breaker(BreakerKind, seed: UInt64)
    case limiter(LimiterKind, waits: Bool, seed: UInt64)
    /// A ``ServerQuotaStrategy`` (a rate-limiter stage inside a stage of its own).
    case serverQuota(waits: Bool)
    /// An ``AdaptiveConcurrencyStage`` around a small adaptive limiter.
    case adaptive(waits: Bool)
    /// An `if` whose condition held (an ``EitherStrategy``) around the next stage; nothing for the
    /// reference.
    case chosen
    /// An `if` whose condition failed (an ``EmptyStrategy``).
    case skipped

    var description: String {
        switch self {
        case .totalDeadline(let limit): "totalDeadline(\(limit))"
        case .timeout(let limit): "timeout(\(limit))"
        case .retry(let attempts, let delay, let jittered, let budget, _):
            "retry(\(attempts), \(delay), jittered: \(jittered), budget: \(budget))"
        case .breaker(let kind, _): "breaker(\(kind))"
        case .limiter(let kind, let waits, _): "limiter(\(kind), waits: \(waits))"
        case .serverQuota(let waits): "serverQuota(waits: \(waits))"
        case .adaptive(let waits): "adaptive(waits: \(waits))"
        case .chosen: "chosen"
        case .skipped: "skipped"
        }
    }
}

/// One generated case: the stages outermost first, the operation's script and how many executions run.
struct ModelCase: Sendable, CustomStringConvertible {
    var stages: [StageSpec]
    var script: [ScriptedStep]
    var executions: Int

    var description: String { "stages \(stages) script \(script) executions \(executions)" }

    /// A random case drawn from `random`.
    static func generate(using random: inout PseudoRandomGenerator) -> ModelCase {
        var stages: [StageSpec] = []
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let seed = random.next()
            let stage: StageSpec =
                switch Int.random(in: 0..<10, using: &random) {
                case 0: .totalDeadline(.seconds(Int.random(in: 1...40, using: &random)))
                case 1: .timeout(.seconds(Int.random(in: 1...12, using: &random)))
                case 2, 3:
                    .retry(
                        maxAttempts: Int.random(in: 1...4, using: &random),
                        delay: .seconds(Int.random(in: 1...5, using: &random)), jittered: Bool.random(using: &random),
                        budget: Bool.random(using: &random), seed: seed)
                case 4, 5: .breaker(BreakerKind.allCases.randomElement(using: &random)!, seed: seed)
                case 6:
                    .limiter(
                        LimiterKind.allCases.randomElement(using: &random)!, waits: Bool.random(using: &random),
                        seed: seed)
                case 7: .serverQuota(waits: Bool.random(using: &random))
                case 8: .adaptive(waits: Bool.random(using: &random))
                default: Bool.random(using: &random) ? .chosen : .skipped
                }
            stages.append(stage)
        }
        let failures: [TestFailure] = [
            .serverError, .notFound, .unreachable, .timeout, .rateLimited(after: .seconds(2)),
            .rateLimited(after: nil),
        ]
        var script: [ScriptedStep] = []
        for _ in 0..<Int.random(in: 0...8, using: &random) {
            let failure = failures.randomElement(using: &random)!
            let pause = Duration.seconds(Int.random(in: 1...50, using: &random))
            let step: ScriptedStep =
                switch Int.random(in: 0..<20, using: &random) {
                case 0..<5: .succeed
                case 5..<11: .fail(failure)
                case 11: .cancelled
                case 12: .cancelTask
                case 13..<16: .stallThenFail(pause, failure)
                default: .stallThenSucceed(pause)
                }
            script.append(step)
        }
        return ModelCase(stages: stages, script: script, executions: Int.random(in: 1...4, using: &random))
    }
}

/// One stage's stateful parts, made afresh (with the same seeds) for each way of running a case.
enum StageParts {
    case totalDeadline(Duration)
    case timeout(Duration)
    case retry(RetryStrategy)
    case breaker(any BreakerPolicy)
    case limiter(any RateLimiter, waits: Bool)
    case serverQuota(ServerQuotaLimiter, waits: Bool)
    case adaptive(AdaptiveConcurrencyLimiter, waits: Bool)
    case chosen
    case skipped

    init(_ spec: StageSpec, clock: ManualClock) {
        switch spec {
        case .totalDeadline(let limit): self = .totalDeadline(limit)
        case .timeout(let limit): self = .timeout(limit)
        case .retry(let attempts, let delay, let jittered, let budget, let seed):
            let policy = StandardRetryPolicy(
                maxAttempts: attempts, backoff: .constant(delay), jitter: jittered ? .full : .none)
            var budgetConfiguration = RetryBudgetConfiguration.standard
            budgetConfiguration.minimumPerSecond = 0
            budgetConfiguration.ratio = 0.5
            self = .retry(
                RetryStrategy(
                    policy: policy,
                    budget: budget ? RetryBudget(budgetConfiguration, clock: .manual(clock)) : nil,
                    random: SharedRandomSource(seed: seed), maximumTotalAttempts: 5))
        case .breaker(let kind, let seed):
            let random = SharedRandomSource(seed: seed)
            switch kind {
            case .consecutiveFailures:
                var configuration = ConsecutiveFailureBreaker.Configuration.standard
                configuration.failureThreshold = 2
                configuration.successesToClose = 1
                configuration.openDuration = BreakerBackoff(
                    base: .seconds(10), growthFactor: 2, maximumMultiplier: 4, maximum: .seconds(40), jitter: 0.2)
                self = .breaker(ConsecutiveFailureBreaker(configuration, random: random))
            case .failureRatioByCount, .failureRatioByTime:
                var configuration = FailureRatioBreaker.Configuration.standard
                configuration.window = kind == .failureRatioByCount ? .count(4) : .time(.seconds(20), buckets: 4)
                configuration.minimumThroughput = 2
                configuration.failureRatio = 0.5
                configuration.slowCallThreshold = .seconds(6)
                configuration.slowCallRatio = 0.5
                configuration.successesToClose = 1
                configuration.halfOpenProbeLimit = 1
                configuration.openDuration = .constant(.seconds(15))
                self = .breaker(FailureRatioBreaker(configuration, random: random))
            case .rateLimit:
                var configuration = RateLimitBreaker.Configuration.standard
                configuration.threshold = 2
                self = .breaker(RateLimitBreaker(configuration, random: random))
            }
        case .limiter(let kind, let waits, let seed):
            let random = SharedRandomSource(seed: seed)
            switch kind {
            case .tokenBucket:
                var configuration = TokenBucketLimiter.Configuration.rate(0.25, burst: 1)
                configuration.maximumWait = .seconds(3)
                self = .limiter(TokenBucketLimiter(configuration, random: random), waits: waits)
            case .backingOffBucket:
                var configuration = TokenBucketLimiter.Configuration.backingOff
                configuration.refillPerSecond = 0.5
                configuration.burst = 1
                self = .limiter(TokenBucketLimiter(configuration, random: random), waits: waits)
            case .concurrency:
                self = .limiter(ConcurrencyLimiter(.limit(1, queued: 1)), waits: waits)
            case .adaptiveThrottle:
                var configuration = AdaptiveThrottle.Configuration.standard
                configuration.acceptsMultiplier = 1.1
                configuration.window = .seconds(30)
                self = .limiter(AdaptiveThrottle(configuration, random: random), waits: waits)
            case .serverQuota:
                self = .limiter(ServerQuotaLimiter(.standard), waits: waits)
            }
        case .serverQuota(let waits): self = .serverQuota(ServerQuotaLimiter(.standard), waits: waits)
        case .adaptive(let waits):
            // One slot to start, room for three, one waiter: rejections, waits and limit changes all happen.
            var configuration = AdaptiveConcurrencyLimiter.Configuration.standard
            configuration.algorithm = .gradient2(Gradient2Limit(smoothing: 1, shortWindow: 1))
            configuration.initialLimit = 1
            configuration.minimumLimit = 1
            configuration.maximumLimit = 3
            configuration.maximumQueued = 1
            self = .adaptive(AdaptiveConcurrencyLimiter(configuration), waits: waits)
        case .chosen: self = .chosen
        case .skipped: self = .skipped
        }
    }

    /// The built-in stage these parts make (`nil` for `chosen`, which wraps the next stage).
    var strategy: (any ResilienceStrategy)? {
        switch self {
        case .totalDeadline(let limit): TotalDeadlineStrategy(limit)
        case .timeout(let limit): TimeoutStrategy(limit)
        case .retry(let retry): retry
        case .breaker(let breaker): CircuitBreakerStrategy(breaker: breaker)
        case .limiter(let limiter, let waits): RateLimiterStrategy(limiter: limiter, waits: waits)
        case .serverQuota(let limiter, let waits): ServerQuotaStrategy(limiter: limiter, waits: waits)
        case .adaptive(let limiter, let waits): AdaptiveConcurrencyStage(limiter: limiter, waits: waits)
        case .chosen: nil
        case .skipped: EmptyStrategy()
        }
    }

    /// What the final state of a breaker or limiter looks like, asked at `instant`.
    func finalState(at instant: ResilienceInstant) -> String? {
        switch self {
        case .breaker(let breaker): "breaker \(breaker.admit(now: instant))"
        case .limiter(let limiter, _): "limiter \(limiter.tryAcquire(now: instant))"
        case .serverQuota(let limiter, _): "quota \(limiter.tryAcquire(now: instant))"
        case .adaptive(let limiter, _): "adaptive \(limiter.occupancy)"
        default: nil
        }
    }
}

/// Nests `inner` inside `outer` (opening both existentials).
func compose(_ outer: some ResilienceStrategy, _ inner: some ResilienceStrategy) -> any ResilienceStrategy {
    ComposedStrategy(outer: outer, inner: inner)
}

/// `stage` as the chosen branch of an `if`.
func chosen(_ stage: some ResilienceStrategy) -> any ResilienceStrategy {
    EitherStrategy<_, EmptyStrategy>.first(stage)
}

/// The stages as one nested value, outermost first, as ``PipelineBuilder`` would build them; with a
/// ``ForwardingStage`` after each one when `separated`, so that every stage runs on its own.
func chain(_ parts: [StageParts], separated: Bool = false) -> any ResilienceStrategy {
    var stages: [any ResilienceStrategy] = []
    var wrapNext = false
    for part in parts {
        guard let strategy = part.strategy else {
            wrapNext = true
            continue
        }
        stages.append(wrapNext ? chosen(strategy) : strategy)
        if separated { stages.append(ForwardingStage()) }
        wrapNext = false
    }
    guard var result = stages.popLast() else { return EmptyStrategy() }
    while let outer = stages.popLast() { result = compose(outer, result) }
    return result
}

/// Each stage as a plain nested closure, written from the stages' documentation (not from the stages' code),
/// asking the breakers and limiters directly.
enum ReferenceInterpreter {
    typealias Operation = (ResilienceContext) async throws -> Int

    static func run(
        _ parts: ArraySlice<StageParts>, _ context: ResilienceContext, _ operation: @escaping Operation
    )
        async throws -> Int
    {
        guard let stage = parts.first else { return try await operation(context) }
        let next: Operation = { context in try await run(parts.dropFirst(), context, operation) }
        switch stage {
        case .chosen, .skipped: return try await next(context)
        case .totalDeadline(let limit): return try await deadline(limit, .deadlineExceeded, context, next)
        case .timeout(let limit): return try await deadline(limit, .attemptTimedOut, context, next)
        case .retry(let retry): return try await self.retry(retry, context, next)
        case .breaker(let breaker): return try await self.breaker(breaker, context, next)
        case .limiter(let limiter, let waits): return try await self.limiter(limiter, waits, context, next)
        case .serverQuota(let limiter, let waits):
            var observed = context
            observed.quotaObserver = limiter
            return try await self.limiter(limiter, waits, observed, next)
        case .adaptive(let limiter, let waits): return try await adaptive(limiter, waits, context, next)
        }
    }

    /// A cooperative timeout: narrow the deadline to now + limit; a failure once it has passed becomes the
    /// stage's error (unless the caller cancelled or it already is that error); a late success is returned.
    static func deadline(
        _ limit: Duration, _ code: ResilienceError.Code, _ context: ResilienceContext, _ next: Operation
    ) async throws -> Int {
        let end = context.clock.now().advanced(by: limit)
        var inner = context
        inner.narrowDeadline(to: end)
        do {
            return try await next(inner)
        } catch {
            if Task.isCancelled { throw error }
            if let own = error as? ResilienceError, own.code == code { throw error }
            let now = context.clock.now()
            guard now >= end else { throw error }
            let underlying = inner.classify(error)
            inner.emit(.timedOut) {
                $0.duration = limit
                $0.detail = code.rawValue
            }
            throw ResilienceError(
                code, key: inner.key, underlying: underlying.category == .cancelled ? nil : underlying)
        }
    }

    /// The retry stage: deposit in the budget, then attempt; after a failure ask the policy, never retrying
    /// cancellation or an open breaker, never past the attempt cap or the deadline, withdrawing a token per
    /// retry; sleep, then try again with the next attempt number.
    static func retry(_ retry: RetryStrategy, _ context: ResilienceContext, _ next: Operation) async throws -> Int {
        let clock = context.clock
        let start = clock.now()
        retry.budget?.recordRequest(now: start)
        var current = context
        var counted = 1
        var total = 1
        var previousDelay: Duration?
        while true {
            let attemptStart = clock.now()
            current.emit(.attemptStarted)
            do {
                let value = try await next(current)
                let end = clock.now()
                current.emit(.attemptSucceeded) { $0.duration = attemptStart.duration(to: end) }
                return value
            } catch {
                let failure = current.classify(error)
                if failure.category == .cancelled || Task.isCancelled {
                    let now = clock.now()
                    current.emit(.attemptCancelled) { $0.duration = attemptStart.duration(to: now) }
                    throw failure.category == .cancelled ? error : CancellationError()
                }
                let now = clock.now()
                current.emit(.attemptFailed) {
                    $0.classification = failure
                    $0.duration = attemptStart.duration(to: now)
                }
                if failure.category == .circuitOpen || total >= retry.maximumTotalAttempts { throw error }
                let attempt = RetryAttempt(
                    number: counted, failure: failure, previousDelay: previousDelay,
                    idempotency: current.idempotency, elapsed: start.duration(to: now))
                var generator = retry.random.makeGenerator()
                let decision = retry.policy.decide(attempt, using: &generator)
                guard let delay = decision.delay else { throw error }
                if let deadline = current.deadline, now.advanced(by: delay) >= deadline { throw error }
                if let budget = retry.budget, !budget.tryWithdraw(now: now) {
                    current.emit(.budgetExhausted) { $0.classification = failure }
                    throw ResilienceError(.budgetExhausted, key: current.key, retryAfter: delay, underlying: failure)
                }
                current.emit(.retryScheduled) {
                    $0.duration = delay
                    $0.classification = failure
                    $0.detail = decision.source
                }
                try await clock.sleep(for: delay)
                if decision.countsAsAttempt { counted += 1 }
                previousDelay = delay
                current.attempt += 1
                total += 1
            }
        }
    }

    /// The breaker stage: admit (a rejection is `circuitOpen` with the time left), run, record success, failure
    /// or cancellation at the time the call ended; transitions and rejections become events.
    static func breaker(
        _ breaker: any BreakerPolicy, _ context: ResilienceContext, _ next: Operation
    )
        async throws -> Int
    {
        let permit: BreakerPermit
        switch breaker.admit(now: context.clock.now()) {
        case .rejected(let retryAfter, let state):
            context.emit(.breakerRejected) {
                $0.duration = retryAfter
                $0.detail = state.rawValue
            }
            throw ResilienceError(.circuitOpen, key: context.key, retryAfter: retryAfter)
        case .admitted(let admitted, let transition):
            emit(transition, context)
            permit = admitted
        }
        do {
            let value = try await next(context)
            emit(breaker.record(.success, for: permit, now: context.clock.now()), context)
            return value
        } catch {
            let failure = context.classify(error)
            let outcome: BreakerOutcome =
                failure.category == .cancelled || Task.isCancelled ? .cancelled : .failure(failure)
            emit(breaker.record(outcome, for: permit, now: context.clock.now()), context)
            throw error
        }
    }

    static func emit(_ transition: BreakerTransition?, _ context: ResilienceContext) {
        guard let transition else { return }
        context.emit(.breakerTransition) {
            $0.transition = transition
            $0.duration = transition.openFor
        }
    }

    /// The limiter stage: take a permit; when told to wait (or, for a bulkhead, to queue) and allowed to, wait
    /// for one, else reject; every delay or rejection is a `rateLimited` event. Release the permit once, with
    /// how the call ended.
    static func limiter(
        _ limiter: any RateLimiter, _ waits: Bool, _ context: ResilienceContext, _ next: Operation
    ) async throws -> Int {
        let permit: RateLimitPermit
        switch limiter.tryAcquire(now: context.clock.now(), priority: context.priority) {
        case .admitted(let admitted):
            permit = admitted
        case .delayed(let retryAfter):
            limited(context, retryAfter, waits ? "waiting" : "rejected")
            guard waits else { throw ResilienceError(.rateLimited, key: context.key, retryAfter: retryAfter) }
            permit = try await limiter.waitForPermit(context: context)
        case .rejected(let code, let retryAfter):
            let queues = waits && code == .bulkheadFull
            limited(context, retryAfter, queues ? "queued" : code.rawValue)
            guard queues else { throw ResilienceError(code, key: context.key, retryAfter: retryAfter) }
            permit = try await limiter.waitForPermit(context: context)
        }
        do {
            let value = try await next(context)
            limiter.release(permit, outcome: .accepted, now: context.clock.now())
            return value
        } catch {
            let now = context.clock.now()
            limiter.release(permit, outcome: releaseOutcome(error, context), now: now)
            // A server-quota limiter learns a rate-limit answer's wait: none left until then.
            let failure = context.classify(error)
            if let observer = limiter as? any ServerQuotaObserver, failure.category == .rateLimited,
                !failure.requestWasNotSent, let wait = failure.retryAfter, wait > .zero
            {
                observer.observe(ServerQuota(remaining: 0, resetAfter: wait), now: now)
            }
            throw error
        }
    }

    /// The adaptive concurrency stage: take a slot for the call's priority; when there is none, a `rateLimited`
    /// event ("queued" when the stage waits, else "rejected"), then wait through the limiter or throw
    /// `bulkheadFull` with the limiter's hint. Release the slot once with how the call ended; a change of the
    /// learned limit is a `limitChanged` event (new limit, old limit, the call's round trip).
    static func adaptive(
        _ limiter: AdaptiveConcurrencyLimiter, _ waits: Bool, _ context: ResilienceContext, _ next: Operation
    ) async throws -> Int {
        let permit: RateLimitPermit
        let decision = limiter.tryAcquire(now: context.clock.now(), priority: context.priority)
        if case .admitted(let admitted) = decision {
            permit = admitted
        } else {
            var retryAfter: Duration?
            if case .rejected(_, let hint) = decision { retryAfter = hint }
            limited(context, retryAfter, waits ? "queued" : "rejected")
            guard waits else { throw ResilienceError(.bulkheadFull, key: context.key, retryAfter: retryAfter) }
            permit = try await limiter.waitForPermit(context: context)
        }
        func finish(_ outcome: RateLimitOutcome) {
            let now = context.clock.now()
            guard let change = limiter.complete(permit, outcome: outcome, now: now) else { return }
            context.emit(.limitChanged, at: now) {
                $0.count = change.to
                $0.total = change.from
                $0.duration = permit.admittedAt.duration(to: now)
            }
        }
        do {
            let value = try await next(context)
            finish(.accepted)
            return value
        } catch {
            finish(releaseOutcome(error, context))
            throw error
        }
    }

    static func limited(_ context: ResilienceContext, _ retryAfter: Duration?, _ detail: String) {
        context.emit(.rateLimited) {
            $0.duration = retryAfter
            $0.detail = detail
        }
    }

    /// Overload answers are backend rejections; local rejections, unsent requests and cancellation are
    /// abandoned; anything else the backend handled is accepted.
    static func releaseOutcome(_ error: any Error, _ context: ResilienceContext) -> RateLimitOutcome {
        let failure = context.classify(error)
        if Task.isCancelled || failure.category == .cancelled || failure.requestWasNotSent { return .abandoned }
        switch failure.category {
        case .rateLimited, .serverError, .timeout, .transient: return .rejectedByBackend
        case .networkUnreachable, .circuitOpen, .throttled, .insecureTransport, .unknown: return .abandoned
        default: return .accepted
        }
    }
}

/// How a case is run.
enum ModelPath: CaseIterable {
    /// `Pipeline.execute` on the stages.
    case pipeline
    /// A third-party stage after every stage: each stage on its own, as its `execute(_:next:)` runs it.
    case stageByStage
    /// A third-party stage outermost: the stages inside it as one chain of steps (when their records fit).
    case insideThirdParty
    /// A third-party stage innermost: the stages outside it as one chain of steps (when their records fit).
    case beforeThirdParty
    /// ``ReferenceInterpreter``.
    case reference
}

/// Everything observable about one run of a case.
struct ModelObservation: Equatable {
    var results: [String] = []
    var calls: [String] = []
    var events: [ResilienceEvent] = []
    var finalState: [String] = []
    /// Whether `Pipeline` ran the stages as one chain of steps.
    var ranAsOneChain = false
}

/// Runs `modelCase` along `path` on a fresh clock with fresh stages, with a sink recording the events when
/// `listening` (stages skip work nobody listens for).
func observe(_ modelCase: ModelCase, _ path: ModelPath, listening: Bool = true) async -> ModelObservation {
    let clock = ManualClock()
    let sink = RecordingTelemetrySink()
    let parts = modelCase.stages.map { StageParts($0, clock: clock) }
    var observation = ModelObservation()
    let pipeline: Pipeline? =
        switch path {
        case .pipeline: Pipeline(root: chain(parts))
        case .stageByStage: Pipeline(root: chain(parts, separated: true))
        case .insideThirdParty: Pipeline(root: compose(ForwardingStage(), chain(parts)))
        case .beforeThirdParty: Pipeline(root: compose(chain(parts), ForwardingStage()))
        case .reference: nil
        }
    // The box whose steps are the stages of the case, and what it runs inside them.
    let box = path == .insideThirdParty ? (pipeline?.box as? OuterStageBox<ForwardingStage>)?.inner : pipeline?.box
    let aroundExpected = path == .beforeThirdParty
    observation.ranAsOneChain =
        box?.steps != nil && (aroundExpected ? box?.around is StrategyBox<ForwardingStage> : box?.around == nil)
    let calls = LockedBox<[String]>([])
    let finished = LockedBox(false)
    let script = modelCase.script
    let task = Task { () -> [String] in
        var results: [String] = []
        for _ in 0..<modelCase.executions {
            let operation: @Sendable (ResilienceContext) async throws -> Int = { context in
                let index = calls.mutate { calls -> Int in
                    calls.append(
                        "call \(calls.count) attempt \(context.attempt) at \(context.clock.now()) "
                            + "deadline \(context.deadline.map { "\($0)" } ?? "none")")
                    return calls.count - 1
                }
                switch index < script.count ? script[index] : .succeed {
                case .succeed: return index
                case .fail(let failure): throw failure
                case .cancelled: throw CancellationError()
                case .cancelTask:
                    withUnsafeCurrentTask { $0?.cancel() }
                    throw CancellationError()
                case .stallThenFail(let pause, let failure):
                    try await context.clock.sleep(for: pause)
                    throw failure
                case .stallThenSucceed(let pause):
                    try await context.clock.sleep(for: pause)
                    return index
                }
            }
            let context = makeContext(clock, sink: listening ? sink : nil)
            do {
                let value =
                    if let pipeline {
                        try await pipeline.execute(context, operation)
                    } else {
                        try await ReferenceInterpreter.run(parts[...], context, operation)
                    }
                results.append("value \(value) at \(clock.now)")
            } catch {
                results.append("error \(error) at \(clock.now)")
            }
        }
        finished.mutate { $0 = true }
        return results
    }
    for _ in 0..<100_000 where !finished.value {
        if clock.sleeperCount > 0 { _ = clock.advanceToNextDeadline() }
        await Task.yield()
    }
    observation.results = await task.value
    observation.calls = calls.value
    observation.events = sink.events
    let end = ResilienceInstant(offset: .seconds(10_000))
    observation.finalState = parts.compactMap { $0.finalState(at: end) }
    return observation
}

@Suite("Built-in stages against a reference model")
struct StageModelTests {
    /// The generated cases: the same every run.
    static func cases(count: Int, seed: UInt64) -> [ModelCase] {
        var random = PseudoRandomGenerator(seed: seed)
        return (0..<count).map { _ in ModelCase.generate(using: &random) }
    }

    @Test(
        "Random pipelines: Pipeline, stage by stage, inside and before a third-party stage and the reference interpreter observe the same"
    )
    func randomPipelinesMatchTheReference() async {
        let cases = Self.cases(count: 200, seed: 0x5EED)
        var chains = 0
        var stageKinds = Set<String>()
        for (index, modelCase) in cases.enumerated() {
            // One case in four runs with nobody listening.
            let listening = index % 4 != 0
            let reference = await observe(modelCase, .reference, listening: listening)
            let pipeline = await observe(modelCase, .pipeline, listening: listening)
            let stageByStage = await observe(modelCase, .stageByStage, listening: listening)
            let insideThirdParty = await observe(modelCase, .insideThirdParty, listening: listening)
            let beforeThirdParty = await observe(modelCase, .beforeThirdParty, listening: listening)
            #expect(listening || reference.events.isEmpty)
            let runsAsOneChain = recordBytes(modelCase.stages) <= StageFrame.capacity
            #expect(pipeline.ranAsOneChain == runsAsOneChain, "case \(index)")
            #expect(insideThirdParty.ranAsOneChain == runsAsOneChain, "case \(index)")
            #expect(beforeThirdParty.ranAsOneChain == runsAsOneChain, "case \(index)")
            #expect(!stageByStage.ranAsOneChain)
            if pipeline.ranAsOneChain { chains += 1 }
            #expect(pipeline.results == reference.results, "case \(index): \(modelCase)")
            #expect(pipeline.calls == reference.calls, "case \(index): \(modelCase)")
            #expect(pipeline.events == reference.events, "case \(index): \(modelCase)")
            #expect(pipeline.finalState == reference.finalState, "case \(index): \(modelCase)")
            #expect(stageByStage == reference.with(ranAsOneChain: false), "case \(index): \(modelCase)")
            #expect(
                insideThirdParty == reference.with(ranAsOneChain: runsAsOneChain), "case \(index): \(modelCase)")
            #expect(
                beforeThirdParty == reference.with(ranAsOneChain: runsAsOneChain), "case \(index): \(modelCase)")
            #expect(reference.results.count == modelCase.executions)
            for stage in modelCase.stages { stageKinds.insert(stageKind(stage)) }
        }
        #expect(chains > 100, "most cases run as one chain of steps")
        #expect(chains < cases.count, "some run stage by stage")
        let allKinds =
            ["totalDeadline", "timeout", "retry", "serverQuota", "adaptive", "chosen", "skipped"]
            + BreakerKind.allCases.map { "breaker \($0)" } + LimiterKind.allCases.map { "limiter \($0)" }
        #expect(stageKinds == Set(allKinds), "every stage, breaker and limiter is generated")
    }

    /// The bytes of frame the stages' records take: a chain that needs more runs stage by stage.
    func recordBytes(_ stages: [StageSpec]) -> Int {
        stages.reduce(0) { bytes, stage in
            switch stage {
            case .retry: bytes + MemoryLayout<UInt64>.stride
            case .breaker: bytes + MemoryLayout<BreakerPermit>.stride
            case .limiter, .serverQuota, .adaptive: bytes + MemoryLayout<RateLimitPermit>.stride
            default: bytes
            }
        }
    }

    func stageKind(_ stage: StageSpec) -> String {
        switch stage {
        case .totalDeadline: "totalDeadline"
        case .timeout: "timeout"
        case .retry: "retry"
        case .breaker(let kind, _): "breaker \(kind)"
        case .limiter(let kind, _, _): "limiter \(kind)"
        case .serverQuota: "serverQuota"
        case .adaptive: "adaptive"
        case .chosen: "chosen"
        case .skipped: "skipped"
        }
    }

    /// A failure-ratio breaker counts slow successes: a success must be recorded at the time the call ended,
    /// or a slow call would look fast.
    @Test("A failure-ratio breaker opens on slow successes on every path")
    func failureRatioBreakerSeesSlowSuccesses() async {
        let modelCase = ModelCase(
            stages: [.breaker(.failureRatioByCount, seed: 1)],
            script: [.stallThenSucceed(.seconds(10)), .stallThenSucceed(.seconds(10)), .succeed],
            executions: 3)
        let reference = await observe(modelCase, .reference)
        let pipeline = await observe(modelCase, .pipeline)
        let stageByStage = await observe(modelCase, .stageByStage)
        #expect(pipeline.ranAsOneChain)
        #expect(reference.results.last?.hasPrefix("error circuit-open") == true, "\(reference)")
        #expect(pipeline == reference.with(ranAsOneChain: true))
        #expect(stageByStage == reference)
    }

    /// A model case that exercises every kind of outcome through the default order of stages.
    @Test("The default order of stages with every kind of outcome")
    func defaultOrderWithEveryOutcome() async {
        let modelCase = ModelCase(
            stages: [
                .totalDeadline(.seconds(60)),
                .retry(maxAttempts: 4, delay: .seconds(1), jittered: true, budget: true, seed: 9),
                .breaker(.failureRatioByTime, seed: 2), .limiter(.tokenBucket, waits: true, seed: 3),
                .timeout(.seconds(5)),
            ],
            script: [
                .fail(.serverError), .stallThenFail(.seconds(8), .serverError), .stallThenSucceed(.seconds(7)),
                .fail(.notFound), .cancelled, .fail(.rateLimited(after: .seconds(2))), .succeed, .cancelTask,
            ],
            executions: 4)
        let reference = await observe(modelCase, .reference)
        let pipeline = await observe(modelCase, .pipeline)
        let stageByStage = await observe(modelCase, .stageByStage)
        #expect(pipeline.ranAsOneChain)
        #expect(reference.events.count > 10)
        #expect(pipeline == reference.with(ranAsOneChain: true))
        #expect(stageByStage == reference)
    }
}

extension ModelObservation {
    func with(ranAsOneChain: Bool) -> ModelObservation {
        var copy = self
        copy.ranAsOneChain = ranAsOneChain
        return copy
    }
}

/// Which pipelines run as synchronous steps.
@Suite("Which pipelines run as one chain of steps")
struct StageChainEligibilityTests {
    func breaker() -> CircuitBreakerStrategy {
        CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: SharedRandomSource(seed: 1)))
    }

    @Test("Built-in deadline, timeout, retry, breaker and limiter stages alone run as steps")
    func builtInStagesRunAsSteps() {
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(30))
            RetryStrategy(random: SharedRandomSource(seed: 1))
            breaker()
            RateLimiterStrategy(limiter: TokenBucketLimiter(.standard, random: SharedRandomSource(seed: 2)))
            TimeoutStrategy(.seconds(10))
        }
        #expect(pipeline.box.steps != nil)
        #expect(Pipeline.standard(random: SharedRandomSource(seed: 1)).box.steps != nil)
    }

    @Test("An enforced timeout, a fallback or a third-party stage runs through its own execute, the others as steps")
    func otherChainsRunTheGeneralPath() async throws {
        let enforced = Pipeline { TimeoutStrategy(.seconds(10), mode: .enforced) }
        let fallback = Pipeline {
            FallbackStrategy<Int>(.value("zero", 0))
            TimeoutStrategy(.seconds(10))
        }
        let thirdParty = Pipeline {
            ForwardingStage()
            TimeoutStrategy(.seconds(10))
        }
        for pipeline in [enforced, fallback, thirdParty] {
            #expect(pipeline.box.steps == nil, "\(pipeline.pipelineDescription)")
            #expect(try await pipeline.execute(makeContext(ManualClock())) { _ in 7 } == 7)
        }
        // The built-in stages inside a fallback or a third-party stage still run as one chain of steps.
        #expect((fallback.box as? OuterStageBox<FallbackStrategy<Int>>)?.inner.steps != nil)
        #expect((thirdParty.box as? OuterStageBox<ForwardingStage>)?.inner.steps != nil)
        #expect(fallback.stages.map(\.name) == ["fallback", "timeout"])

        // So do those outside one: the steps run the rest as their operation.
        let between = Pipeline {
            TotalDeadlineStrategy(.seconds(30))
            RetryStrategy(policy: StandardRetryPolicy(maxAttempts: 2))
            ForwardingStage()
            TimeoutStrategy(.seconds(10))
        }
        #expect(between.box.steps != nil)
        let inside = try #require(between.box.around as? OuterStageBox<ForwardingStage>)
        #expect(inside.inner.steps != nil && inside.inner.around == nil)
        #expect(between.stages.map(\.name) == ["total-deadline", "retry", "forwarding", "timeout"])
        #expect(try await between.execute(makeContext(ManualClock())) { _ in 7 } == 7)

        // Four breakers keep four permits, more than the frame holds: the three that fit run as one chain of
        // steps around the fourth.
        let manyRecords = Pipeline {
            breaker()
            breaker()
            breaker()
            breaker()
        }
        #expect(manyRecords.box.steps != nil)
        #expect(manyRecords.box.around?.steps != nil && manyRecords.box.around?.around == nil)
        #expect(manyRecords.stages.count == 4)
        #expect(try await manyRecords.execute(makeContext(ManualClock())) { _ in 7 } == 7)
    }
}
