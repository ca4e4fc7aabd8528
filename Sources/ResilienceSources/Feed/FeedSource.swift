import Foundation
import ResilienceCore

/// A ``Source`` reading an RSS 2.0 or Atom 1.0 feed over an injected ``HTTPTransport``.
///
/// Non-2xx responses throw ``HTTPStatusError`` (a classifier decides what they mean); bodies that are not a
/// well-formed, bounded feed throw ``FeedError``. Never returns an empty list for a failure. Feeds have no
/// server-side search, so a non-empty `query.text` filters items whose title or summary contains it
/// (case- and diacritic-insensitive) unless ``filtersByQueryText`` is off; `query.limit` caps the count.
///
/// ```swift
/// let feed = FeedSource(id: "acme-rss", displayName: "Acme (RSS)", url: feedURL, transport: transport)
/// let jobs = FeedSource(id: "acme-rss", url: feedURL, transport: transport) { item in Job(item) }
/// ```
public struct FeedSource<Item: Sendable>: Source {
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

    /// Creates a feed source with a request builder and an item mapping.
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
        try context.checkDeadline()
        let request = try request(query)
        let response = try await transport.send(request, context: context)
        try Task.checkCancellation()
        guard response.isSuccess else { throw HTTPStatusError(response: response, request: request) }
        let parsed = try parser.parse(response.body, source: id)
        try Task.checkCancellation()
        var items: [Item] = []
        let needle = query.text.trimmingCharacters(in: .whitespacesAndNewlines)
        for feedItem in parsed {
            if let limit = query.limit, items.count >= limit { break }
            if filtersByQueryText, !needle.isEmpty, !Self.matches(feedItem, needle) { continue }
            if let item = transform(feedItem) { items.append(item) }
        }
        return items
    }

    private static func matches(_ item: FeedItem, _ needle: String) -> Bool {
        let options: String.CompareOptions = [.caseInsensitive, .diacriticInsensitive]
        return item.title.range(of: needle, options: options) != nil
            || item.summary.range(of: needle, options: options) != nil
    }
}

extension FeedSource where Item == FeedItem {
    /// Creates a feed source for a fixed URL producing ``FeedItem``s.
    public init(
        id: SourceID, displayName: String? = nil, url: URL, transport: any HTTPTransport,
        parser: FeedParser = FeedParser(), filtersByQueryText: Bool = true
    ) {
        self.init(
            id: id, displayName: displayName, url: url, transport: transport, parser: parser,
            filtersByQueryText: filtersByQueryText, transform: { $0 })
    }
}
