/// How a ``JSONAPISource`` walks pages. Always bounded by ``maximumPages``: a server that never says "last
/// page" cannot make a fetch run forever.
public struct JSONAPIPagination: Hashable, Sendable, CustomStringConvertible {
    /// How the next page is addressed.
    public struct Style: RawRepresentable, Hashable, Sendable {
        /// The identifier.
        public let rawValue: String
        /// Creates a style.
        ///
        /// - Parameter rawValue: The identifier, like the predefined `"single"`, `"page-numbers"` and `"cursor"`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// One request, no pages.
        public static let single = Style(rawValue: "single")
        /// `?page=1`, `?page=2` … until an empty page, `hasMore == false` or page number `Int.max`.
        public static let pageNumbers = Style(rawValue: "page-numbers")
        /// Follow `nextCursor` until there is none (or it repeats).
        public static let cursor = Style(rawValue: "cursor")
    }

    /// How the next page is addressed.
    public var style: Style
    /// The most requests one fetch makes (≥ 1). Items beyond it are not fetched.
    public var maximumPages: Int
    /// The first page's number for ``Style/pageNumbers``. Numbers count up from it and end at `Int.max`: the
    /// page with that number is the last one fetched.
    public var firstPageNumber: Int

    /// Creates a pagination.
    ///
    /// - Parameters:
    ///   - style: How the next page is addressed.
    ///   - maximumPages: The most requests one fetch makes (≥ 1). Items beyond it are not fetched. Default: `10`.
    ///   - firstPageNumber: The first page's number for ``Style/pageNumbers``. Default: `1`.
    public init(style: Style, maximumPages: Int = 10, firstPageNumber: Int = 1) {
        self.style = style
        self.maximumPages = max(1, maximumPages)
        self.firstPageNumber = firstPageNumber
    }

    /// One request.
    public static let single = JSONAPIPagination(style: .single, maximumPages: 1)

    /// Page numbers from `firstPage` up to at most `Int.max`, at most `maximumPages` requests.
    public static func pageNumbers(startingAt firstPage: Int = 1, maximumPages: Int = 10) -> JSONAPIPagination {
        JSONAPIPagination(style: .pageNumbers, maximumPages: maximumPages, firstPageNumber: firstPage)
    }

    /// Cursors, at most `maximumPages` requests.
    public static func cursor(maximumPages: Int = 10) -> JSONAPIPagination {
        JSONAPIPagination(style: .cursor, maximumPages: maximumPages)
    }

    /// `page-numbers(max 10)`.
    public var description: String { "\(style.rawValue)(max \(maximumPages))" }
}
