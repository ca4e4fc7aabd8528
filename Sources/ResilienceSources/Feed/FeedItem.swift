import Foundation
import ResilienceCore

/// One entry of an RSS (0.9x, 1.0, 2.0) or Atom (0.3, 1.0) feed, normalised.
public struct FeedItem: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The title as plain text: markup removed (script and style content dropped), entities decoded,
    /// whitespace collapsed.
    public var title: String
    /// The item's web page: RSS `link`, else a permalink `guid`; Atom `link rel="alternate"`; resolved
    /// against `xml:base` and the document's URL.
    public var link: URL?
    /// The stable id: RSS `guid`, Atom `id`, RDF `rdf:about`, else the link, else the title, else
    /// `digest:` and a hash of the summary, dates and enclosure URLs (never empty).
    public var id: String
    /// When it was published (see `Docs/Feeds.md` for the precedence of date elements), if known.
    public var published: Date?
    /// When it was last updated (Atom `updated`/`modified`, `dcterms:modified`), if given.
    public var updated: Date?
    /// The summary as plain text: tags removed, entities decoded, whitespace collapsed.
    public var summary: String
    /// The summary as sanitized HTML (an allow-list of elements and attributes; never script).
    public var summaryHTML: String
    /// Media attached to the item (RSS `enclosure`, Atom `link rel="enclosure"`, `media:content`).
    public var enclosures: [FeedEnclosure]
    /// Related pages (Atom `link rel="related"`).
    public var related: [URL]
    /// What was lost or guessed while reading this item.
    public var warnings: [FeedWarning]
    /// The source it came from.
    public var source: SourceID

    /// Creates an item.
    /// - Parameters:
    ///   - title: The plain-text title.
    ///   - link: The item's web page.
    ///   - id: The stable id.
    ///   - published: When it was published.
    ///   - updated: When it was last updated.
    ///   - summary: The plain-text summary.
    ///   - summaryHTML: The summary as sanitized HTML; defaults to the plain-text summary, escaped.
    ///   - enclosures: Attached media.
    ///   - related: Related pages.
    ///   - warnings: What was lost or guessed.
    ///   - source: The source it came from.
    public init(
        title: String, link: URL?, id: String, published: Date?, updated: Date? = nil, summary: String,
        summaryHTML: String? = nil, enclosures: [FeedEnclosure] = [], related: [URL] = [],
        warnings: [FeedWarning] = [], source: SourceID
    ) {
        self.title = title
        self.link = link
        self.id = id
        self.published = published
        self.updated = updated
        self.summary = summary
        self.summaryHTML = summaryHTML ?? HTMLText.escape(summary, quotes: false)
        self.enclosures = enclosures
        self.related = related
        self.warnings = warnings
        self.source = source
    }

    /// `title <link>`.
    public var description: String { "\(title) <\(link?.absoluteString ?? id)>" }
}

/// A media file attached to a feed item.
public struct FeedEnclosure: Hashable, Sendable, Codable {
    /// Where the file is.
    public var url: URL
    /// Its media type, when given.
    public var type: String?
    /// Its size in bytes, when given.
    public var length: Int?

    /// Creates an enclosure.
    /// - Parameters:
    ///   - url: Where the file is.
    ///   - type: Its media type.
    ///   - length: Its size in bytes.
    public init(url: URL, type: String? = nil, length: Int? = nil) {
        self.url = url
        self.type = type
        self.length = length
    }
}

/// A whole feed: its items and what it says about itself.
public struct FeedDocument: Hashable, Sendable {
    /// Which dialect it is written in.
    public enum Format: String, Hashable, Sendable {
        /// RSS 0.9x/2.0 (`<rss>`).
        case rss
        /// RSS 0.90/1.0 (`<rdf:RDF>`).
        case rdf
        /// Atom 1.0.
        case atom
        /// Atom 0.3 (the pre-standard draft).
        case atom03
        /// Channel Definition Format (`<CHANNEL>` with `ITEM`s carrying `HREF` and `LASTMOD`, `TITLE` and
        /// `ABSTRACT` children).
        case cdf
    }

    /// The dialect.
    public var format: Format
    /// The feed's title as plain text.
    public var title: String
    /// The items, in document order.
    public var items: [FeedItem]
    /// How often the publisher suggests polling: RSS `ttl` (minutes), else `sy:updatePeriod` divided by
    /// `sy:updateFrequency`; `nil` when the feed says nothing.
    public var pollingInterval: Duration?
    /// The encoding the body was read in.
    public var encoding: String
    /// What was lost or guessed at the feed level (encoding, bare ampersands, undeclared prefixes).
    public var warnings: [FeedWarning]

    /// Creates a document.
    /// - Parameters:
    ///   - format: The dialect.
    ///   - title: The feed's title.
    ///   - items: The items.
    ///   - pollingInterval: The publisher's polling hint.
    ///   - encoding: The encoding the body was read in.
    ///   - warnings: Feed-level warnings.
    public init(
        format: Format, title: String, items: [FeedItem], pollingInterval: Duration?, encoding: String,
        warnings: [FeedWarning]
    ) {
        self.format = format
        self.title = title
        self.items = items
        self.pollingInterval = pollingInterval
        self.encoding = encoding
        self.warnings = warnings
    }
}
