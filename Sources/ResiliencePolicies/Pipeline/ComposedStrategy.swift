/// Two stages nested: ``outer`` runs ``inner``, which runs the operation. Built by ``PipelineBuilder``.
///
/// Nesting generic values instead of storing an array of closures keeps a pipeline's success path free of
/// allocations: the whole chain is one value known to the compiler.
public struct ComposedStrategy<Outer: ResilienceStrategy, Inner: ResilienceStrategy>: ResilienceStrategy {
    /// The outer stage.
    public var outer: Outer
    /// The inner stage.
    public var inner: Inner

    /// Nests `inner` inside `outer`.
    public init(outer: Outer, inner: Inner) {
        self.outer = outer
        self.inner = inner
    }

    /// Runs `outer` around `inner` around `next`.
    @inlinable
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
