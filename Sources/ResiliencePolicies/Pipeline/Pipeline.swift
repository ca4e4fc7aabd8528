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
/// A pipeline is type-erased (it is stored and shared as `any ResiliencePipeline`), and Swift cannot
/// specialise generic code behind an existential for every output type. So when every stage treats the
/// operation's output as opaque (deadlines, timeouts, retry, breaker, limiter: ``OutputAgnosticStrategy``),
/// the pipeline also keeps a runner specialised for its stages when it is built, and passes the output
/// around the stages rather than through them. Chains with fallback, hedging or third-party stages run
/// through the generic path.
public struct Pipeline: ResiliencePipeline {
    @usableFromInline let box: AnyStrategyBox
    @usableFromInline let runner: OutputAgnosticRunner?

    /// Builds a pipeline from stages listed outermost first.
    @inlinable
    public init(@PipelineBuilder _ build: () -> some ResilienceStrategy) {
        self.init(root: build())
    }

    /// Wraps one (possibly composed) stage.
    @inlinable
    public init(root: some ResilienceStrategy) {
        let box = StrategyBox(root)
        self.box = box
        if root is any OutputAgnosticStrategy {
            runner = { (context: ResilienceContext, operation: (ResilienceContext) async throws -> Void) in
                try await box.root.execute(context, next: operation)
            }
        } else {
            runner = nil
        }
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
        guard context.knownNow == nil else {
            // A context handed down from an enclosing execution carries that execution's instant: drop it.
            var fresh = context
            fresh.knownNow = nil
            return try await run(fresh, operation)
        }
        return try await run(context, operation)
    }

    @inlinable
    func run<Output: Sendable>(
        _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard let runner else { return try await box.execute(context, operation) }
        var output: Output?
        try await runner(context) { inner in output = try await operation(inner) }
        // Output-agnostic stages return normally only after the operation did.
        guard let output else { throw ResilienceError(.init(rawValue: "no-output"), key: context.key) }
        return output
    }
}

/// Runs an output-agnostic stage chain, specialised for its stages, around an operation that stores its
/// own output.
@usableFromInline
typealias OutputAgnosticRunner =
    @Sendable (ResilienceContext, (ResilienceContext) async throws -> Void) async throws -> Void

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
