/// What one response of a ``JSONAPISource`` contained.
public struct JSONAPIPageContent<Item: Sendable>: Sendable {
    /// The items on this page.
    public var items: [Item]
    /// The cursor for the next page (cursor APIs); `nil` or empty when there is none.
    public var nextCursor: String?
    /// Whether more pages follow, when the API says so; `nil` lets page-numbered pagination stop at the first
    /// empty page.
    public var hasMore: Bool?

    /// Creates page content.
    ///
    /// - Parameters:
    ///   - items: The items on this page.
    ///   - nextCursor: The cursor for the next page (cursor APIs); `nil` or empty when there is none.
    ///   - hasMore: Whether more pages follow, when the API says so; `nil` lets page-numbered pagination stop at the
    ///     first empty page.
    public init(items: [Item], nextCursor: String? = nil, hasMore: Bool? = nil) {
        self.items = items
        self.nextCursor = nextCursor
        self.hasMore = hasMore
    }
}
