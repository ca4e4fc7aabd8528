import ResilienceCore

/// A source that tries an ordered list of alternatives until one delivers: API → RSS for
/// dual-source companies, primary → backup, full query → simplified query (last good results from a
/// cache are served by the ``Aggregator``, not by a chain).
///
/// It records which alternative served (``SourceFetchResult/servedBy``, a `fallback-used` event) so the
/// ``Aggregator`` reports "served by a fallback". Cancellation is never answered with a fallback: it is
/// rethrown at once. When every alternative fails it throws ``ResilienceError`` with code
/// `fallbackExhausted` whose `underlying` is the primary's failure.
///
/// ```swift
/// let acme = FallbackSource(
///     id: "acme", displayName: "Acme",
///     alternatives: [.source(acmeAPI, name: "api"), .source(acmeRSS, name: "rss")])
/// ```
public struct FallbackSource<Item: Sendable>: ProvenanceReportingSource {
    /// The stable identifier.
    public let id: SourceID
    /// The kind (the primary's kind unless given).
    public let kind: SourceKind
    /// A name for people.
    public let displayName: String
    /// The alternatives, primary first.
    public let alternatives: [Alternative]
    /// Whether a failure may be answered by the next alternative; by default everything except cancellation.
    public let shouldFallBack: @Sendable (FailureClassification) -> Bool

    /// Creates a fallback chain.
    ///
    /// - Parameters:
    ///   - id: The stable identifier.
    ///   - kind: The kind. Default: `"fallback"`.
    ///   - displayName: A name for people; the identifier's raw value when `nil`.
    ///   - alternatives: The alternatives, primary first.
    ///   - shouldFallBack: Whether a failure may be answered by the next alternative; by default everything except
    ///     cancellation.
    public init(
        id: SourceID, kind: SourceKind = "fallback", displayName: String? = nil,
        alternatives: [Alternative],
        shouldFallBack: @escaping @Sendable (FailureClassification) -> Bool = { _ in true }
    ) {
        self.id = id
        self.kind = kind
        self.displayName = displayName ?? id.rawValue
        self.alternatives = alternatives
        self.shouldFallBack = shouldFallBack
    }

    /// Creates a chain whose primary is `primary` and whose id, kind and name are the primary's.
    ///
    /// - Parameters:
    ///   - primary: The first alternative (named `"primary"`); the chain takes its id, kind and display name.
    ///   - fallbacks: The alternatives tried after the primary, in order.
    ///   - shouldFallBack: Whether a failure may be answered by the next alternative; by default everything except
    ///     cancellation.
    public init(
        primary: some Source<Item>, fallbacks: [Alternative],
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
    ///
    /// Under a deadline, each alternative but the last may take only its share of the time left (the time left
    /// divided by the alternatives left, itself included) and is cancelled at the end of it: a primary that
    /// hangs fails as a timeout in time for the alternatives after it, instead of taking the whole deadline
    /// with it. The last alternative has all the time that is left.
    public func fetchResult(_ query: SourceQuery, context: ResilienceContext) async throws -> SourceFetchResult<Item> {
        var primaryFailure: FailureClassification?
        for (index, alternative) in alternatives.enumerated() {
            try Task.checkCancellation()
            do {
                var result = try await Self.fetch(
                    alternative, query, context: context, alternativesLeft: alternatives.count - index)
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

    /// Runs `alternative` within its share of the time left before `context`'s deadline: all of it when it is
    /// the last alternative or there is no deadline, else the time left divided by `alternativesLeft`, enforced
    /// on the context's clock (a timeout, ``DeadlineExceededError``, when the share runs out first).
    private static func fetch(
        _ alternative: Alternative, _ query: SourceQuery, context: ResilienceContext, alternativesLeft: Int
    ) async throws -> SourceFetchResult<Item> {
        guard alternativesLeft > 1, let deadline = context.deadline else {
            return try await alternative.fetch(query, context)
        }
        let now = context.clock.now()
        let share = now.advanced(by: now.duration(to: deadline) / alternativesLeft)
        guard share < deadline else { return try await alternative.fetch(query, context) }
        var narrowed = context
        narrowed.narrowDeadline(to: share)
        return try await withDeadline(until: share, clock: context.clock) { [narrowed] in
            try await alternative.fetch(query, narrowed)
        }
    }
}

extension FallbackSource {
    /// One alternative in a ``FallbackSource``: a name for reports and a way to fetch.
    ///
    /// Serving last good results from a cache is not an alternative here: the ``Aggregator`` does it for
    /// every source registered with `usesCache` (``SourceCache``), the one place cache fallback lives.
    public struct Alternative: Sendable {
        /// The name reports and `fallback-used` events show (`"rss"`, `"backup"`).
        public var name: String
        /// Fetches the items.
        public var fetch: @Sendable (SourceQuery, ResilienceContext) async throws -> SourceFetchResult<Item>

        /// Creates an alternative from a closure.
        ///
        /// - Parameters:
        ///   - name: The name reports and `fallback-used` events show.
        ///   - fetch: Fetches the items; throw to let the next alternative try.
        public init(
            name: String,
            fetch: @escaping @Sendable (SourceQuery, ResilienceContext) async throws -> SourceFetchResult<Item>
        ) {
            self.name = name
            self.fetch = fetch
        }

        /// Another source (primary → backup, API → RSS); what a ``ProvenanceReportingSource`` says about its
        /// items (served from a cache, stale, its freshness) is kept.
        public static func source(_ source: some Source<Item>, name: String? = nil) -> Self {
            Alternative(name: name ?? source.id.rawValue) { query, context in
                try await source.fetchReportingProvenance(query, context: context)
            }
        }

        /// The same or another source with a simplified query (full query → simplified query). When `simplify`
        /// returns `nil` or the same query, the alternative is not applicable and fails with the primary's error.
        public static func simplifiedQuery(
            _ source: some Source<Item>, name: String = "simplified-query",
            simplify: @escaping @Sendable (SourceQuery) -> SourceQuery?
        ) -> Self {
            Alternative(name: name) { query, context in
                guard let simpler = simplify(query), simpler != query else { throw FallbackNotApplicable() }
                return try await source.fetchReportingProvenance(simpler, context: context)
            }
        }

        /// A simplified query: drops the filters and keeps the text and limit.
        public static func droppingFilters(_ query: SourceQuery) -> SourceQuery? {
            query.filters.isEmpty ? nil : SourceQuery(text: query.text, limit: query.limit)
        }
    }
}

/// Thrown by an alternative that does not apply (nothing to simplify); never reported itself.
struct FallbackNotApplicable: Error {}
