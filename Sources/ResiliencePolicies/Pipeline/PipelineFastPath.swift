// Speed tricks, all in this file: nothing here changes what a pipeline does, only how fast it does it.
// A reader learning the design can skip it. Nothing in it is public: third-party stages never see it.
//
// 1. Synchronous steps. When every stage of a `Pipeline` is one of this module's deadline, timeout, retry,
//    breaker and limiter stages, a call runs each stage as two synchronous steps around one call of the
//    operation: `enter`, outermost first, and `exit`, innermost first. No closure, async frame or executor
//    check per stage: the operation is the only async call on the success path. Both steps run through one
//    closure built with the pipeline, specialised for its stages.
// 2. Leaving the steps. When a stage cannot enter at once (a breaker rejects, a limiter has no permit now)
//    or the operation throws, the call goes on through `resume` or `recover`, which finish every stage
//    exactly as its public `execute(_:next:)` would; anything run again (a retry's next attempt, the stages
//    inside a limiter that waited) runs through the stages' public `execute(_:next:)`.
// 3. One clock reading. `enter` reads the clock once and every stage enters at that instant; nothing suspends
//    between the reading and the last step. The instant never travels in the `ResilienceContext`, so a stage
//    this module does not know, which may suspend before calling `next`, can never make an inner stage see a
//    stale instant: a chain with such a stage runs every stage through `execute(_:next:)`.
// 4. One context copy. The deadline stages narrow the deadline of the one copy the call makes. `resume` and
//    `recover` work on one more copy of the caller's context: each stage narrows its deadline in place from
//    the instant and restores it before it returns or throws.
// 5. What a stage keeps from `enter` to `exit` (a permit, whether somebody listens) is plain data in a
//    fixed-size frame on the caller's stack, at an offset given by the stage's position.
// 6. Breakers and limiters whose successful outcome does not depend on the time skip the clock read after
//    the call.

/// A built-in stage that can run as synchronous steps (see the top of this file).
///
/// Conforming stages never look at the operation's output, never produce one of their own, and call `next`
/// at most once at a time. `enter` and `exit` change nothing but the context's deadline, and `exit` only
/// reads the fields of the context that no conforming stage changes (key, operation, attempt, telemetry,
/// clock, classifier).
@usableFromInline
protocol FastPathStage: ResilienceStrategy {
    /// How many stages this is: one, or the count of a composition's stages.
    var fastPathStageCount: Int { get }
    /// The bytes of the frame this stage's records take (a composition's: all of its stages').
    var fastPathRecordSize: Int { get }
    /// Whether the stage can run as synchronous steps (an enforced timeout races a child task: it cannot).
    var runsOnFastPath: Bool { get }

    /// The stage's work before `next`, at `frame.start`: `nil` to go on inward with `context` as `next`
    /// gets it, or where and why the steps stopped (`level` counted from this stage).
    func enter(_ context: inout ResilienceContext, _ frame: inout FastPathFrame, at offset: Int) -> FastPathStop?

    /// The stage's work after `next` returned.
    func exit(_ context: ResilienceContext, _ frame: FastPathFrame, at offset: Int)

    /// Applies to `context` what `enter` does to the context `next` gets (a deadline stage narrows it).
    func narrow(_ context: inout ResilienceContext, from start: ResilienceInstant)

