import Foundation
import ResilienceCore

/// One entry of an RSS 2.0 or Atom 1.0 feed, normalised.
public struct FeedItem: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The title, whitespace-collapsed, HTML entities decoded.
    public var title: String
    /// The item's link (RSS `link`, Atom `link rel="alternate"`), if present and a valid URL.
    public var link: URL?
    /// The stable id: RSS `guid`, Atom `id`, else the link, else the title.
    public var id: String
    /// When it was published (RSS `pubDate`, Atom `published`, else `updated`, else `dc:date`), if parseable.
    public var published: Date?
    /// A plain-text summary: tags stripped, entities decoded, whitespace collapsed.
    public var summary: String
    /// The source it came from.
    public var source: SourceID

    /// Creates an item.
    public init(title: String, link: URL?, id: String, published: Date?, summary: String, source: SourceID) {
        self.title = title
        self.link = link
        self.id = id
        self.published = published
        self.summary = summary
        self.source = source
    }

    /// `title <link>`.
    public var description: String { "\(title) <\(link?.absoluteString ?? id)>" }
}
