// How the built-in stages run. Nothing here is public: third-party stages never see it.
//
// A built-in stage (total deadline, attempt timeout, retry, circuit breaker, rate limiter) is written once, as
// steps, in its own file:
//
// - `enter`, before the operation: synchronous; takes a permit, deposits in a budget. It returns `nil` to go
//   on inward, or a `StageStop` (a breaker rejected, a limiter has no permit at once). It reads the context
//   and never changes it: what a stage changes in the context the stages inside get (a deadline stage narrows
//   the deadline) is its `narrow` step, and only a stage that says so (`narrowsContext`) has one.
// - `exit`, after the operation returned: synchronous; records the success, releases the permit.
// - `resume`, after `enter` stopped: finishes the call (a limiter waits for a permit, then runs `next`).
// - `recover`, after the operation (or the stages inside) threw: records the failure, translates a timeout,
//   retries through `next`. The failure travels outward as a `StageFailure`, which keeps the error's
//   classification once a stage asked for it: one call's failure is classified once, not once per stage.
//
// `StageDriver.run` runs any such stage, or a chain of them, around an operation: it reads the clock once, runs
// `enter` outermost first, awaits the operation once, and runs `exit` innermost first; when a stage stops or
// the operation throws, it hands over to `resume` or `recover`. The operation gets the caller's context
// itself, borrowed, unless a stage of the chain narrows it: then (only then) one copy, narrowed by every
// stage outermost first. Every built-in stage's public `execute(_:next:)` is this driver on the stage alone,
// and a `Pipeline` whose stages are all built-in runs its whole chain through the same driver (behind the
// type-erased box, through closures specialised for the chain when the pipeline is built). A chain with any
// other stage (fallback, hedging, a third party's) runs each stage through `execute(_:next:)`, which for a
// built-in stage is the driver again.
//
// What a stage keeps from `enter` to `exit` (a permit, whether somebody listens) is plain data in a fixed-size
// frame on the caller's stack, at an offset given by the stage's position in the chain. The instant every
// stage entered at is in the frame too, never in the `ResilienceContext`, so a stage this module does not
// know, which may suspend before calling `next`, can never make an inner stage see a stale instant.

/// A built-in stage written as synchronous steps around the operation (see the top of this file).
///
/// Conforming stages never look at the operation's output, never produce one of their own, and call `next`
/// at most once at a time. `enter` and `exit` change nothing in the context and read only the fields no
/// conforming stage changes (key, operation, attempt, priority, telemetry, clock, classifier): both get the
/// context the chain was given, not the one `narrow` makes for the stages inside.
@usableFromInline
protocol SteppedStage: ResilienceStrategy, StageRunner {
    /// How many stages this is: one, or the count of a composition's stages.
    var stageCount: Int { get }
    /// The bytes of the frame this stage's records take (a composition's: all of its stages').
    var recordSize: Int { get }
    /// Whether the stage can run as synchronous steps (an enforced timeout races a child task: it cannot).
    var runsAsSteps: Bool { get }
    /// Whether ``narrow(_:from:)`` changes the context (a deadline stage's, a quota stage's): when no stage
    /// of a chain does, the operation gets the caller's context as it is, and nothing is copied.
    var narrowsContext: Bool { get }

    /// The stage's work before `next`, at `frame.start`: `nil` to go on inward, or where and why the steps
    /// stopped (`level` counted from this stage). The context `next` gets is `context` after ``narrow(_:from:)``.
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop?

    /// The stage's work after `next` returned. A stage that needs the instant the operation returned at reads
    /// it through ``StageFrame/endInstant(_:)``, so the stages of a chain share one reading.
    func exit(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int)

    /// Makes `context` the one `next` gets (a deadline stage narrows its deadline); only a stage whose
    /// ``narrowsContext`` is `true` changes anything.
    func narrow(_ context: inout ResilienceContext, from start: ResilienceInstant)