    /// Finishes the call as `execute(_:next:)` would, after `enter` stopped at `stop` inside this stage.
    /// `context` is the one this stage received; the stage may narrow its deadline while it works but leaves
    /// it as it found it (so one copy serves every stage).
    func resume<Output: Sendable>(
        after stop: FastPathStop, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output

    /// Finishes the call as `execute(_:next:)` would, after `next` threw `error`.
    func recover<Output: Sendable>(
        after error: any Error, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output
}

/// Where and why the synchronous steps stopped before the operation.
@usableFromInline
struct FastPathStop: Sendable {
    /// What the stage needs instead of entering.
    @usableFromInline
    enum Reason: Sendable {
        /// The stage failed (a breaker rejected the call).
        case failed(any Error)
        /// The limiter has no permit at once; it waits (or rejects) after `decision`.
        case mustWait(RateLimitDecision)
    }

    /// What the stage needs.
    @usableFromInline var reason: Reason
    /// The stage that stopped, counted from the outermost one (0).
    @usableFromInline var level: Int

    @inlinable
    init(_ reason: Reason, level: Int = 0) {
        self.reason = reason
        self.level = level
    }

    /// The error a stage that stopped reports when it has no way to go on: its own failure. Only a limiter
    /// stops to wait, and it finishes that itself; were a wait ever left to another stage, it would
    /// surface as the limiter's rejection.
    @inlinable
    func failure(key: String) -> any Error {
        switch reason {
        case .failed(let error): error
        case .mustWait: ResilienceError(.rateLimited, key: key)
        }
    }
}

/// What the stages keep between their steps: the instant they entered at and each stage's record (a
/// permit), stored as plain bytes at the offset the stage's position gives it.
@usableFromInline
struct FastPathFrame: Sendable {
    /// The bytes available for records.
    @inlinable static var capacity: Int { 96 }

    /// The instant every stage entered at: the call's one clock reading.
    @usableFromInline var start: ResilienceInstant
    @usableFromInline var records:
        (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    @inlinable
    init() {
        start = ResilienceInstant(offset: Duration(_high: 0, low: 0))
        records = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// Stores a record of plain data (no references; a permit) at `offset`, a multiple of its alignment.
    @inlinable
    mutating func store<Record>(_ record: Record, at offset: Int) {
        // Folded away once specialised: a record that held a reference would be copied without its count.
        precondition(_isPOD(Record.self), "fast-path records are plain data")
        withUnsafeMutableBytes(of: &records) { $0.storeBytes(of: record, toByteOffset: offset, as: Record.self) }
    }

    /// The record stored at `offset`.
    @inlinable
    func load<Record>(_: Record.Type, at offset: Int) -> Record {
        withUnsafeBytes(of: records) { $0.load(fromByteOffset: offset, as: Record.self) }
    }
}

extension FastPathStage {
    @inlinable var fastPathStageCount: Int { 1 }
    @inlinable var fastPathRecordSize: Int { 0 }
    @inlinable var runsOnFastPath: Bool { true }

    @inlinable @inline(__always)
    func exit(_ context: ResilienceContext, _ frame: FastPathFrame, at offset: Int) {}

    @inlinable @inline(__always)
    func narrow(_ context: inout ResilienceContext, from start: ResilienceInstant) {}

    /// A stage that stops only by failing rethrows its failure.
    @inlinable @inline(__always)
    func resume<Output: Sendable>(
        after stop: FastPathStop, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        throw stop.failure(key: context.key)
    }
}

/// The two timeout stages: each narrows the deadline to `start + limit` and, after a failure past that
/// instant, reports its own timeout error.
@usableFromInline
protocol DeadlineStage: FastPathStage {
    var deadline: ResilienceDeadline { get }
}

extension TotalDeadlineStrategy: DeadlineStage {}
extension TimeoutStrategy: DeadlineStage {}

extension DeadlineStage {
    @inlinable var runsOnFastPath: Bool { !deadline.isEnforced }

    @inlinable @inline(__always)
    func enter(_ context: inout ResilienceContext, _ frame: inout FastPathFrame, at offset: Int) -> FastPathStop? {
        narrow(&context, from: frame.start)
        return nil
    }

    @inlinable @inline(__always)
    func narrow(_ context: inout ResilienceContext, from start: ResilienceInstant) {
        context.narrowDeadline(to: deadline.end(from: start))
    }

    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after error: any Error, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let received = context.deadline
        narrow(&context, from: frame.start)
        let translated = deadline.translate(error, context: context, deadline: deadline.end(from: frame.start))
        context.deadline = received
        throw translated
    }
}

extension RetryStrategy: FastPathStage {
    /// Its record: whether somebody listens (asked once: comparing the context's optional sink with `nil`
    /// copies it).
    @inlinable var fastPathRecordSize: Int { MemoryLayout<UInt64>.stride }

    /// Deposits the execution in the budget and emits `attemptStarted` (see ``execute(_:next:)``).
    @inlinable @inline(__always)
    func enter(_ context: inout ResilienceContext, _ frame: inout FastPathFrame, at offset: Int) -> FastPathStop? {
        frame.store(beginFirstAttempt(context, start: frame.start), at: offset)
        return nil
    }

    @inlinable @inline(__always)
    func exit(_ context: ResilienceContext, _ frame: FastPathFrame, at offset: Int) {
        if frame.load(Bool.self, at: offset) { emitAttemptSucceeded(context, startedAt: frame.start) }
    }

    /// The attempts after the first one failed, through the general retry loop.
    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after error: any Error, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await retry(after: error, start: frame.start, context: context) { current, _ in try await next(current) }
    }
}

extension CircuitBreakerStrategy: FastPathStage {
    @inlinable var fastPathRecordSize: Int { MemoryLayout<BreakerPermit>.stride }

    /// Asks the breaker; keeps the permit, or stops with the rejection (see ``execute(_:next:)``).
    @inlinable @inline(__always)
    func enter(_ context: inout ResilienceContext, _ frame: inout FastPathFrame, at offset: Int) -> FastPathStop? {
        do {
            frame.store(try admit(context, now: frame.start), at: offset)
            return nil
        } catch {
            return FastPathStop(.failed(error))
        }
    }

    @inlinable @inline(__always)
    func exit(_ context: ResilienceContext, _ frame: FastPathFrame, at offset: Int) {
        let permit = frame.load(BreakerPermit.self, at: offset)
        let now = successInstant(admittedAt: frame.start, clock: context.clock.now())
        if let transition = breaker.record(.success, for: permit, now: now) { Self.emit(transition, context) }
    }

    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after error: any Error, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        recordFailure(error, permit: frame.load(BreakerPermit.self, at: offset), context)
        throw error
    }
}

extension RateLimiterStrategy: FastPathStage {
    @inlinable var fastPathRecordSize: Int { MemoryLayout<RateLimitPermit>.stride }

