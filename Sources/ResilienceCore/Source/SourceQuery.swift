/// What to fetch from a source.
public struct SourceQuery: Hashable, Sendable, CustomStringConvertible {
    /// Free text (`"swift engineer"`); empty for "everything".
    public var text: String
    /// Named filters (`"location": "remote"`).
    public var filters: [String: String]
    /// The most items wanted, if limited.
    public var limit: Int?

    /// Creates a query.
    ///
    /// - Parameters:
    ///   - text: Free text (`"swift engineer"`); empty for "everything". Default: `""`.
    ///   - filters: Named filters (`"location": "remote"`). Default: `[:]`.
    ///   - limit: The most items wanted, if limited.
    public init(text: String = "", filters: [String: String] = [:], limit: Int? = nil) {
        self.text = text
        self.filters = filters
        self.limit = limit
    }

    /// A stable rendering for logs and descriptions (`q=swift&location=remote&limit=20`, filters sorted by name).
    /// Nothing in it is escaped, so two different queries can render alike (text `x&limit=5` and text `x` with a
    /// filter `limit` of `5&`): key a cache by the query itself (it is `Hashable`), not by this text.
    public var description: String {
        let filterText = filters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        return "q=\(text)&\(filterText)&limit=\(limit.map(String.init) ?? "")"
    }
}
