import ResilienceCore

/// A source whose items are another source's items, transformed; same id, kind and name.
///
/// An ``Aggregator`` is generic over one item type: map each source's items to it
/// (`csvBoard.mapItems(Job.init)`). Provenance (fallback, cache) passes through when the base reports it.
public struct MappedSource<Base: Source, Item: Sendable>: Source {
    /// The wrapped source.
    public let base: Base
    /// Maps one item; `nil` drops it.
    public let transform: @Sendable (Base.Item) -> Item?

    /// Creates a mapped source.
    ///
    /// - Parameters:
    ///   - base: The wrapped source.
    ///   - transform: Maps one item; `nil` drops it.
    public init(_ base: Base, transform: @escaping @Sendable (Base.Item) -> Item?) {
        self.base = base
        self.transform = transform
    }

    /// The base's id.
    public var id: SourceID { base.id }
    /// The base's kind.
    public var kind: SourceKind { base.kind }
    /// The base's name.
    public var displayName: String { base.displayName }

    /// The base's items, transformed.
    public func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [Item] {
        try await base.fetch(query, context: context).compactMap(transform)
    }
}

extension MappedSource: ProvenanceReportingSource where Base: ProvenanceReportingSource {
    /// The base's result, items transformed, provenance kept.
    public func fetchResult(_ query: SourceQuery, context: ResilienceContext) async throws -> SourceFetchResult<Item> {
        try await base.fetchResult(query, context: context).mapItems(transform)
    }
}

extension Source {
    /// This source with its items transformed by `transform` (`nil` drops an item).
    public func mapItems<Mapped: Sendable>(
        _ transform: @escaping @Sendable (Item) -> Mapped?
    ) -> MappedSource<
        Self, Mapped
    > {
        MappedSource(self, transform: transform)
    }
}