    /// Takes a permit at once, or stops to wait for one (see ``execute(_:next:)``).
    @inlinable @inline(__always)
    func enter(_ context: inout ResilienceContext, _ frame: inout FastPathFrame, at offset: Int) -> FastPathStop? {
        let decision = limiter.tryAcquire(now: frame.start)
        guard case .admitted(let permit) = decision else { return FastPathStop(.mustWait(decision)) }
        frame.store(permit, at: offset)
        return nil
    }

    @inlinable @inline(__always)
    func exit(_ context: ResilienceContext, _ frame: FastPathFrame, at offset: Int) {
        let permit = frame.load(RateLimitPermit.self, at: offset)
        limiter.release(permit, outcome: .accepted, now: releaseInstant(frame.start, clock: context.clock.now()))
    }

    /// Waits for a permit (or throws the rejection), then runs `next` as ``execute(_:next:)`` does.
    @inlinable @inline(__always)
    func resume<Output: Sendable>(
        after stop: FastPathStop, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard case .mustWait(let decision) = stop.reason else { throw stop.failure(key: context.key) }
        return try await run(next, context, permit: try await waitForPermit(after: decision, context), admittedAt: nil)
    }

    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after error: any Error, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        releaseFailed(frame.load(RateLimitPermit.self, at: offset), error, context)
        throw error
    }
}

extension EmptyStrategy: FastPathStage {
    @inlinable var fastPathStageCount: Int { 0 }

    @inlinable @inline(__always)
    func enter(_ context: inout ResilienceContext, _ frame: inout FastPathFrame, at offset: Int) -> FastPathStop? {
        nil
    }

    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after error: any Error, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        throw error
    }
}

extension ComposedStrategy: FastPathStage where Outer: FastPathStage, Inner: FastPathStage {
    @inlinable var fastPathStageCount: Int { outer.fastPathStageCount + inner.fastPathStageCount }
    @inlinable var fastPathRecordSize: Int { outer.fastPathRecordSize + inner.fastPathRecordSize }
    @inlinable var runsOnFastPath: Bool { outer.runsOnFastPath && inner.runsOnFastPath }

    @inlinable @inline(__always)
    func enter(_ context: inout ResilienceContext, _ frame: inout FastPathFrame, at offset: Int) -> FastPathStop? {
        if let stop = outer.enter(&context, &frame, at: offset) { return stop }
        guard var stop = inner.enter(&context, &frame, at: offset + outer.fastPathRecordSize) else { return nil }
        stop.level += outer.fastPathStageCount
        return stop
    }

