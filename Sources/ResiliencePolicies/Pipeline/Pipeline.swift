/// A ``ResiliencePipeline`` built from stages with ``PipelineBuilder``.
///
/// Stages run outermost first. The recommended order (ARCHITECTURE.md, Polly's standard handler):
/// total deadline → fallback → retry (with budget) → circuit breaker → rate limiter / bulkhead →
/// per-attempt timeout → transport.
///
/// ```swift
/// let pipeline = Pipeline {
///     TotalDeadlineStrategy(.seconds(30))
///     RetryStrategy(policy: CategoryRetryPolicy.standard, budget: RetryBudget(clock: clock))
///     TimeoutStrategy(.seconds(10))
/// }
/// let jobs = try await pipeline.execute(context) { context in try await source.fetch(query, context) }
/// print(pipeline.pipelineDescription)
/// ```
///
/// The stages are one nested value; running the pipeline allocates no closures or arrays per call.
///
/// A pipeline is type-erased (it is stored and shared as `any ResiliencePipeline`). This module's deadline,
/// timeout, retry, breaker and limiter stages are written as synchronous steps around one call of the
/// operation; when every stage of a pipeline is one of them, a call runs the whole chain's steps at once,
/// specialised for them when the pipeline is built (`StageDriver.swift`), exactly as each stage's own
/// ``ResilienceStrategy/execute(_:next:)`` runs its steps. A fallback, hedging or third-party stage runs
/// through its own ``ResilienceStrategy/execute(_:next:)``; the built-in stages outside it run as one chain
/// of steps around it, and those inside it as another.
public struct Pipeline: ResiliencePipeline {
    @usableFromInline let box: AnyStrategyBox
    /// The stages without their chaos outcome stages, for the calls that all of those pass through
    /// (`ChaosElision.swift`); `nil` when there are none, or a stage has no such form.
    @usableFromInline let withoutChaosOutcomes: ChaosOutcomeElision?

    /// Builds a pipeline from stages listed outermost first.
    ///
    /// - Parameter build: The stages, outermost first (`if`, `if`/`else` and `#if` choose stages).
    @inlinable
    public init(@PipelineBuilder _ build: () -> some ResilienceStrategy) {
        self.init(root: build())
    }

    /// Wraps one (possibly composed) stage.
    ///
    /// - Parameter root: The stage; a ``ComposedStrategy`` for several.
    @inlinable
    public init(root: some ResilienceStrategy) {
        box = StageDriver.box(for: root)
        withoutChaosOutcomes = ChaosOutcomeElision.make(for: root)
    }

    /// The stages, outermost first, with their settings: described on demand, so a pipeline kept for each of
    /// many sources holds no description strings.
    public var stages: [StageDescription] { box.stageDescriptions }

    // Always inlined, so the protocol witness behind `any ResiliencePipeline` runs this body in its own frame
    // instead of calling it as one more async function (the `any ResiliencePipeline` row of Docs/Performance.md).
    /// Runs `operation` through the stages.
    @inlinable @inline(__always)
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        // Two branches, each an inlined `run`: picking the box into a variable first costs every pipeline a
        // retain of it on every call (measured: 8 ns on the five stages); binding the form with `if let` retains it.
        if withoutChaosOutcomes?.passes(Output.self) == true {
            return try await withoutChaosOutcomes.unsafelyUnwrapped.box.run(context, operation)
        }
        return try await box.run(context, operation)
    }
}

/// A pipeline's stages behind one reference: described on demand, and run as one chain of steps when every
/// stage is a stepped stage. Otherwise the stepped stages outside the first stage that is not one run as one
/// chain of steps around the box of the rest (``around``), and a stage that is not stepped runs through its own
/// `execute(_:next:)` (``StrategyBox``, or ``OuterStageBox`` around the box of the stages inside it).
@usableFromInline
class AnyStrategyBox: @unchecked Sendable {
    /// The chain's synchronous steps, when its stages (or its outermost ones, see ``around``) are stepped
    /// stages (`StageDriver.swift`).
    @usableFromInline let steps: ChainSteps?
    /// The box of the stages inside ``steps`` when the steps are only the outermost stages of the chain: the
    /// steps run it as their operation. `nil` when the steps are the whole chain.
    @usableFromInline let around: AnyStrategyBox?
    /// An object that lives as long as the pipeline: the ``PresetScope`` whose parts a preset pipeline uses, so
    /// that ``PresetScopes``, which holds scopes weakly, hands the same scope to the next key of its host. Set
    /// once, before the pipeline is shared.
    final var keptAlive: AnyObject?

    @usableFromInline
    init(steps: ChainSteps?, around: AnyStrategyBox? = nil) {
        self.steps = steps
        self.around = around
    }

    /// The stages, outermost first.
    var stageDescriptions: [StageDescription] { [] }