    /// Finishes the call after `enter` stopped at `stop` inside this stage. `context` is the one this stage
    /// received; the stage may narrow its deadline while it works but leaves it as it found it (so one copy
    /// serves every stage of a chain).
    func resume<Output: Sendable>(
        after stop: StageStop, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output

    /// Finishes the call after `next` threw `failure.error`. A stage that throws the failure on (as it is, or
    /// replaced by its own error through ``StageFailure/replace(with:)``) throws ``StageFailure/passOn()``,
    /// so the stage outside it gets the failure with its classification.
    func recover<Output: Sendable>(
        after failure: inout StageFailure, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output
}

/// A failure on its way out through the stages of one call: the error, and its classification once a stage
/// has asked for it. Every stage of a chain classifies with the same classifier (no stepped stage changes
/// it), so one classification serves all of them.
@usableFromInline
struct StageFailure: Sendable {
    /// The error, once there is one (always, where a stage's `recover` reads it).
    @usableFromInline var thrown: (any Error)?
    /// The classification of ``error``, once a stage asked for it.
    @usableFromInline var knownClassification: FailureClassification?
    /// Whether the stage that threw ``error`` last threw it through ``passOn()``: only then is the error
    /// that reaches the stage outside this failure, and not another one thrown on the way (a retry's sleep
    /// cancelled, say).
    @usableFromInline var passedOn = false

    @inlinable
    init(_ error: any Error) {
        thrown = error
    }

    /// No failure yet, for stages that finish a stop (a stage's `resume` that throws starts a new failure).
    @inlinable
    init() {}

    /// The error the stages see.
    @inlinable
    var error: any Error {
        guard let thrown else { preconditionFailure("a stage read the failure of a call that has not failed") }
        return thrown
    }

    /// The classification of ``error`` by `context`'s classifier, asked once.
    @inlinable
    mutating func classification(in context: ResilienceContext) -> FailureClassification {
        if let knownClassification { return knownClassification }
        let classification = context.classify(error)
        knownClassification = classification
        return classification
    }

    /// Makes `error` (a stage's own, such as a timeout's) the failure the stages outside see.
    @inlinable
    mutating func replace(with error: any Error) {
        self = StageFailure(error)
    }

    /// The error to throw to the stage outside, marked as this failure.
    @inlinable
    mutating func passOn() -> any Error {
        passedOn = true
        return error
    }

    /// Takes in `thrown`, which the stages inside threw: this failure when they passed it on, else a new one.
    @inlinable
    mutating func receive(_ thrown: any Error) {
        if passedOn {
            passedOn = false
        } else {
            self = StageFailure(thrown)
        }
    }
}

/// Where and why the synchronous steps stopped before the operation.
@usableFromInline
struct StageStop: Sendable {
    /// What the stage needs instead of entering.
    @usableFromInline
    enum Reason: Sendable {
        /// The stage failed (a breaker rejected the call).
        case failed(any Error)
        /// The limiter has no permit at once; it waits (or rejects) after `decision`.
        case mustWait(RateLimitDecision)
        /// A chaos stage injects latency or a behaviour; its `resume` does that, then runs `next`.
        case injected
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
    /// stops to wait and only a chaos stage stops to inject, and each finishes that itself; were a stop ever
    /// left to another stage, a wait would surface as the limiter's rejection and an injection as
    /// ``ChaosFault/serviceUnavailable``.
    @inlinable
    func failure(key: String) -> any Error {
        switch reason {
        case .failed(let error): error
        case .mustWait: ResilienceError(.rateLimited, key: key)
        case .injected: ChaosFault.serviceUnavailable
        }
    }
}

/// What the stages keep between their steps: the instant they entered at and each stage's record (a
/// permit), stored as plain bytes at the offset the stage's position gives it.
@usableFromInline
struct StageFrame: Sendable {
    /// The bytes available for records.
    @inlinable static var capacity: Int { 96 }

    /// The instant every stage entered at: the call's one clock reading.
    @usableFromInline var start: ResilienceInstant
    /// The instant the operation returned at, once a stage's `exit` asked for it (``endInstant(_:)``).
    @usableFromInline var end: ResilienceInstant?
    @usableFromInline var records:
        (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)

    @inlinable
    init(start: ResilienceInstant) {
        self.start = start
        records = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// The instant the operation returned at: read from `clock` by the first `exit` that asks, the same for
    /// every stage after it (the exits run one after another, synchronously, as soon as it returned).
    @inlinable
    mutating func endInstant(_ clock: ResilienceClock) -> ResilienceInstant {
        if let end { return end }
        let now = clock.now()
        end = now
        return now
    }

    /// Stores a record of plain data (no references; a permit) at `offset`, a multiple of its alignment.
    @inlinable
    mutating func store<Record>(_ record: Record, at offset: Int) {
        // Folded away once specialised: a record that held a reference would be copied without its count.
        precondition(_isPOD(Record.self), "stage records are plain data")
        withUnsafeMutableBytes(of: &records) { $0.storeBytes(of: record, toByteOffset: offset, as: Record.self) }
    }

    /// The record stored at `offset`.
    @inlinable
    func load<Record>(_: Record.Type, at offset: Int) -> Record {
        withUnsafeBytes(of: records) { $0.load(fromByteOffset: offset, as: Record.self) }
    }
}

extension SteppedStage {
    /// Runs `next` through this stage's steps, on the driver: the `execute(_:next:)` of every built-in stage
    /// that does nothing around its steps (retry, circuit breaker, rate limiter, adaptive concurrency).
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await StageDriver.run(self, context, next)
    }

    @inlinable var stageCount: Int { 1 }
    @inlinable var recordSize: Int { 0 }
    @inlinable var runsAsSteps: Bool { true }
    @inlinable var narrowsContext: Bool { false }

    @inlinable @inline(__always)
    func exit(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) {}

    @inlinable @inline(__always)
    func narrow(_ context: inout ResilienceContext, from start: ResilienceInstant) {}

    /// A stage that records nothing on failure passes it on.
    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after failure: inout StageFailure, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        throw failure.passOn()
    }

    /// A stage that stops only by failing rethrows its failure.
    @inlinable @inline(__always)
    func resume<Output: Sendable>(
        after stop: StageStop, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        throw stop.failure(key: context.key)
    }
}

// The compositions a `PipelineBuilder` makes are stepped stages when all of theirs are.

extension EmptyStrategy: SteppedStage {
    @inlinable var stageCount: Int { 0 }

    @inlinable @inline(__always)
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        nil
    }
}

extension ComposedStrategy: StageRunner where Outer: SteppedStage, Inner: SteppedStage {}
extension EitherStrategy: StageRunner where First: SteppedStage, Second: SteppedStage {}

extension ComposedStrategy: SteppedStage where Outer: SteppedStage, Inner: SteppedStage {
    @inlinable var stageCount: Int { outer.stageCount + inner.stageCount }
    @inlinable var recordSize: Int { outer.recordSize + inner.recordSize }
    @inlinable var runsAsSteps: Bool { outer.runsAsSteps && inner.runsAsSteps }
    @inlinable var narrowsContext: Bool { outer.narrowsContext || inner.narrowsContext }

