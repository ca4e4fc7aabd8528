/// What kind of source this is (`"json-api"`, `"rss"`); an open set for third-party modules.
public struct SourceKind: OpenVocabulary {
    /// The kind's identifier.
    public let rawValue: String
    /// Creates a kind.
    ///
    /// - Parameter rawValue: The kind's identifier, like the predefined `"json-api"` and `"feed"`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A JSON HTTP API.
    public static let jsonAPI = SourceKind("json-api")
    /// An RSS 2.0 or Atom 1.0 feed.
    public static let feed = SourceKind("feed")
}
