/// The namespaces feeds use, and how element names are resolved: by namespace URI, never by prefix.
enum FeedVocabulary {
    static let atom = "http://www.w3.org/2005/Atom"
    static let atom03 = "http://purl.org/atom/ns#"
    static let rss1 = "http://purl.org/rss/1.0/"
    static let rss090 = "http://my.netscape.com/rdf/simple/0.9/"
    static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    static let dc = "http://purl.org/dc/elements/1.1/"
    static let dcterms = "http://purl.org/dc/terms/"
    static let content = "http://purl.org/rss/1.0/modules/content/"
    static let itunes = "http://www.itunes.com/dtds/podcast-1.0.dtd"
    static let media = "http://search.yahoo.com/mrss/"
    static let syndication = "http://purl.org/rss/1.0/modules/syndication/"
    static let xhtml = "http://www.w3.org/1999/xhtml"
    static let xml = "http://www.w3.org/XML/1998/namespace"

    /// The namespaces RSS's own elements appear in: none (RSS 0.9x/2.0), RSS 1.0, RSS 0.90, and the two URIs
    /// some RSS 2.0 feeds declared as a default namespace.
    static let rssNamespaces: Set<String> = [
        "", rss1, rss090, "http://backend.userland.com/rss2", "http://blogs.law.harvard.edu/tech/rss",
    ]

    /// RSS's own element names, keyed by their lower-case form: an RSS document's elements are matched
    /// against them without regard to case, as feedparser matches them.
    static let rssElementsByLowercasedName: [String: String] = Dictionary(
        uniqueKeysWithValues: [
            "channel", "item", "title", "link", "description", "guid", "pubDate", "enclosure", "ttl",
        ]
        .map { ($0.lowercased(), $0) })

    /// The conventional meaning of prefixes feeds often use without declaring them.
    static let conventionalPrefixes: [String: String] = [
        "atom": atom, "atom03": atom03, "rdf": rdf, "dc": dc, "dcterms": dcterms, "content": content,
        "itunes": itunes, "media": media, "sy": syndication, "xhtml": xhtml, "xml": xml, "rss": rss1,
    ]

    /// An element or attribute name resolved to its namespace.
    struct Name: Hashable {
        var namespace: String
        var local: String

        init(_ namespace: String, _ local: String) {
            self.namespace = namespace
            self.local = local
        }

        var isRSS: Bool {
            // Compared one by one: cheaper than hashing, and this runs several times per element.
            namespace.isEmpty || namespace == FeedVocabulary.rss1 || namespace == FeedVocabulary.rss090
                || namespace == "http://backend.userland.com/rss2"
                || namespace == "http://blogs.law.harvard.edu/tech/rss"
        }
        var isAtom: Bool { namespace == FeedVocabulary.atom || namespace == FeedVocabulary.atom03 }
    }
}
