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