    @inlinable @inline(__always)
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        if let stop = outer.enter(context, &frame, at: offset) { return stop }
        guard var stop = inner.enter(context, &frame, at: offset + outer.recordSize) else { return nil }
        stop.level += outer.stageCount
        return stop
    }

    @inlinable @inline(__always)
    func exit(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) {
        inner.exit(context, &frame, at: offset + outer.recordSize)
        outer.exit(context, &frame, at: offset)
    }

    @inlinable @inline(__always)
    func narrow(_ context: inout ResilienceContext, from start: ResilienceInstant) {
        outer.narrow(&context, from: start)
        inner.narrow(&context, from: start)
    }

    @inlinable @inline(__always)
    func resume<Output: Sendable>(
        after stop: StageStop, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        if stop.level < outer.stageCount {
            return try await outer.resume(after: stop, &context, frame, at: offset) { outerContext in
                try await inner.execute(outerContext, next: next)
            }
        }
        var innerStop = stop
        innerStop.level -= outer.stageCount
        // The stages inside fail only if a stage's `resume` throws, which is a failure of its own.
        var failure = StageFailure()
        return try await finishOuter(&context, frame, at: offset, failure: &failure, next: next) { innerContext, _ in
            try await inner.resume(
                after: innerStop, &innerContext, frame, at: offset + outer.recordSize, next: next)
        }
    }

    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after failure: inout StageFailure, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await finishOuter(&context, frame, at: offset, failure: &failure, next: next) { innerContext, failure in
            try await inner.recover(
                after: &failure, &innerContext, frame, at: offset + outer.recordSize, next: next)
        }
    }

    /// Finishes `outer` once `innerEnd` (the inner stages finishing, on the context narrowed as `outer`
    /// narrows it, with `failure` if they finish a failure) has returned or thrown: as after its `next`
    /// returned or threw.
    @inlinable @inline(__always)
    func finishOuter<Output: Sendable>(
        _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int, failure: inout StageFailure,
        next: (ResilienceContext) async throws -> Output,
        innerEnd: (inout ResilienceContext, inout StageFailure) async throws -> Output
    ) async throws -> Output {
        let received = context.deadline
        outer.narrow(&context, from: frame.start)
        let output: Output
        do {
            output = try await innerEnd(&context, &failure)
        } catch {
            context.deadline = received
            failure.receive(error)
            return try await outer.recover(after: &failure, &context, frame, at: offset) { outerContext in
                try await inner.execute(outerContext, next: next)
            }
        }
        context.deadline = received
        var returned = frame
        outer.exit(context, &returned, at: offset)
        return output
    }
}

