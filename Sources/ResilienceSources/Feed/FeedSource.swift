import Foundation
import ResilienceCore

/// A ``Source`` reading an RSS or Atom feed over an injected ``HTTPTransport``.
///
/// Fetches are conditional, as feed readers make them, when the transport is an HTTP cache (the
/// composition root's transport is; otherwise wrap yours in `CachingTransport` from ResilienceTransport):
/// the cache sends the `ETag` and `Last-Modified` of the stored response as `If-None-Match` /
/// `If-Modified-Since`, and a `304 Not Modified` is answered with the stored feed, parsed as fresh. A feed the
/// cache answers stale (its `Cache-Status` says so, for instance within `stale-if-error` while the publisher
/// is down) is reported with ``SourceFetchResult/isStale`` and its age in ``SourceFetchResult/cacheAge``.
/// The response's `Cache-Control` (`max-age`, `stale-if-error`) is reported as the result's
/// ``SourceFetchResult/freshness`` so a ``SourceCache`` serves the items no longer than the publisher
/// allows. The body is parsed with the response's `Content-Type` charset and its URL as the base for relative
/// links.
///
/// Non-2xx responses throw ``HTTPStatusError`` (a classifier decides what they mean); bodies that are not a
/// well-formed, bounded feed throw ``FeedError``. Never returns an empty
/// list for a failure. Feeds have no
/// server-side search, so a non-empty `query.text` filters items whose title or summary contains it
/// (case- and diacritic-insensitive) unless ``filtersByQueryText`` is off; `query.limit` caps the count.
///
/// ```swift
/// let feed = FeedSource(id: "acme-rss", displayName: "Acme (RSS)", url: feedURL, transport: transport)
/// let jobs = FeedSource(id: "acme-rss", url: feedURL, transport: transport) { item in Job(item) }
/// ```
public struct FeedSource<Item: Sendable>: ProvenanceReportingSource {
    /// The stable identifier.
    public let id: SourceID
    /// ``SourceKind/feed``.
    public let kind: SourceKind
    /// A name for people.
    public let displayName: String
    /// Sends the request.
    public let transport: any HTTPTransport
    /// Builds the request for a query.
    public let request: @Sendable (SourceQuery) throws -> HTTPRequest
    /// The hardened parser.
    public let parser: FeedParser
    /// Whether a non-empty query text filters items client-side.
    public let filtersByQueryText: Bool
    /// Maps a feed item to the caller's item; `nil` drops it.
    public let transform: @Sendable (FeedItem) -> Item?
    private let pollingHints = FeedPollingHints()

    /// Creates a feed source with a request builder and an item mapping.
    /// - Parameters:
    ///   - id: The stable identifier.
    ///   - kind: The kind of source.
    ///   - displayName: A name for people (defaults to the id).
    ///   - transport: Sends the request.
    ///   - parser: The parser and its limits.
    ///   - filtersByQueryText: Whether a non-empty query text filters items client-side.
    ///   - request: Builds the request for a query.
    ///   - transform: Maps a feed item to the caller's item; `nil` drops it.
    public init(
        id: SourceID, kind: SourceKind = .feed, displayName: String? = nil, transport: any HTTPTransport,
        parser: FeedParser = FeedParser(), filtersByQueryText: Bool = true,
        request: @escaping @Sendable (SourceQuery) throws -> HTTPRequest,
        transform: @escaping @Sendable (FeedItem) -> Item?
    ) {
        self.id = id
        self.kind = kind
        self.displayName = displayName ?? id.rawValue
        self.transport = transport
        self.parser = parser
        self.filtersByQueryText = filtersByQueryText
        self.request = request
        self.transform = transform
    }

    /// Creates a feed source for a fixed URL with an item mapping.
    /// - Parameters:
    ///   - id: The stable identifier.
    ///   - displayName: A name for people (defaults to the id).
    ///   - url: The feed's URL.
    ///   - transport: Sends the request.
    ///   - parser: The parser and its limits.
    ///   - filtersByQueryText: Whether a non-empty query text filters items client-side.
    ///   - transform: Maps a feed item to the caller's item; `nil` drops it.
    public init(
        id: SourceID, displayName: String? = nil, url: URL, transport: any HTTPTransport,
        parser: FeedParser = FeedParser(), filtersByQueryText: Bool = true,
        transform: @escaping @Sendable (FeedItem) -> Item?
    ) {
        self.init(
            id: id, displayName: displayName, transport: transport, parser: parser,
            filtersByQueryText: filtersByQueryText,
            request: { _ in
                HTTPRequest(url: url, headers: ["Accept": "application/rss+xml, application/atom+xml, application/xml"])
            },
            transform: transform)
    }

