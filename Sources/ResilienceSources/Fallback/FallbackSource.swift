import ResilienceCore

/// A source that tries an ordered list of alternatives until one delivers: API → RSS for
/// dual-source companies, primary → backup, live → cache, full query → simplified query.
///
/// It records which alternative served (``SourceFetchResult/servedBy``, a `fallback-used` event) so the
/// ``Aggregator`` reports "served by a fallback". Cancellation is never answered with a fallback: it is
/// rethrown at once. When every alternative fails it throws ``ResilienceError`` with code
/// `fallbackExhausted` whose `underlying` is the primary's failure.
///
/// ```swift
/// let acme = FallbackSource(
///     id: "acme", displayName: "Acme",
///     alternatives: [.source(acmeAPI, name: "api"), .source(acmeRSS, name: "rss"), .cache(cache, for: "acme")])
/// ```
public struct FallbackSource<Item: Sendable>: ProvenanceReportingSource {
    /// The stable identifier.
    public let id: SourceID
    /// The kind (the primary's kind unless given).
    public let kind: SourceKind
    /// A name for people.
    public let displayName: String
    /// The alternatives, primary first.
    public let alternatives: [FallbackAlternative<Item>]
    /// Whether a failure may be answered by the next alternative; by default everything except cancellation.
    public let shouldFallBack: @Sendable (FailureClassification) -> Bool

    /// Creates a fallback chain.
    public init(
        id: SourceID, kind: SourceKind = "fallback", displayName: String? = nil,
        alternatives: [FallbackAlternative<Item>],
        shouldFallBack: @escaping @Sendable (FailureClassification) -> Bool = { _ in true }
    ) {
        self.id = id
        self.kind = kind
        self.displayName = displayName ?? id.rawValue
        self.alternatives = alternatives
        self.shouldFallBack = shouldFallBack
    }

    /// Creates a chain whose primary is `primary` and whose id, kind and name are the primary's.
    public init(
        primary: some Source<Item>, fallbacks: [FallbackAlternative<Item>],
        shouldFallBack: @escaping @Sendable (FailureClassification) -> Bool = { _ in true }
    ) {
        self.init(
            id: primary.id, kind: primary.kind, displayName: primary.displayName,
            alternatives: [.source(primary, name: "primary")] + fallbacks, shouldFallBack: shouldFallBack)
    }

    /// The items of the first alternative that delivers.
    public func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [Item] {
        try await fetchResult(query, context: context).items
    }

    /// The items of the first alternative that delivers, and which one it was.
    public func fetchResult(_ query: SourceQuery, context: ResilienceContext) async throws -> SourceFetchResult<Item> {
        var primaryFailure: FailureClassification?
        for (index, alternative) in alternatives.enumerated() {
            try Task.checkCancellation()
            do {
                var result = try await alternative.fetch(query, context)
                if index > 0 {
                    result.servedBy = alternative.name
                    context.emit(.fallbackUsed) { event in
                        event.detail = alternative.name
                        event.classification = primaryFailure
                    }
                }
                return result
            } catch is FallbackNotApplicable {
                continue
            } catch {
                let classification = context.classify(error)
                if classification.category == .cancelled || Task.isCancelled { throw error }
                if primaryFailure == nil { primaryFailure = classification }
                if !shouldFallBack(classification) {
                    if index == 0 { throw error }
                    break
                }
            }
        }
        throw ResilienceError(.fallbackExhausted, key: id.rawValue, underlying: primaryFailure ?? .unknown)
    }
}
