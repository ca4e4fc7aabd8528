import Foundation
import ResilienceCore

/// A ``Source`` reading an RSS or Atom feed over an injected ``HTTPTransport``.
///
/// Fetches are conditional, as feed readers make them: the `ETag` and `Last-Modified` of the last full
/// response (kept in ``httpCache``) are sent as `If-None-Match` / `If-Modified-Since`, and a
/// `304 Not Modified` serves the remembered items as fresh. The response's `Cache-Control` (`max-age`,
/// `stale-if-error`) is reported as the result's ``SourceFetchResult/freshness`` so a ``SourceCache``
/// serves the items no longer than the publisher allows. The body is parsed with the response's
/// `Content-Type` charset and its URL as the base for relative links.
///
/// Non-2xx responses (and a 304 with nothing remembered) throw ``HTTPStatusError`` (a classifier decides what
/// they mean); bodies that are not a well-formed, bounded feed throw ``FeedError``. Never returns an empty
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
    /// The validators and items of the last full responses, or `nil` for unconditional fetches.
    public let httpCache: FeedHTTPCache?

    /// Creates a feed source with a request builder and an item mapping.
    /// - Parameters:
    ///   - id: The stable identifier.
    ///   - kind: The kind of source.
    ///   - displayName: A name for people (defaults to the id).
    ///   - transport: Sends the request.
    ///   - parser: The parser and its limits.
    ///   - filtersByQueryText: Whether a non-empty query text filters items client-side.
    ///   - httpCache: Where validators are kept for conditional requests; `nil` turns them off.
    ///   - request: Builds the request for a query.
    ///   - transform: Maps a feed item to the caller's item; `nil` drops it.
    public init(
        id: SourceID, kind: SourceKind = .feed, displayName: String? = nil, transport: any HTTPTransport,
        parser: FeedParser = FeedParser(), filtersByQueryText: Bool = true,
        httpCache: FeedHTTPCache? = FeedHTTPCache(),
        request: @escaping @Sendable (SourceQuery) throws -> HTTPRequest,
        transform: @escaping @Sendable (FeedItem) -> Item?
    ) {
        self.httpCache = httpCache
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
    ///   - httpCache: Where validators are kept for conditional requests; `nil` turns them off.
    ///   - transform: Maps a feed item to the caller's item; `nil` drops it.
    public init(
        id: SourceID, displayName: String? = nil, url: URL, transport: any HTTPTransport,
        parser: FeedParser = FeedParser(), filtersByQueryText: Bool = true,
        httpCache: FeedHTTPCache? = FeedHTTPCache(),
        transform: @escaping @Sendable (FeedItem) -> Item?
    ) {
        self.init(
            id: id, displayName: displayName, transport: transport, parser: parser,
            filtersByQueryText: filtersByQueryText, httpCache: httpCache,
            request: { _ in
                HTTPRequest(url: url, headers: ["Accept": "application/rss+xml, application/atom+xml, application/xml"])
            },
            transform: transform)
    }

    /// Fetches (conditionally), validates and parses the feed.
    public func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [Item] {
        try await fetchResult(query, context: context).items
    }

    /// Fetches (conditionally), validates and parses the feed; the result carries the response's
    /// `Cache-Control` freshness.
    public func fetchResult(_ query: SourceQuery, context: ResilienceContext) async throws -> SourceFetchResult<Item> {
        try context.checkDeadline()
        var request = try request(query)
        let remembered = request.method == .get ? httpCache?.entry(for: request.url) : nil
        if let remembered {
            if let tag = remembered.entityTag, !request.headers.contains("If-None-Match") {
                request.headers.add(name: "If-None-Match", value: tag)
            }
            if let date = remembered.lastModified, !request.headers.contains("If-Modified-Since") {
                request.headers.add(name: "If-Modified-Since", value: date)
            }
        }
        let response = try await transport.send(request, context: context)
        try Task.checkCancellation()
        let freshness = response.headers.combinedValue(for: "Cache-Control").flatMap(CacheFreshness.init)
        let parsed: [FeedItem]
        if response.status == 304, var remembered {
            parsed = remembered.items
            if let freshness { remembered.freshness = freshness }
            if let tag = response.headers["ETag"] { remembered.entityTag = tag }
            httpCache?.store(remembered, for: request.url)
        } else {
            guard response.isSuccess else { throw HTTPStatusError(response: response, request: request) }
            let document = try parser.parseDocument(
                response.body, source: id, contentType: response.headers["Content-Type"],
                documentURL: response.url ?? request.url)
            parsed = document.items
            let tag = response.headers["ETag"]
            let lastModified = response.headers["Last-Modified"]
            if tag != nil || lastModified != nil {
                httpCache?.store(
                    FeedHTTPCache.Entry(
                        entityTag: tag, lastModified: lastModified, items: parsed, freshness: freshness,
                        pollingInterval: document.pollingInterval),
                    for: request.url)
            }
        }
        try Task.checkCancellation()
        return SourceFetchResult(items: select(parsed, query), freshness: freshness)
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
    public func pollingInterval(for url: URL) -> Duration? { httpCache?.entry(for: url)?.pollingInterval }

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
    ///   - httpCache: Where validators are kept for conditional requests; `nil` turns them off.
    public init(
        id: SourceID, displayName: String? = nil, url: URL, transport: any HTTPTransport,
        parser: FeedParser = FeedParser(), filtersByQueryText: Bool = true,
        httpCache: FeedHTTPCache? = FeedHTTPCache()
    ) {
        self.init(
            id: id, displayName: displayName, url: url, transport: transport, parser: parser,
            filtersByQueryText: filtersByQueryText, httpCache: httpCache, transform: { $0 })
    }
}
