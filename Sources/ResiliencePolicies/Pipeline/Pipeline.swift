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
public struct Pipeline: ResiliencePipeline {
    private let root: any ResilienceStrategy
    /// The stages, outermost first, with their settings.
    public let stages: [StageDescription]

    /// Builds a pipeline from stages listed outermost first.
    public init(@PipelineBuilder _ build: () -> some ResilienceStrategy) {
        self.init(root: build())
    }

    /// Wraps one (possibly composed) stage.
    public init(root: some ResilienceStrategy) {
        self.root = root
        stages = PipelineBuilder.describe(root)
    }

    /// Runs `operation` through the stages.
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await root.execute(context, next: operation)
    }
}
