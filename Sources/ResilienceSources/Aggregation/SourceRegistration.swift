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
        if let reporting = source as? any ProvenanceReportingSource<Item> {
            fetch = { query, context in try await reporting.fetchResult(query, context: context) }
        } else {
            fetch = { query, context in SourceFetchResult(items: try await source.fetch(query, context: context)) }
        }
    }
}