    /// Runs `operation` through the stages: as one chain of steps when there are steps (around the box inside
    /// them, when there is one), else through ``execute(_:_:)``. What a ``Pipeline`` runs, and what the stage
    /// around an ``OuterStageBox``'s inner box calls as its `next`.
    @inlinable @inline(__always)
    final func run<Output: Sendable>(
        _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard steps != nil else { return try await execute(context, operation) }
        guard let around else { return try await StageDriver.run(self, context, operation) }
        return try await run(around: around, context, operation)
    }

    /// Runs the steps with the box inside them as their operation. Not inlined into ``run(_:_:)``, which the
    /// box inside runs in turn.
    @inlinable @inline(never)
    final func run<Output: Sendable>(
        around inside: AnyStrategyBox, _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await StageDriver.run(self, context) { context in try await inside.run(context, operation) }
    }

    /// Runs `operation` through each stage's `execute(_:next:)`.
    @usableFromInline
    func execute<Output: Sendable>(
        _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await operation(context)
    }
}

/// The concrete box: `Root` is immutable and `Sendable`, which makes the box safe to share.
@usableFromInline
final class StrategyBox<Root: ResilienceStrategy>: AnyStrategyBox, @unchecked Sendable {
    @usableFromInline let root: Root

    @usableFromInline
    init(_ root: Root, steps: ChainSteps? = nil, around: AnyStrategyBox? = nil) {
        self.root = root
        super.init(steps: steps, around: around)
    }

    override var stageDescriptions: [StageDescription] {
        PipelineBuilder.describe(root) + (around?.stageDescriptions ?? [])
    }

    @usableFromInline
    override func execute<Output: Sendable>(
        _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await root.execute(context, next: operation)
    }
}

/// A stage that is not a stepped stage (or a chain that is not all stepped stages) around the box of the
/// stages inside it: it runs through its own `execute(_:next:)`, and its `next` runs the inner box, as one
/// chain of steps when the inner stages are.
@usableFromInline
final class OuterStageBox<Outermost: ResilienceStrategy>: AnyStrategyBox, @unchecked Sendable {
    @usableFromInline let outermost: Outermost
    @usableFromInline let inner: AnyStrategyBox

    @usableFromInline
    init(_ outermost: Outermost, around inner: AnyStrategyBox) {
        self.outermost = outermost
        self.inner = inner
        super.init(steps: nil)
    }

    override var stageDescriptions: [StageDescription] {
        PipelineBuilder.describe(outermost) + inner.stageDescriptions
    }

    @usableFromInline
    override func execute<Output: Sendable>(
        _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await outermost.execute(context) { context in try await inner.run(context, operation) }
    }
}

/// A composition that can be split: how a ``Pipeline`` finds the stepped stages outside a stage that is not a
/// stepped stage, and the stages inside it.
@usableFromInline
protocol StageChain {
    /// The outermost stage, and the stages inside it as one composition.
    func splitOutermost() -> (outermost: any ResilienceStrategy, inner: any ResilienceStrategy)

    /// The box of this chain's outermost stepped stages (the longest run of them whose records fit the frame)
    /// as one chain of steps around the box of the rest of the chain followed by `tail` (the stages after this
    /// chain, when it is the outer part of a larger one); `nil` when the outermost stage is not a stepped stage.
    func steppedOutsideBox(before tail: (any ResilienceStrategy)?) -> AnyStrategyBox?
}

extension ComposedStrategy: StageChain {
    // Inlinable, so that a pipeline built from known stages (a chain of built-in stages with a third-party stage
    // innermost, say) gets the outer stages' steps specialised, as an all-stepped chain's are.
    @inlinable
    func steppedOutsideBox(before tail: (any ResilienceStrategy)?) -> AnyStrategyBox? {
        if let steps = outer as? any SteppedStage, StageDriver.fitsFrame(steps) {
            let inside =
                if let tail { StageDriver.box(for: StageDriver.compose(inner, tail)) } else {
                    StageDriver.box(for: inner)
                }
            return StageDriver.steppedBox(steps, around: inside)
        }
        guard let chain = outer as? any StageChain else { return nil }
        return chain.steppedOutsideBox(before: tail.map { StageDriver.compose(inner, $0) } ?? inner)
    }

    /// `outer`'s own outermost stage when `outer` is a composition (the builder nests to the left), with the
    /// rest of `outer` nested around `inner`; else `outer` and `inner`.
    @usableFromInline
    func splitOutermost() -> (outermost: any ResilienceStrategy, inner: any ResilienceStrategy) {
        guard let chain = outer as? any StageChain else { return (outer, inner) }
        let (outermost, rest) = chain.splitOutermost()
        return (outermost, StageDriver.compose(rest, inner))
    }
}

/// Composes stages, outermost first, into one nested strategy.
///
/// ```swift
/// let pipeline = Pipeline {
///     TotalDeadlineStrategy(.seconds(30))
///     RetryStrategy(policy: .standard)
///     TimeoutStrategy(.seconds(10))
/// }
/// ```
/// Supports `if`, `if`/`else` and `#if` for stages chosen at build time.
@resultBuilder
public enum PipelineBuilder {
    /// An empty pipeline.
    public static func buildBlock() -> EmptyStrategy { EmptyStrategy() }

