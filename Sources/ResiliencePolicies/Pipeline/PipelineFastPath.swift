// Speed tricks, all in this file: nothing here changes what a pipeline does, only how fast it does it.
// A reader learning the design can skip it. Nothing in it is public: third-party stages never see it.
//
// 1. Built-in stages share one clock reading. A stage that has just read the clock (or was handed a
//    reading) passes that instant as an explicit argument to the built-in stage inside it, and passes none
//    after anything that suspends (a retry's sleep, a wait for a permit, an enforced race). The instant
//    never travels in the `ResilienceContext`, so a stage this module does not know, which may suspend
//    before calling `next`, can never make an inner stage see a stale instant: composed with such a stage,
//    every stage runs through its public `execute(_:next:)` and reads the clock itself.
// 2. `Pipeline` is type-erased, and Swift cannot specialise generic code behind an existential for every
//    output type. For a chain of built-in, output-agnostic stages the pipeline keeps a runner specialised
//    for its stages when it is built, and passes the output around the stages rather than through them.
// 3. Breakers and limiters whose successful outcome does not depend on the time skip the clock read after
//    the call.
// 4. A pipeline of built-in stages runs its success path as synchronous steps around ONE async call of the
//    operation: read the clock once, `enter` every stage outermost first (admit the breaker, take a permit,
//    narrow the deadline in the one copy of the context), call the operation, `exit` every stage innermost
//    first. One async frame instead of one per stage. Whatever leaves that path (the operation throws, a
//    breaker rejects, a limiter says "later", an enforced timeout) continues exactly where the stage's own
//    `execute` would: `fail` runs the stage's failure handling (the retry loop included, which re-runs the
//    stages inside it through `execute`), `resume` continues from a decision `enter` already took. Each
//    stage's steps are its `execute` split at the call of `next`, so the behaviour is the same.

/// A built-in stage that can run on the fast path.
///
/// Conforming stages never look at the operation's output, never produce one of their own, and call `next`
/// at most once at a time: they return normally only after a call of `next` did. They take the current
/// instant when the stage outside has just read it (`nil` otherwise), and hand `next` an instant only when
/// nothing suspended since it was read.
///
/// The synchronous steps (trick 4) split ``execute(_:now:next:)`` at its call of `next`:
/// - `enter` does what `execute` does before calling `next` when nothing suspends, changing `context` into
///   the one `next` would be given; or, when `execute` would wait or throw instead, returns the decision it
///   took (`deferred`) without changing `context`'s deadline on its own behalf.
/// - `exit` does what `execute` does after `next` returned; `fail` what it does after `next` threw (it may
///   recover, as retry does, and then returns the output); `resume` what it does after a deferred `enter`.
///   Each is given the context its `enter` produced and the instant `enter` was given.
/// - `unwind` turns the context `enter` produced back into the one it was given.
@usableFromInline
protocol FastPathStage: ResilienceStrategy {
    associatedtype Token
    associatedtype Deferred

