import ResilienceCore

/// One source as registered in an ``Aggregator``: how to fetch it, through which pipeline, under which
/// deadline. Small by design (a few hundred bytes), so thousands of sources cost little.
public struct SourceRegistration<Item: Sendable>: Sendable {
    /// The source's id.
    public let id: SourceID
    /// Its kind.
    public let kind: SourceKind
    /// Its name for people.
    public let displayName: String
    /// The pipeline each fetch runs through.
    public var pipeline: any ResiliencePipeline
    /// Its deadline, overriding the aggregator's ``AggregatorConfiguration/sourceTimeout``.
    public var timeout: Duration?
    /// Whether its results are cached and served from cache on failure.
    public var usesCache: Bool
    let fetch: @Sendable (SourceQuery, ResilienceContext) async throws -> SourceFetchResult<Item>

    /// Registers `source` (a ``ProvenanceReportingSource`` reports where its items came from).
    ///
    /// - Parameters:
    ///   - source: The source.
    ///   - pipeline: The pipeline each fetch runs through (inside the source's deadline).
    ///   - timeout: The source's deadline, overriding the aggregator's; `nil` to use the aggregator's.
    ///   - usesCache: Whether its results are cached and served from cache on failure.
    public init(
        _ source: some Source<Item>, pipeline: any ResiliencePipeline = PassthroughPipeline(),
        timeout: Duration? = nil, usesCache: Bool = true
    ) {
        id = source.id
        kind = source.kind
        displayName = source.displayName
        self.pipeline = pipeline
        self.timeout = timeout
        self.usesCache = usesCache
        fetch = { query, context in try await source.fetchReportingProvenance(query, context: context) }
    }

    /// The pipeline a fetch runs through: ``pipeline`` inside this source's deadline (``timeout``, else
    /// `defaultTimeout`) as the outermost stage, enforced so that a source which ignores its deadline is
    /// cancelled when the time is up.
    public func pipeline(defaultTimeout: Duration?) -> any ResiliencePipeline {
        guard let limit = timeout ?? defaultTimeout else { return pipeline }
        return SourceDeadlinePipeline(deadline: ResilienceDeadline(limit, isEnforced: true), inner: pipeline)
    }
}

/// A source's pipeline with the source's deadline as its outermost stage.
struct SourceDeadlinePipeline: ResiliencePipeline {
    let deadline: ResilienceDeadline
    let inner: any ResiliencePipeline

    func execute<Output: Sendable>(
        _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await deadline.run(context) { context in try await inner.execute(context, operation) }
    }

    /// `source-deadline(limit: 15 seconds, mode: enforced)` followed by the source's own stages.
    var stages: [StageDescription] {
        [
            StageDescription(
                name: "source-deadline", settings: [.init("limit", "\(deadline.limit)"), .init("mode", "enforced")])
        ]
            + inner.stages
    }
}
