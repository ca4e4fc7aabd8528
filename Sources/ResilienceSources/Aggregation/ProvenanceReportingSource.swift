import ResilienceCore

/// A ``Source`` that can say where its items came from (a fallback alternative, a cache).
///
/// ``Aggregator`` calls ``fetchResult(_:context:)`` instead of `fetch` for such sources, so its
/// ``SourceReport`` can say "served by a fallback" or "served from cache". ``FallbackSource`` conforms, and
/// keeps such a source's result when it is one of its alternatives, as ``Source/mapItems(_:)`` does.
///
/// ## Contract
/// Everything ``Source`` promises, and `fetchResult(...).items` equals what `fetch` would return.
public protocol ProvenanceReportingSource<Item>: Source {
    /// Fetches the items matching `query`, with their provenance.
    func fetchResult(_ query: SourceQuery, context: ResilienceContext) async throws -> SourceFetchResult<Item>
}

extension Source {
    /// The items for `query` with what the source says about them: a ``ProvenanceReportingSource``'s own
    /// result, otherwise the items as live. Every place that runs a source for a report goes through this.
    func fetchReportingProvenance(
        _ query: SourceQuery, context: ResilienceContext
    ) async throws -> SourceFetchResult<Item> {
        if let reporting = self as? any ProvenanceReportingSource<Item> {
            return try await reporting.fetchResult(query, context: context)
        }
        return SourceFetchResult(items: try await fetch(query, context: context))
    }
}
