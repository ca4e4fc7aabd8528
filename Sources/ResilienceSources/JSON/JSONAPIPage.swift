/// Which page a ``JSONAPISource`` asks for: handed to its endpoint builder.
public struct JSONAPIPage: Hashable, Sendable {
    /// 0 for the first request, 1 for the second …
    public var index: Int
    /// The page number for page-numbered APIs (starts at ``JSONAPIPagination/firstPageNumber``).
    public var number: Int
    /// The cursor from the previous page for cursor APIs; `nil` on the first request.
    public var cursor: String?

    /// Creates a page.
    ///
    /// - Parameters:
    ///   - index: 0 for the first request, 1 for the second …
    ///   - number: The page number for page-numbered APIs (starts at ``JSONAPIPagination/firstPageNumber``).
    ///   - cursor: The cursor from the previous page for cursor APIs; `nil` on the first request.
    public init(index: Int, number: Int, cursor: String? = nil) {
        self.index = index
        self.number = number
        self.cursor = cursor
    }
}