extension EitherStrategy: SteppedStage where First: SteppedStage, Second: SteppedStage {
    @inlinable var stageCount: Int {
        switch self {
        case .first(let stage): stage.stageCount
        case .second(let stage): stage.stageCount
        }
    }

    @inlinable var recordSize: Int {
        switch self {
        case .first(let stage): stage.recordSize
        case .second(let stage): stage.recordSize
        }
    }

    @inlinable var runsAsSteps: Bool {
        switch self {
        case .first(let stage): stage.runsAsSteps
        case .second(let stage): stage.runsAsSteps
        }
    }

    @inlinable var narrowsContext: Bool {
        switch self {
        case .first(let stage): stage.narrowsContext
        case .second(let stage): stage.narrowsContext
        }
    }

    @inlinable
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        switch self {
        case .first(let stage): stage.enter(context, &frame, at: offset)
        case .second(let stage): stage.enter(context, &frame, at: offset)
        }
    }

    @inlinable
    func exit(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) {
        switch self {
        case .first(let stage): stage.exit(context, &frame, at: offset)
        case .second(let stage): stage.exit(context, &frame, at: offset)
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
        after stop: StageStop, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        switch self {
        case .first(let stage): try await stage.resume(after: stop, &context, frame, at: offset, next: next)
        case .second(let stage): try await stage.resume(after: stop, &context, frame, at: offset, next: next)
        }
    }

    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after failure: inout StageFailure, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        switch self {
        case .first(let stage): try await stage.recover(after: &failure, &context, frame, at: offset, next: next)
        case .second(let stage): try await stage.recover(after: &failure, &context, frame, at: offset, next: next)
        }
    }
}

/// How a call left the synchronous steps.
@usableFromInline
enum StageEnd: Sendable {
    /// A stage stopped before the operation ran.
    case stopped(StageStop)
    /// The operation threw.
    case operationFailed(any Error)
}

/// What ``StageDriver/run(_:_:_:)`` runs: the steps of one stage or of a whole chain, at the frame's start.
@usableFromInline
protocol StageRunner {
    /// Enters every stage, outermost first.
    func enterAll(_ context: ResilienceContext, _ frame: inout StageFrame) -> StageStop?
    /// Whether ``narrowAll(_:from:)`` changes the context (some stage's ``SteppedStage/narrowsContext``).
    var narrowsAny: Bool { get }
    /// Makes `context` the one the operation gets: every stage's `narrow`, outermost first.
    func narrowAll(_ context: inout ResilienceContext, from start: ResilienceInstant)
    /// Leaves every stage, innermost first, after the operation returned (the first stage that needs the
    /// instant it returned at reads it into the frame for the others).
    func exitAll(_ context: ResilienceContext, _ frame: inout StageFrame)
    /// Finishes a call that left the steps through the stages' `resume` or `recover`, on a copy of the
    /// context the call was given.
    func finish<Output: Sendable>(
        _ end: StageEnd, _ frame: StageFrame, _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output
}

/// A stage (or a composition) is run by its own steps, at offset 0 of the frame; the driver borrows it, so
/// nothing is copied.
extension SteppedStage {
    @inlinable @inline(__always)
    func enterAll(_ context: ResilienceContext, _ frame: inout StageFrame) -> StageStop? {
        enter(context, &frame, at: 0)
    }

