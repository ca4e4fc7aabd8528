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
// 4. The stages share one copy of the context, which the runner makes: the deadline stages narrow its
//    deadline in place and restore it afterwards, where their public `execute(_:next:)` pass a narrowed
//    copy inward. So the retry, breaker and limiter stages have fast-path bodies here, mirroring their
//    public ones, which cannot take the context `inout` without copying it in every stage.
// 5. When the output type is concrete, the closure that runs the operation captures nothing: the operation
//    and its output travel in a record on the caller's frame, handed to the runner as a raw pointer.

/// A built-in stage that can run on the fast path.
///
/// Conforming stages never look at the operation's output, never produce one of their own, and call `next`
/// at most once at a time: they return normally only after a call of `next` did. They take the current
/// instant when the stage outside has just read it (`nil` otherwise), and hand `next` an instant only when
/// nothing suspended since it was read. The context is the one copy the runner made: a stage may change it
/// for `next` (a deadline stage narrows the deadline) but restores it before it returns or throws.
@usableFromInline
protocol FastPathStage: ResilienceStrategy {
    func execute<Output: Sendable>(
        _ context: inout ResilienceContext, now: ResilienceInstant?,
        next: (inout ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output
}

extension TotalDeadlineStrategy: DeadlineStage {}
extension TimeoutStrategy: DeadlineStage {}

extension RetryStrategy: FastPathStage {
    /// The retry stage's first attempt on the runner's context, mirroring ``execute(_:next:)`` (see the
    /// breaker's); the attempts after a failure run on a copy through the general retry loop.
    @inlinable @inline(__always)
    func execute<Output: Sendable>(
        _ context: inout ResilienceContext, now: ResilienceInstant?,
        next: (inout ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        let start = now ?? context.clock.now()
        let listening = beginFirstAttempt(context, start: start)
        var succeeded = true
        defer { if succeeded && listening { emitAttemptSucceeded(context, startedAt: start) } }
        let firstError: any Error
        do {
            return try await next(&context, start)
        } catch {
            succeeded = false
            firstError = error
        }
        return try await retry(after: firstError, start: start, context: context) { current, currentNow in
            var current = current
            return try await next(&current, currentNow)
        }
    }
}

extension CircuitBreakerStrategy: FastPathStage {
    /// The breaker stage on the runner's context: mirrors ``execute(_:next:)``, which cannot share this body
    /// without copying the context (about 45 ns per stage on the general path, measured). Helpers taking
    /// the context by value are called only before `next` or on paths that copy anyway.
    @inlinable @inline(__always)
    func execute<Output: Sendable>(
        _ context: inout ResilienceContext, now known: ResilienceInstant?,
        next: (inout ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        let now = known ?? context.clock.now()
        let permit = try admit(context, now: now)
        var succeeded = true
        defer {
            if succeeded,
                let transition = breaker.record(
                    .success, for: permit, now: successInstant(admittedAt: now, clock: context.clock.now()))
            {
                Self.emit(transition, context)
            }
        }
        do {
            return try await next(&context, now)
        } catch {
            succeeded = false
            recordFailure(error, permit: permit, context)
            throw error
        }
    }
}

extension RateLimiterStrategy: FastPathStage {
    /// The limiter stage on the runner's context: mirrors ``execute(_:next:)`` (see the breaker's).
    @inlinable @inline(__always)
    func execute<Output: Sendable>(
        _ context: inout ResilienceContext, now known: ResilienceInstant?,
        next: (inout ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        let now = known ?? context.clock.now()
        let decision = limiter.tryAcquire(now: now)
        let permit: RateLimitPermit
        let admittedAt: ResilienceInstant?
        if case .admitted(let admitted) = decision {
            (permit, admittedAt) = (admitted, now)
        } else {
            (permit, admittedAt) = (try await waitForPermit(after: decision, context), nil)
        }
        var succeeded = true
        defer {
            if succeeded {
                limiter.release(permit, outcome: .accepted, now: releaseInstant(admittedAt, clock: context.clock.now()))
            }
        }
        do {
            return try await next(&context, admittedAt)
        } catch {
            succeeded = false
            releaseFailed(permit, error, context)
            throw error
        }
    }
}

extension EmptyStrategy: FastPathStage {
    @inlinable @inline(__always)
    func execute<Output: Sendable>(
        _ context: inout ResilienceContext, now: ResilienceInstant?,
        next: (inout ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        try await next(&context, now)
    }
}

extension ComposedStrategy: FastPathStage where Outer: FastPathStage, Inner: FastPathStage {
    @inlinable @inline(__always)
    func execute<Output: Sendable>(
        _ context: inout ResilienceContext, now: ResilienceInstant?,
        next: (inout ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        try await outer.execute(&context, now: now) { outerContext, outerNow in
            try await inner.execute(&outerContext, now: outerNow, next: next)
        }
    }
}

extension EitherStrategy: FastPathStage where First: FastPathStage, Second: FastPathStage {
    @inlinable
    func execute<Output: Sendable>(
        _ context: inout ResilienceContext, now: ResilienceInstant?,
        next: (inout ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        switch self {
        case .first(let stage): try await stage.execute(&context, now: now, next: next)
        case .second(let stage): try await stage.execute(&context, now: now, next: next)
        }
    }
}

/// The two timeout stages: their deadline counts from the instant handed in, which they hand on unless
/// the operation runs in a race's child task.
@usableFromInline
protocol DeadlineStage: FastPathStage {
    var deadline: ResilienceDeadline { get }
}

extension DeadlineStage {
    @inlinable @inline(__always)
    func execute<Output: Sendable>(
        _ context: inout ResilienceContext, now: ResilienceInstant?,
        next: (inout ResilienceContext, ResilienceInstant?) async throws -> Output
    ) async throws -> Output {
        let start = now ?? context.clock.now()
        return try await deadline.run(narrowing: &context, startingAt: start) { inner in
            try await next(&inner, deadline.isEnforced ? nil : start)
        }
    }
}

/// Runs a fast-path stage chain, specialised for its stages, around an operation of any output type. The
/// runner gets the pipeline's own box (its stages), the caller's ``OperationCall`` as a raw pointer, and a
/// completion that runs that call's operation and stores its output. In code specialised for the output
/// type neither closure captures anything, so each is called directly, without a forwarder that would
/// allocate another async frame per call; generic code passes no record and a capturing completion.
@usableFromInline
typealias FastPathRunner =
    @Sendable (AnyStrategyBox, ResilienceContext, UnsafeMutableRawPointer?, FastPathCompletion) async throws -> Void

/// Runs the operation of the ``OperationCall`` it is handed (if any) and stores the output there.
@usableFromInline
typealias FastPathCompletion = (ResilienceContext, UnsafeMutableRawPointer?) async throws -> Void

/// One execution's operation and, once it has returned, its output.
@usableFromInline
struct OperationCall<Output> {
    @usableFromInline let operation: (ResilienceContext) async throws -> Output
    @usableFromInline var output: Output?

    @inlinable
    init(operation: @escaping (ResilienceContext) async throws -> Output) {
        self.operation = operation
    }
}

@usableFromInline
enum FastPath {
    /// A runner for `root` when every stage in it is a fast-path stage, else `nil`.
    @inlinable
    static func runner<Root: ResilienceStrategy>(for root: Root) -> FastPathRunner? {
        guard let stage = root as? any FastPathStage else { return nil }
        return makeRunner(stage)
    }

    /// Only `stage`'s type matters: the box handed to the runner is the `StrategyBox<Stage>` the pipeline
    /// built from the same root (every fast-path stage is a value type, so the root's static type is the
    /// type opened here).
    @inlinable
    static func makeRunner<Stage: FastPathStage>(_: Stage) -> FastPathRunner {
        { box, context, call, complete in
            var context = context
            return try await unsafeDowncast(box, to: StrategyBox<Stage>.self).root.execute(&context, now: nil) {
                inner, _ in try await complete(inner, call)
            }
        }
    }

    /// Runs `operation` through `runner` and the stages in `box`, carrying its output around the stages.
    @inlinable @inline(__always)
    static func run<Output: Sendable>(
        _ runner: @escaping FastPathRunner, _ box: AnyStrategyBox, _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        if _isConcrete(Output.self) { return try await runSpecialised(runner, box, context, operation) }
        // Generic code (behind `any ResiliencePipeline`): a generic call record would cost a metadata lookup
        // per call, so the completion captures the operation and the output instead.
        var output: Output?
        try await runner(box, context, nil) { inner, _ in output = try await operation(inner) }
        // Fast-path stages return normally only after the operation did.
        guard let output else { throw missingOutput(context) }
        return output
    }

    /// ``run(_:_:_:_:)`` specialised for the output type: the operation travels in the call record and the
    /// completion captures nothing. A separate function, so generic code does not carry its locals.
    @inlinable
    static func runSpecialised<Output: Sendable>(
        _ runner: @escaping FastPathRunner, _ box: AnyStrategyBox, _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        // The operation is called only while the runner runs, before this returns.
        try await withoutActuallyEscaping(operation) { operation in
            var call = OperationCall(operation: operation)
            try await start(runner, box, context, &call)
            guard let output = call.output else { throw missingOutput(context) }
            return output
        }
    }

    /// What a runner that returned without the operation's output throws (fast-path stages return normally
    /// only after the operation did, so this never happens unless a stage breaks that rule).
    @usableFromInline
    static func missingOutput(_ context: ResilienceContext) -> ResilienceError {
        ResilienceError(.init(rawValue: "no-output"), key: context.key)
    }

    /// Hands `call` to `runner` with the completion that runs it; `call` stays valid until the runner returns.
    @inlinable @inline(__always)
    static func start<Output: Sendable>(
        _ runner: @escaping FastPathRunner, _ box: AnyStrategyBox, _ context: ResilienceContext,
        _ call: UnsafeMutablePointer<OperationCall<Output>>
    ) async throws {
        try await runner(box, context, UnsafeMutableRawPointer(call)) { inner, call in
            let call = call.unsafelyUnwrapped.assumingMemoryBound(to: OperationCall<Output>.self)
            call.pointee.output = try await call.pointee.operation(inner)
        }
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