    /// The first stage.
    public static func buildPartialBlock<First: ResilienceStrategy>(first: First) -> First { first }

    /// The next stage, nested inside the ones before it.
    public static func buildPartialBlock<Accumulated: ResilienceStrategy, Next: ResilienceStrategy>(
        accumulated: Accumulated, next: Next
    ) -> ComposedStrategy<Accumulated, Next> {
        ComposedStrategy(outer: accumulated, inner: next)
    }

    /// An `if` without `else`.
    public static func buildOptional<Stage: ResilienceStrategy>(_ stage: Stage?) -> EitherStrategy<Stage, EmptyStrategy>
    {
        stage.map { .first($0) } ?? .second(EmptyStrategy())
    }

    /// The `if` branch of an `if`/`else`.
    public static func buildEither<First: ResilienceStrategy, Second: ResilienceStrategy>(
        first: First
    )
        -> EitherStrategy<First, Second>
    {
        .first(first)
    }

    /// The `else` branch of an `if`/`else`.
    public static func buildEither<First: ResilienceStrategy, Second: ResilienceStrategy>(
        second: Second
    )
        -> EitherStrategy<First, Second>
    {
        .second(second)
    }

    /// `#if` blocks.
    public static func buildLimitedAvailability<Stage: ResilienceStrategy>(_ stage: Stage) -> Stage { stage }

    /// The stages `stage` stands for, outermost first.
    public static func describe(_ stage: some ResilienceStrategy) -> [StageDescription] {
        if let list = stage as? any StageListProviding { return list.stageDescriptions }
        return [stage.stageDescription]
    }
}

/// Two stages nested: ``outer`` runs ``inner``, which runs the operation. Built by ``PipelineBuilder``.
///
/// Nesting generic values instead of storing an array of closures keeps a pipeline's success path free of
/// allocations: the whole chain is one value known to the compiler.
public struct ComposedStrategy<Outer: ResilienceStrategy, Inner: ResilienceStrategy>: ResilienceStrategy {
    // `inner` is stored first on purpose: the closure that runs it is compiled generically inside a type-erased
    // `Pipeline`, and a field at offset zero is reached without looking up this type's generic metadata.
    /// The inner stage.
    public var inner: Inner
    /// The outer stage.
    public var outer: Outer

    /// Nests `inner` inside `outer`.
    ///
    /// - Parameters:
    ///   - outer: The stage that runs first; its `next` runs `inner`.
    ///   - inner: The stage `outer` calls, which runs the operation (or the next nested stage).
    public init(outer: Outer, inner: Inner) {
        self.outer = outer
        self.inner = inner
    }

    /// Runs `outer` around `inner` around `next`.
    @inlinable @inline(__always)
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await outer.execute(context) { outerContext in
            try await inner.execute(outerContext, next: next)
        }
    }

    /// The outer stage's description (the full list is ``stageDescriptions``).
    public var stageDescription: StageDescription { outer.stageDescription }
}

/// A stage that is really several stages (a composition), able to list them outermost first.
public protocol StageListProviding {
    /// The stages, outermost first.
    var stageDescriptions: [StageDescription] { get }
}

extension ComposedStrategy: StageListProviding {
    /// The outer stages followed by the inner ones.
    public var stageDescriptions: [StageDescription] {
        PipelineBuilder.describe(outer) + PipelineBuilder.describe(inner)
    }
}

/// A stage that does nothing: an empty pipeline, or an `if` without `else` whose condition was false.
public struct EmptyStrategy: ResilienceStrategy, StageListProviding {
    /// Creates the stage.
    public init() {}

    /// Calls `next` once.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await next(context)
    }

    /// `passthrough`.
    public var stageDescription: StageDescription { StageDescription(name: "passthrough") }
    /// No stages.
    public var stageDescriptions: [StageDescription] { [] }
}

/// One of two stages, chosen when the pipeline was built (`if`/`else` in a ``PipelineBuilder``).
public enum EitherStrategy<First: ResilienceStrategy, Second: ResilienceStrategy>: ResilienceStrategy,
    StageListProviding
{
    /// The `if` branch.
    case first(First)
    /// The `else` branch.
    case second(Second)

    /// Runs the chosen stage.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        switch self {
        case .first(let stage): try await stage.execute(context, next: next)
        case .second(let stage): try await stage.execute(context, next: next)
        }
    }

    /// The chosen stage's description.
    public var stageDescription: StageDescription {
        switch self {
        case .first(let stage): stage.stageDescription
        case .second(let stage): stage.stageDescription
        }
    }

    /// The chosen stage's list.
    public var stageDescriptions: [StageDescription] {
        switch self {
        case .first(let stage): PipelineBuilder.describe(stage)
        case .second(let stage): PipelineBuilder.describe(stage)
        }
    }
}