    /// Fetches, validates and parses the feed.
    public func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [Item] {
        try await fetchResult(query, context: context).items
    }

    /// Fetches, validates and parses the feed; the result carries the response's `Cache-Control` freshness, its
    /// `Age` (``SourceFetchResult/age``) and, when an HTTP cache answered with a stale feed, its staleness and
    /// age.
    public func fetchResult(_ query: SourceQuery, context: ResilienceContext) async throws -> SourceFetchResult<Item> {
        try context.checkDeadline()
        let request = try request(query)
        let response = try await transport.send(request, context: context)
        try Task.checkCancellation()
        guard response.isSuccess else { throw HTTPStatusError(response: response, request: request) }
        let freshness = response.headers.combinedValue(for: "Cache-Control").flatMap(CacheFreshness.init)
        let document = try parser.parseDocument(
            response.body, source: id, contentType: response.headers["Content-Type"],
            documentURL: response.url ?? request.url)
        if request.method == .get { pollingHints.remember(document.pollingInterval, for: request.url) }
        try Task.checkCancellation()
        let age = response.headers["Age"].flatMap { Int($0) }.map { Duration.seconds(max(0, $0)) }
        var result = SourceFetchResult(items: select(document.items, query), freshness: freshness, age: age)
        if let status = HTTPCacheStatus(headers: response.headers, cacheName: HTTPCacheStatus.libraryCacheName),
            status.isStale
        {
            result.isStale = true
            result.cacheAge = age
        }
        return result
    }

    private func select(_ parsed: [FeedItem], _ query: SourceQuery) -> [Item] {
        var items: [Item] = []
        let needle = query.text.trimmingCharacters(in: .whitespacesAndNewlines)
        for feedItem in parsed {
            if let limit = query.limit, items.count >= limit { break }
            if filtersByQueryText, !needle.isEmpty, !Self.matches(feedItem, needle) { continue }
            if let item = transform(feedItem) { items.append(item) }
        }
        return items
    }

    /// The publisher's polling hint for the feed at `url` (RSS `ttl`, `sy:updatePeriod`), once fetched.
    public func pollingInterval(for url: URL) -> Duration? { pollingHints.interval(for: url) }

    private static func matches(_ item: FeedItem, _ needle: String) -> Bool {
        let options: String.CompareOptions = [.caseInsensitive, .diacriticInsensitive]
        return item.title.range(of: needle, options: options) != nil
            || item.summary.range(of: needle, options: options) != nil
    }
}

extension FeedSource where Item == FeedItem {
    /// Creates a feed source for a fixed URL producing ``FeedItem``s.
    /// - Parameters:
    ///   - id: The stable identifier.
    ///   - displayName: A name for people (defaults to the id).
    ///   - url: The feed's URL.
    ///   - transport: Sends the request.
    ///   - parser: The parser and its limits.
    ///   - filtersByQueryText: Whether a non-empty query text filters items client-side.
    public init(
        id: SourceID, displayName: String? = nil, url: URL, transport: any HTTPTransport,
        parser: FeedParser = FeedParser(), filtersByQueryText: Bool = true,
    ) {
        self.init(
            id: id, displayName: displayName, url: url, transport: transport, parser: parser,
            filtersByQueryText: filtersByQueryText, transform: { $0 })
    }
}

/// The polling hints of the feeds a ``FeedSource`` parsed, per URL; bounded, safe to share.
final class FeedPollingHints: Sendable {
    /// The most feed URLs remembered.
    static let capacity = 64
    private let hints = LockedState(initialState: [String: Duration]())

    func remember(_ interval: Duration?, for url: URL) {
        hints.withLock { hints in
            if hints.count >= Self.capacity, hints[url.absoluteString] == nil { hints.removeAll() }
            hints[url.absoluteString] = interval
        }
    }

    func interval(for url: URL) -> Duration? { hints.withLock { $0[url.absoluteString] } }
}