    @inlinable @inline(__always)
    var narrowsAny: Bool { narrowsContext }

    @inlinable @inline(__always)
    func narrowAll(_ context: inout ResilienceContext, from start: ResilienceInstant) {
        narrow(&context, from: start)
    }

    @inlinable @inline(__always)
    func exitAll(_ context: ResilienceContext, _ frame: inout StageFrame) {
        exit(context, &frame, at: 0)
    }

    /// Inlined into its caller (a pipeline's `finish` step, the driver of one stage): one async call less for
    /// every failure and wait, and nothing on the success path, which never comes here.
    @inlinable @inline(__always)
    func finish<Output: Sendable>(
        _ end: StageEnd, _ frame: StageFrame, _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var context = context
        switch end {
        case .stopped(let stop): return try await resume(after: stop, &context, frame, at: 0, next: operation)
        case .operationFailed(let error):
            var failure = StageFailure(error)
            return try await recover(after: &failure, &context, frame, at: 0, next: operation)
        }
    }
}

/// The one driver of stepped stages (see the top of this file).
@usableFromInline
enum StageDriver {
    /// Reads the clock once, enters every stage outermost first, awaits `operation` once and leaves every
    /// stage innermost first; a stage that stops or an operation that throws hands over to `runner.finish`.
    /// `runner` is one stage (every built-in stage's `execute(_:next:)`) or a pipeline's box (its chain).
    /// The operation gets `context` itself unless a stage narrows it (then a copy, narrowed).
    @inlinable @inline(__always)
    static func run<Runner: StageRunner, Output: Sendable>(
        _ runner: Runner, _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var frame = StageFrame(start: context.clock.now())
        if let stop = runner.enterAll(context, &frame) {
            return try await runner.finish(.stopped(stop), frame, context, operation)
        }
        var succeeded = true
        // Runs after the output went straight into the caller's return slot (a generic local would cost an
        // allocation on the task's stack when this code is not specialised).
        defer { if succeeded { runner.exitAll(context, &frame) } }
        do {
            guard runner.narrowsAny else { return try await operation(context) }
            var inner = context
            runner.narrowAll(&inner, from: frame.start)
            return try await operation(inner)
        } catch {
            succeeded = false
            return try await runner.finish(.operationFailed(error), frame, context, operation)
        }
    }

    /// The box for `root`, with the steps of its stages when every one of them is a stepped stage and
    /// their records fit the frame. Otherwise its outermost stepped stages (as many as fit the frame) run as
    /// one chain of steps around the box of the rest, and a stage that is not stepped runs through its own
    /// `execute(_:next:)` around the box of the stages inside it: so a fallback, a hedging or a third-party
    /// stage leaves the built-in stages outside it one chain of steps, and those inside it another.
    @inlinable
    static func box<Root: ResilienceStrategy>(for root: Root) -> AnyStrategyBox {
        if let stage = root as? any SteppedStage, fitsFrame(stage) { return steppedBox(stage) }
        guard let chain = root as? any StageChain else { return StrategyBox(root) }
        if let box = chain.steppedOutsideBox(before: nil) { return box }
        let (outermost, inner) = chain.splitOutermost()
        return outerBox(outermost, around: box(for: inner))
    }

    /// Opens the outermost stage's type for its box.
    @inlinable
    static func outerBox<Outermost: ResilienceStrategy>(
        _ outermost: Outermost, around inner: AnyStrategyBox
    ) -> AnyStrategyBox {
        OuterStageBox(outermost, around: inner)
    }

    /// Whether `stage` can run as one chain of steps: none of its stages races a child task, and their
    /// records fit the frame.
    @inlinable
    static func fitsFrame(_ stage: some SteppedStage) -> Bool {
        stage.runsAsSteps && stage.recordSize <= StageFrame.capacity
    }

    /// The box that runs `stage` (one that ``fitsFrame(_:)``) as one chain of steps, around the box of the
    /// stages inside it when it is only the outer part of a chain. Opens the stage type: every stepped stage is
    /// a value type, so it is `Root` itself.
    @inlinable
    static func steppedBox<Stage: SteppedStage>(_ stage: Stage, around inside: AnyStrategyBox? = nil) -> AnyStrategyBox
    {
        StrategyBox(stage, steps: ChainSteps(for: stage), around: inside)
    }

