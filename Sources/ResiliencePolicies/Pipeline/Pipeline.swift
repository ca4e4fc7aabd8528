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
/// A pipeline is type-erased (it is stored and shared as `any ResiliencePipeline`). When every stage is
/// one of this module's deadline, timeout, retry, breaker and limiter stages, it also keeps a runner
/// specialised for them when it is built (see `PipelineFastPath.swift`, which a reader can skip): the
/// result is the same, only faster. Chains with fallback, hedging or third-party stages run every stage
/// through ``ResilienceStrategy/execute(_:next:)``.
public struct Pipeline: ResiliencePipeline {
    @usableFromInline let box: AnyStrategyBox
    @usableFromInline let runner: FastPathRunner?

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
        box = StrategyBox(root)
        runner = FastPath.runner(for: root)
    }

    /// The stages, outermost first, with their settings: described on demand, so a pipeline kept for each of
    /// many sources holds no description strings.
    public var stages: [StageDescription] { box.stageDescriptions }

    /// Runs `operation` through the stages.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard let runner else { return try await box.execute(context, operation) }
        return try await FastPath.run(runner, context, operation)
    }
}

/// A pipeline's stages behind one reference: described on demand, and run through the generic path when
/// the chain is not output-agnostic.
@usableFromInline
class AnyStrategyBox: @unchecked Sendable {
    @usableFromInline init() {}

    /// The stages, outermost first.
    var stageDescriptions: [StageDescription] { [] }

    /// Runs `operation` through the stages (generic path).
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
    init(_ root: Root) {
        self.root = root
    }

    override var stageDescriptions: [StageDescription] { PipelineBuilder.describe(root) }

    @usableFromInline
    override func execute<Output: Sendable>(
        _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await root.execute(context, next: operation)
    }
}