    @inlinable @inline(__always)
    func exit(_ context: ResilienceContext, _ frame: FastPathFrame, at offset: Int) {
        inner.exit(context, frame, at: offset + outer.fastPathRecordSize)
        outer.exit(context, frame, at: offset)
    }

    @inlinable @inline(__always)
    func narrow(_ context: inout ResilienceContext, from start: ResilienceInstant) {
        outer.narrow(&context, from: start)
        inner.narrow(&context, from: start)
    }

    @inlinable @inline(__always)
    func resume<Output: Sendable>(
        after stop: FastPathStop, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        if stop.level < outer.fastPathStageCount {
            return try await outer.resume(after: stop, &context, frame, at: offset) { outerContext in
                try await inner.execute(outerContext, next: next)
            }
        }
        var innerStop = stop
        innerStop.level -= outer.fastPathStageCount
        return try await finishOuter(&context, frame, at: offset, next: next) { innerContext in
            try await inner.resume(
                after: innerStop, &innerContext, frame, at: offset + outer.fastPathRecordSize, next: next)
        }
    }

    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after error: any Error, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await finishOuter(&context, frame, at: offset, next: next) { innerContext in
            try await inner.recover(
                after: error, &innerContext, frame, at: offset + outer.fastPathRecordSize, next: next)
        }
    }

    /// Finishes `outer` once `innerEnd` (the inner stages finishing, on the context narrowed as `outer`
    /// narrows it) has returned or thrown: as after its `next` returned or threw.
    @inlinable @inline(__always)
    func finishOuter<Output: Sendable>(
        _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output,
        innerEnd: (inout ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let received = context.deadline
        outer.narrow(&context, from: frame.start)
        let output: Output
        do {
            output = try await innerEnd(&context)
        } catch {
            context.deadline = received
            return try await outer.recover(after: error, &context, frame, at: offset) { outerContext in
                try await inner.execute(outerContext, next: next)
            }
        }
        context.deadline = received
        outer.exit(context, frame, at: offset)
        return output
    }
}

extension EitherStrategy: FastPathStage where First: FastPathStage, Second: FastPathStage {
    @inlinable var fastPathStageCount: Int {
        switch self {
        case .first(let stage): stage.fastPathStageCount
        case .second(let stage): stage.fastPathStageCount
        }
    }

    @inlinable var fastPathRecordSize: Int {
        switch self {
        case .first(let stage): stage.fastPathRecordSize
        case .second(let stage): stage.fastPathRecordSize
        }
    }

    @inlinable var runsOnFastPath: Bool {
        switch self {
        case .first(let stage): stage.runsOnFastPath
        case .second(let stage): stage.runsOnFastPath
        }
    }

    @inlinable
    func enter(_ context: inout ResilienceContext, _ frame: inout FastPathFrame, at offset: Int) -> FastPathStop? {
        switch self {
        case .first(let stage): stage.enter(&context, &frame, at: offset)
        case .second(let stage): stage.enter(&context, &frame, at: offset)
        }
    }

    @inlinable
    func exit(_ context: ResilienceContext, _ frame: FastPathFrame, at offset: Int) {
        switch self {
        case .first(let stage): stage.exit(context, frame, at: offset)
        case .second(let stage): stage.exit(context, frame, at: offset)
        }
    }

    @inlinable
    func narrow(_ context: inout ResilienceContext, from start: ResilienceInstant) {
        switch self {
        case .first(let stage): stage.narrow(&context, from: start)
        case .second(let stage): stage.narrow(&context, from: start)
        }
    }

    @inlinable @inline(__always)
    func resume<Output: Sendable>(
        after stop: FastPathStop, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        switch self {
        case .first(let stage): try await stage.resume(after: stop, &context, frame, at: offset, next: next)
        case .second(let stage): try await stage.resume(after: stop, &context, frame, at: offset, next: next)
        }
    }

    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after error: any Error, _ context: inout ResilienceContext, _ frame: FastPathFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        switch self {
        case .first(let stage): try await stage.recover(after: error, &context, frame, at: offset, next: next)
        case .second(let stage): try await stage.recover(after: error, &context, frame, at: offset, next: next)
        }
    }
}

