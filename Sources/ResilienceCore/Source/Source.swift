/// Fetches items for a query from one place: a JSON API, a feed, a third-party service.
///
/// ## Contract
/// - ``id`` is stable across launches; it keys the source's pipeline, cache and telemetry.
/// - `fetch` returns the items, possibly none when the source truly has none. **A failure is thrown, never
///   returned as an empty array** (an empty list that hides a failure tells the person "no results" when the
///   truth is "could not look"); throw errors a classifier recognises,
///   ideally ``ClassifiedError``s.
/// - `fetch` is cancellation-correct: when the task is cancelled it stops promptly and throws a
///   cancellation error; it honours `context.deadline`.
/// - `fetch` does not retry or break circuits itself: the pipeline the aggregator runs it through does.
///
/// ResilienceTesting's `SourceConformance` kit checks these rules.
public protocol Source<Item>: Sendable {
    /// The items this source produces.
    associatedtype Item: Sendable

    /// The stable identifier.
    var id: SourceID { get }
    /// The kind of source.
    var kind: SourceKind { get }
    /// A name for people (`"Acme (Greenhouse)"`).
    var displayName: String { get }

    /// Fetches the items matching `query`.
    func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [Item]
}
