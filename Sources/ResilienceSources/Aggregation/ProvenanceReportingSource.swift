import ResilienceCore

/// A ``Source`` that can say where its items came from (a fallback alternative, a cache).
///
/// ``Aggregator`` calls ``fetchResult(_:context:)`` instead of `fetch` for such sources, so its
/// ``SourceReport`` can say "served by a fallback" or "served from cache". ``FallbackSource`` conforms.
///
/// ## Contract
/// Everything ``Source`` promises, and `fetchResult(...).items` equals what `fetch` would return.
public protocol ProvenanceReportingSource<Item>: Source {
    /// Fetches the items matching `query`, with their provenance.
    func fetchResult(_ query: SourceQuery, context: ResilienceContext) async throws -> SourceFetchResult<Item>
}