/// Which step ``FastPathSteps/step`` runs.
@usableFromInline
enum FastPathStep: Sendable {
    /// Read the clock and enter every stage, outermost first.
    case enter
    /// Leave every stage, innermost first, after the operation returned.
    case exit
}

/// How a call left the synchronous steps.
@usableFromInline
enum FastPathEnd: Sendable {
    /// A stage stopped before the operation ran.
    case stopped(FastPathStop)
    /// The operation threw.
    case operationFailed(any Error)
}

/// One pipeline's stages as steps, specialised for them when the pipeline is built. Both closures take the
/// pipeline's box (its stages) as an argument, so neither captures anything.
@usableFromInline
struct FastPathSteps: Sendable {
    /// Enters or leaves every stage: synchronous, the success path.
    @usableFromInline let step:
        @Sendable (FastPathStep, AnyStrategyBox, inout ResilienceContext, inout FastPathFrame) -> FastPathStop?
    /// Finishes a call that left the steps as the stages' `execute(_:next:)` would, calling `complete` for
    /// every run of the operation. The stages run with no output of their own (`Void`): `complete` keeps the
    /// operation's.
    @usableFromInline let finish:
        @Sendable (
            FastPathEnd, AnyStrategyBox, FastPathFrame, ResilienceContext,
            _ complete: (ResilienceContext) async throws -> Void
        ) async throws -> Void

    @inlinable
    init<Stage: FastPathStage>(for _: Stage.Type) {
        step = { step, box, context, frame in
            switch step {
            case .enter:
                frame.start = context.clock.now()
                return unsafeDowncast(box, to: StrategyBox<Stage>.self).root.enter(&context, &frame, at: 0)
            case .exit:
                unsafeDowncast(box, to: StrategyBox<Stage>.self).root.exit(context, frame, at: 0)
                return nil
            }
        }
        finish = { end, box, frame, context, complete in
            let root = unsafeDowncast(box, to: StrategyBox<Stage>.self).root
            var context = context
            switch end {
            case .stopped(let stop): try await root.resume(after: stop, &context, frame, at: 0, next: complete)
            case .operationFailed(let error):
                try await root.recover(after: error, &context, frame, at: 0, next: complete)
            }
        }
    }
}

@usableFromInline
enum FastPath {
    /// The box for `root`, with the steps of its stages when every one of them can run on the fast path and
    /// their records fit the frame.
    @inlinable
    static func box<Root: ResilienceStrategy>(for root: Root) -> AnyStrategyBox {
        guard let stage = root as? any FastPathStage, let box = fastBox(stage) else { return StrategyBox(root) }
        return box
    }

    /// Opens the stage type: every fast-path stage is a value type, so it is `Root` itself.
    @inlinable
    static func fastBox<Stage: FastPathStage>(_ stage: Stage) -> AnyStrategyBox? {
        guard stage.runsOnFastPath, stage.fastPathRecordSize <= FastPathFrame.capacity else { return nil }
        return StrategyBox(stage, fastPath: FastPathSteps(for: Stage.self))
    }

    /// Runs `operation` through the steps; a call that leaves them is finished by ``finish(_:_:_:_:_:_:)``.
    @inlinable @inline(__always)
    static func run<Output: Sendable>(
        _ steps: FastPathSteps, _ box: AnyStrategyBox, _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var inner = context
        var frame = FastPathFrame()
        if let stop = steps.step(.enter, box, &inner, &frame) {
            return try await finish(.stopped(stop), steps, box, frame, context, operation)
        }
        var succeeded = true
        // Runs after the output went straight into the caller's return slot.
        defer { if succeeded { _ = steps.step(.exit, box, &inner, &frame) } }
        do {
            return try await operation(inner)
        } catch {
            succeeded = false
            return try await finish(.operationFailed(error), steps, box, frame, context, operation)
        }
    }

    /// Finishes a call that left the steps, keeping the output of the operation's run that returned. Not
    /// inlined: only failures and waits come here.
    @inlinable @inline(never)
    static func finish<Output: Sendable>(
        _ end: FastPathEnd, _ steps: FastPathSteps, _ box: AnyStrategyBox, _ frame: FastPathFrame,
        _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var output: Output?
        try await steps.finish(end, box, frame, context) { inner in output = try await operation(inner) }
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