    /// `outer` around `inner`, with both types opened.
    @inlinable
    static func compose<Outer: ResilienceStrategy, Inner: ResilienceStrategy>(
        _ outer: Outer, _ inner: Inner
    ) -> any ResilienceStrategy {
        ComposedStrategy(outer: outer, inner: inner)
    }
}

/// A pipeline's chain of stepped stages behind its type-erased box: the chain's steps as closures
/// specialised for the chain when the pipeline is built. Each takes the box (the stages) as an argument, so
/// none captures anything.
@usableFromInline
struct ChainSteps: Sendable {
    /// Enters every stage, outermost first: `nil` to run the operation, else where and why they stopped.
    @usableFromInline let enter: @Sendable (AnyStrategyBox, ResilienceContext, inout StageFrame) -> StageStop?
    /// Leaves every stage, innermost first, after the operation returned (returns nothing, so that the
    /// success path has no optional stop to check and destroy).
    @usableFromInline let exit: @Sendable (AnyStrategyBox, ResilienceContext, inout StageFrame) -> Void
    /// Whether some stage of the chain narrows the context the operation gets.
    @usableFromInline let narrowsContext: Bool
    /// Narrows the context the operation gets, every stage outermost first (called only when
    /// ``narrowsContext``).
    @usableFromInline let narrow: @Sendable (AnyStrategyBox, inout ResilienceContext, ResilienceInstant) -> Void
    /// Finishes a call that left the steps through the stages' `resume` or `recover`, calling `complete` for
    /// every run of the operation. The stages run with no output of their own (`Void`): `complete` keeps
    /// the operation's.
    @usableFromInline let finish:
        @Sendable (
            StageEnd, AnyStrategyBox, StageFrame, ResilienceContext,
            _ complete: (ResilienceContext) async throws -> Void
        ) async throws -> Void

    @inlinable
    init<Stage: SteppedStage>(for stage: Stage) {
        enter = { box, context, frame in
            unsafeDowncast(box, to: StrategyBox<Stage>.self).root.enterAll(context, &frame)
        }
        exit = { box, context, frame in
            unsafeDowncast(box, to: StrategyBox<Stage>.self).root.exitAll(context, &frame)
        }
        narrowsContext = stage.narrowsContext
        narrow = { box, context, start in
            unsafeDowncast(box, to: StrategyBox<Stage>.self).root.narrowAll(&context, from: start)
        }
        finish = { end, box, frame, context, complete in
            try await unsafeDowncast(box, to: StrategyBox<Stage>.self).root.finish(end, frame, context, complete)
        }
    }
}

/// A pipeline's box runs its chain through its steps (only called when it has them), passed to the driver
/// as is, so nothing is copied or retained per call.
extension AnyStrategyBox: StageRunner {
    @inlinable @inline(__always)
    func enterAll(_ context: ResilienceContext, _ frame: inout StageFrame) -> StageStop? {
        steps.unsafelyUnwrapped.enter(self, context, &frame)
    }

    @inlinable @inline(__always)
    var narrowsAny: Bool { steps.unsafelyUnwrapped.narrowsContext }

    @inlinable @inline(__always)
    func narrowAll(_ context: inout ResilienceContext, from start: ResilienceInstant) {
        steps.unsafelyUnwrapped.narrow(self, &context, start)
    }

    @inlinable @inline(__always)
    func exitAll(_ context: ResilienceContext, _ frame: inout StageFrame) {
        steps.unsafelyUnwrapped.exit(self, context, &frame)
    }

    /// Keeps the output of the operation's run that returned. Not inlined: only failures and waits come here.
    @inlinable @inline(never)
    func finish<Output: Sendable>(
        _ end: StageEnd, _ frame: StageFrame, _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var output: Output?
        try await steps.unsafelyUnwrapped.finish(end, self, frame, context) { inner in
            output = try await operation(inner)
        }
        // Stepped stages return normally only after the operation did.
        guard let output else { throw ResilienceError(.init(rawValue: "no-output"), key: context.key) }
        return output
    }
}
