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