    func execute<Output: Sendable>(
        _ context: ResilienceContext, now: ResilienceInstant?,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output

    func enter(_ context: inout ResilienceContext, now: ResilienceInstant) -> FastPathEntry<Token, Deferred>

    func exit(_ token: Token, _ context: ResilienceContext, now: ResilienceInstant)

    func fail<Output: Sendable>(
        _ error: any Error, _ token: Token, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output

    func resume<Output: Sendable>(
        _ deferred: Deferred, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output

    func unwind(_ context: inout ResilienceContext, _ token: Token)
}

/// What a fast-path stage's `enter` decided.
@usableFromInline
enum FastPathEntry<Token, Deferred> {
    /// Entered: the call proceeds; `exit` or `fail` ends it.
    case entered(Token)
    /// `execute` would wait or throw here: `resume` continues from this decision.
    case deferred(Deferred)
}

extension FastPathStage {
    /// Nothing to undo in the context (only the deadline stages change it).
    @inlinable @inline(__always)
    func unwind(_ context: inout ResilienceContext, _ token: Token) {}

    /// Runs `next` inside an entered stage: exits after a return, fails after a throw.
    @inlinable
    func proceed<Output: Sendable>(
        _ token: Token, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        let output: Output
        do {
            output = try await next(context, now)
        } catch {
            return try await fail(error, token, context, now: now, next: next)
        }
        exit(token, context, now: now)
        return output
    }
}

extension RetryStrategy {
    @inlinable @inline(__always)
    func enter(_ context: inout ResilienceContext, now: ResilienceInstant) -> FastPathEntry<Void, Never> {
        budget?.recordRequest(now: now)
        if context.telemetry != nil { context.emit(.attemptStarted, at: now) }
        return .entered(())
    }

    @inlinable @inline(__always)
    func exit(_ token: Void, _ context: ResilienceContext, now: ResilienceInstant) {
        if context.telemetry != nil {
            let end = context.clock.now()
            context.emit(.attemptSucceeded, at: end) { $0.duration = now.duration(to: end) }
        }
    }

    @inlinable
    func fail<Output: Sendable>(
        _ error: any Error, _ token: Void, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        try await retry(after: error, start: now, context: context, next: next)
    }

    @inlinable
    func resume<Output: Sendable>(
        _ deferred: Never, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {}
}

/// A breaker's rejection, emitted and thrown by `resume` (nothing runs in between in `execute` either).
@usableFromInline
struct BreakerRejection {
    @usableFromInline let retryAfter: Duration
    @usableFromInline let state: BreakerState

    @inlinable @inline(__always)
    init(retryAfter: Duration, state: BreakerState) {
        self.retryAfter = retryAfter
        self.state = state
    }
}

extension CircuitBreakerStrategy {
    @inlinable @inline(__always)
    func enter(
        _ context: inout ResilienceContext, now: ResilienceInstant
    )
        -> FastPathEntry<BreakerPermit, BreakerRejection>
    {
        switch breaker.admit(now: now) {
        case .rejected(let retryAfter, let state):
            return .deferred(BreakerRejection(retryAfter: retryAfter, state: state))
        case .admitted(let permit, let transition):
            if let transition { Self.emit(transition, context) }
            return .entered(permit)
        }
    }

    @inlinable @inline(__always)
    func exit(_ permit: BreakerPermit, _ context: ResilienceContext, now: ResilienceInstant) {
        if let transition = breaker.record(
            .success, for: permit, now: successNeedsTime ? context.clock.now() : now)
        {
            Self.emit(transition, context)
        }
    }

    @inlinable
    func fail<Output: Sendable>(
        _ error: any Error, _ permit: BreakerPermit, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        recordFailure(error, permit: permit, context)
        throw error
    }

    @inlinable
    func resume<Output: Sendable>(
        _ rejection: BreakerRejection, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        throw Self.rejection(retryAfter: rejection.retryAfter, state: rejection.state, context)
    }
}

extension RateLimiterStrategy {
    @inlinable @inline(__always)
    func enter(
        _ context: inout ResilienceContext, now: ResilienceInstant
    )
        -> FastPathEntry<RateLimitPermit, RateLimitDecision>
    {
        let decision = limiter.tryAcquire(now: now)
        guard case .admitted(let permit) = decision else { return .deferred(decision) }
        return .entered(permit)
    }

    @inlinable @inline(__always)
    func exit(_ permit: RateLimitPermit, _ context: ResilienceContext, now: ResilienceInstant) {
        limiter.release(permit, outcome: .accepted, now: releaseNeedsTime ? context.clock.now() : now)
    }

    @inlinable
    func fail<Output: Sendable>(
        _ error: any Error, _ permit: RateLimitPermit, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        limiter.release(permit, outcome: Self.outcome(of: error, context), now: context.clock.now())
        throw error
    }

    @inlinable
    func resume<Output: Sendable>(
        _ decision: RateLimitDecision, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        let permit = try await waitForPermit(after: decision, context)
        return try await run(context, permit: permit, admittedAt: nil, next: next)
    }
}

extension TotalDeadlineStrategy: DeadlineStage {}
extension TimeoutStrategy: DeadlineStage {}
extension RetryStrategy: FastPathStage {}
extension CircuitBreakerStrategy: FastPathStage {}
extension RateLimiterStrategy: FastPathStage {}

extension EmptyStrategy: FastPathStage {
    @inlinable @inline(__always)
    func enter(_ context: inout ResilienceContext, now: ResilienceInstant) -> FastPathEntry<Void, Never> {
        .entered(())
    }

    @inlinable @inline(__always)
    func exit(_ token: Void, _ context: ResilienceContext, now: ResilienceInstant) {}

    @inlinable
    func fail<Output: Sendable>(
        _ error: any Error, _ token: Void, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        throw error
    }

    @inlinable
    func resume<Output: Sendable>(
        _ deferred: Never, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {}

    @inlinable @inline(__always)
    func execute<Output: Sendable>(
        _ context: ResilienceContext, now: ResilienceInstant?,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        try await next(context, now)
    }
}

/// Both stages of a composition entered.
@usableFromInline
struct ComposedToken<Outer, Inner> {
    @usableFromInline let outer: Outer
    @usableFromInline let inner: Inner

    @inlinable @inline(__always)
    init(outer: Outer, inner: Inner) {
        self.outer = outer
        self.inner = inner
    }
}

/// Where a composition's `enter` stopped.
@usableFromInline
enum ComposedDeferred<OuterToken, OuterDeferred, InnerDeferred> {
    /// The outer stage deferred; the inner one was not entered.
    case outer(OuterDeferred)
    /// The outer stage entered and produced a context with `deadline`; the inner one deferred.
    case inner(OuterToken, deadline: ResilienceInstant?, InnerDeferred)
}

extension ComposedStrategy: FastPathStage where Outer: FastPathStage, Inner: FastPathStage {
    @inlinable @inline(__always)
    func enter(
        _ context: inout ResilienceContext, now: ResilienceInstant
    )
        -> FastPathEntry<
            ComposedToken<Outer.Token, Inner.Token>, ComposedDeferred<Outer.Token, Outer.Deferred, Inner.Deferred>
        >
    {
        switch outer.enter(&context, now: now) {
        case .deferred(let deferred):
            return .deferred(.outer(deferred))
        case .entered(let outerToken):
            let outerDeadline = context.deadline
            switch inner.enter(&context, now: now) {
            case .entered(let innerToken): return .entered(ComposedToken(outer: outerToken, inner: innerToken))
            case .deferred(let deferred): return .deferred(.inner(outerToken, deadline: outerDeadline, deferred))
            }
        }
    }

    @inlinable @inline(__always)
    func exit(_ token: ComposedToken<Outer.Token, Inner.Token>, _ context: ResilienceContext, now: ResilienceInstant) {
        inner.exit(token.inner, context, now: now)
        outer.exit(token.outer, context, now: now)
    }

    @inlinable
    func fail<Output: Sendable>(
        _ error: any Error, _ token: ComposedToken<Outer.Token, Inner.Token>, _ context: ResilienceContext,
        now: ResilienceInstant, next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        let output: Output
        do {
            output = try await inner.fail(error, token.inner, context, now: now, next: next)
        } catch {
            var outerContext = context
            inner.unwind(&outerContext, token.inner)
            return try await outer.fail(error, token.outer, outerContext, now: now) { innerContext, innerNow in
                try await inner.execute(innerContext, now: innerNow, next: next)
            }
        }
        // The inner stage recovered (a retry succeeded): the outer one sees a successful call.
        var outerContext = context
        inner.unwind(&outerContext, token.inner)
        outer.exit(token.outer, outerContext, now: now)
        return output
    }

    @inlinable
    func resume<Output: Sendable>(
        _ deferred: ComposedDeferred<Outer.Token, Outer.Deferred, Inner.Deferred>, _ context: ResilienceContext,
        now: ResilienceInstant, next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        switch deferred {
        case .outer(let outerDeferred):
            return try await outer.resume(outerDeferred, context, now: now) { innerContext, innerNow in
                try await inner.execute(innerContext, now: innerNow, next: next)
            }
        case .inner(let outerToken, let outerDeadline, let innerDeferred):
            var outerContext = context
            outerContext.deadline = outerDeadline
            // `proceed` calls its `next` once, with `outerContext` and `now`: the inner stage resumes in the
            // context its own `enter` left.
            return try await outer.proceed(outerToken, outerContext, now: now) { _, _ in
                try await inner.resume(innerDeferred, context, now: now, next: next)
            }
        }
    }

    @inlinable @inline(__always)
    func unwind(_ context: inout ResilienceContext, _ token: ComposedToken<Outer.Token, Inner.Token>) {
        inner.unwind(&context, token.inner)
        outer.unwind(&context, token.outer)
    }

    @inlinable @inline(__always)
    func execute<Output: Sendable>(
        _ context: ResilienceContext, now: ResilienceInstant?,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        try await outer.execute(context, now: now) { outerContext, outerNow in
            try await inner.execute(outerContext, now: outerNow, next: next)
        }
    }
}

/// Which branch of an `EitherStrategy` a token or a deferral belongs to.
@usableFromInline
enum EitherStep<First, Second> {
    case first(First)
    case second(Second)
}

extension EitherStrategy: FastPathStage where First: FastPathStage, Second: FastPathStage {
    @inlinable
    func enter(
        _ context: inout ResilienceContext, now: ResilienceInstant
    )
        -> FastPathEntry<EitherStep<First.Token, Second.Token>, EitherStep<First.Deferred, Second.Deferred>>
    {
        switch self {
        case .first(let stage):
            switch stage.enter(&context, now: now) {
            case .entered(let token): return .entered(.first(token))
            case .deferred(let deferred): return .deferred(.first(deferred))
            }
        case .second(let stage):
            switch stage.enter(&context, now: now) {
            case .entered(let token): return .entered(.second(token))
            case .deferred(let deferred): return .deferred(.second(deferred))
            }
        }
    }

    @inlinable
    func exit(
        _ token: EitherStep<First.Token, Second.Token>, _ context: ResilienceContext, now: ResilienceInstant
    ) {
        switch (self, token) {
        case (.first(let stage), .first(let token)): stage.exit(token, context, now: now)
        case (.second(let stage), .second(let token)): stage.exit(token, context, now: now)
        default: break  // A token always comes from this value's own branch.
        }
    }

    @inlinable
    func fail<Output: Sendable>(
        _ error: any Error, _ token: EitherStep<First.Token, Second.Token>, _ context: ResilienceContext,
        now: ResilienceInstant, next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        switch (self, token) {
        case (.first(let stage), .first(let token)):
            return try await stage.fail(error, token, context, now: now, next: next)
        case (.second(let stage), .second(let token)):
            return try await stage.fail(error, token, context, now: now, next: next)
        default: throw error
        }
    }

    @inlinable
    func resume<Output: Sendable>(
        _ deferred: EitherStep<First.Deferred, Second.Deferred>, _ context: ResilienceContext,
        now: ResilienceInstant, next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        switch (self, deferred) {
        case (.first(let stage), .first(let deferred)):
            return try await stage.resume(deferred, context, now: now, next: next)
        case (.second(let stage), .second(let deferred)):
            return try await stage.resume(deferred, context, now: now, next: next)
        default: return try await execute(context, now: now, next: next)
        }
    }

    @inlinable
    func unwind(_ context: inout ResilienceContext, _ token: EitherStep<First.Token, Second.Token>) {
        switch (self, token) {
        case (.first(let stage), .first(let token)): stage.unwind(&context, token)
        case (.second(let stage), .second(let token)): stage.unwind(&context, token)
        default: break
        }
    }

    @inlinable
    func execute<Output: Sendable>(
        _ context: ResilienceContext, now: ResilienceInstant?,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        switch self {
        case .first(let stage): try await stage.execute(context, now: now, next: next)
        case .second(let stage): try await stage.execute(context, now: now, next: next)
        }
    }
}

/// The two timeout stages: their deadline counts from the instant handed in, which they hand on unless
/// the operation runs in a race's child task.
@usableFromInline
protocol DeadlineStage: FastPathStage {
    var deadline: ResilienceDeadline { get }
}

/// A deadline stage entered: the deadline it set and the one the context had before.
@usableFromInline
struct DeadlineToken {
    @usableFromInline let deadline: ResilienceInstant
    @usableFromInline let previous: ResilienceInstant?

    @inlinable @inline(__always)
    init(deadline: ResilienceInstant, previous: ResilienceInstant?) {
        self.deadline = deadline
        self.previous = previous
    }
}

extension DeadlineStage {
    /// Cooperative: narrows the deadline. Enforced: defers to the race, which needs a task group.
    @inlinable @inline(__always)
    func enter(_ context: inout ResilienceContext, now: ResilienceInstant) -> FastPathEntry<DeadlineToken, Void> {
        if deadline.isEnforced { return .deferred(()) }
        let token = DeadlineToken(deadline: now.advanced(by: deadline.clampedLimit), previous: context.deadline)
        context.narrowDeadline(to: token.deadline)
        return .entered(token)
    }

    @inlinable @inline(__always)
    func exit(_ token: DeadlineToken, _ context: ResilienceContext, now: ResilienceInstant) {}

    @inlinable
    func fail<Output: Sendable>(
        _ error: any Error, _ token: DeadlineToken, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        throw deadline.translate(error, context: context, deadline: token.deadline)
    }

    @inlinable
    func resume<Output: Sendable>(
        _ deferred: Void, _ context: ResilienceContext, now: ResilienceInstant,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        try await execute(context, now: now, next: next)
    }

    @inlinable @inline(__always)
    func unwind(_ context: inout ResilienceContext, _ token: DeadlineToken) {
        context.deadline = token.previous
    }

    @inlinable @inline(__always)
    func execute<Output: Sendable>(
        _ context: ResilienceContext, now: ResilienceInstant?,
        next: (ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        let start = now ?? context.clock.now()
        return try await deadline.run(context, startingAt: start) { inner in
            try await next(inner, deadline.isEnforced ? nil : start)
        }
    }
}

/// Runs a fast-path stage chain, specialised for its stages, around an operation that stores its own
/// output.
@usableFromInline
typealias FastPathRunner =
    @Sendable (ResilienceContext, (ResilienceContext) async throws -> Void) async throws -> Void

@usableFromInline
enum FastPath {
    /// A runner for `root` when every stage in it is a fast-path stage, else `nil`.
    @inlinable
    static func runner<Root: ResilienceStrategy>(for root: Root) -> FastPathRunner? {
        guard let stage = root as? any FastPathStage else { return nil }
        return makeRunner(stage)
    }

    /// The runner: one clock reading, one copy of the context, the stages entered and exited around one
    /// call of the operation; anything else continues through the stages' own steps.
    @inlinable
    static func makeRunner<Stage: FastPathStage>(_ stage: Stage) -> FastPathRunner {
        { context, operation in
            var inner = context
            let now = inner.clock.now()
            switch stage.enter(&inner, now: now) {
            case .entered(let token):
                do {
                    try await operation(inner)
                } catch {
                    try await failed(stage, error, token, inner, now: now, operation)
                    return
                }
                stage.exit(token, inner, now: now)
            case .deferred(let deferred):
                try await resumed(stage, deferred, inner, now: now, operation)
            }
        }
    }

    /// The failure path, kept out of the runner so the runner's async frame stays small.
    @inlinable @inline(never)
    static func failed<Stage: FastPathStage>(
        _ stage: Stage, _ error: any Error, _ token: Stage.Token, _ context: ResilienceContext,
        now: ResilienceInstant, _ operation: (ResilienceContext) async throws -> Void
    ) async throws {
        try await stage.fail(error, token, context, now: now) { context, _ in try await operation(context) }
    }

    /// The path after a stage deferred, kept out of the runner for the same reason.
    @inlinable @inline(never)
    static func resumed<Stage: FastPathStage>(
        _ stage: Stage, _ deferred: Stage.Deferred, _ context: ResilienceContext, now: ResilienceInstant,
        _ operation: (ResilienceContext) async throws -> Void
    ) async throws {
        try await stage.resume(deferred, context, now: now) { context, _ in try await operation(context) }
    }

    /// Runs `operation` through `runner`, carrying its output around the stages.
    @inlinable
    static func run<Output: Sendable>(
        _ runner: @escaping FastPathRunner, _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var output: Output?
        try await runner(context) { inner in output = try await operation(inner) }
        // Fast-path stages return normally only after the operation did.
        guard let output else { throw ResilienceError(.init(rawValue: "no-output"), key: context.key) }
        return output
    }
}

/// Breakers and limiters of this module that can record a successful call without a fresh reading of the
/// clock, so their stages skip the read after the call.
///
/// A type conforms only where the instant passed to `record(.success, …)` or `release(_:outcome:now:)` with
/// `.accepted` cannot change the result: the stage then passes the instant the call was admitted at.
protocol SuccessTimeAware: AnyObject, Sendable {
    /// Whether a success may be recorded with the admission instant instead of the current one.
    var recordsSuccessWithoutTime: Bool { get }
}

/// Success only resets counters or closes a half-open breaker; neither uses `now`.
extension ConsecutiveFailureBreaker: SuccessTimeAware {
    var recordsSuccessWithoutTime: Bool { true }
}

/// Success only resets the 429 counter and the multiplier; it never uses `now`.
extension RateLimitBreaker: SuccessTimeAware {
    var recordsSuccessWithoutTime: Bool { true }
}

/// Tokens are not returned and an accepted release only resets the exhaustion backoff.
extension TokenBucketLimiter: SuccessTimeAware {
    var recordsSuccessWithoutTime: Bool { true }
}
