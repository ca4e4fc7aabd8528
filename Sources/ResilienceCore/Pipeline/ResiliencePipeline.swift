/// An ordered composition of strategies that executes an operation.
///
/// Feature modules that run operations (a transport, a source, a sync engine) depend on this protocol only;
/// ResiliencePolicies builds concrete pipelines with a result builder, and the composition root hands each
/// key its own.
///
/// ## Contract
/// - Stages run outermost first in ``stages`` order; the operation runs innermost.
/// - A pipeline with no stages calls the operation once with the context unchanged.
/// - Errors that leave the pipeline are either the operation's own or a ``ResilienceError``; cancellation
///   always surfaces as cancellation.
public protocol ResiliencePipeline: Sendable {
    /// Runs `operation` through the stages.
    func execute<Output: Sendable>(
        _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output

    /// The stages, outermost first.
    var stages: [StageDescription] { get }
}

extension ResiliencePipeline {
    /// `retry(…) → circuit-breaker(…) → …`, one line.
    public var pipelineDescription: String {
        stages.isEmpty ? "(no stages)" : stages.map(\.description).joined(separator: " → ")
    }
}

/// A pipeline with no stages: runs the operation once, unchanged. The default where no policy is set.
public struct PassthroughPipeline: ResiliencePipeline {
    /// Creates the pipeline.
    public init() {}

    /// Calls `operation` once.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await operation(context)
    }

    /// No stages.
    public var stages: [StageDescription] { [] }
}

extension ResiliencePipeline where Self == PassthroughPipeline {
    /// A pipeline with no stages.
    public static var passthrough: PassthroughPipeline { PassthroughPipeline() }
}
