/// An HTTP request method. An open set: any token is allowed.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The method token (`"GET"`).
    public let rawValue: String
    /// Creates a method.
    ///
    /// - Parameter rawValue: The method token; stored uppercased, so `"get"` and `"GET"` are the same method.
    public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
    /// Creates a method from a literal.
    ///
    /// - Parameter value: The method token; uppercased like ``init(rawValue:)``'s.
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    /// The token.
    public var description: String { rawValue }

    /// GET
    public static let get = HTTPMethod(rawValue: "GET")
    /// HEAD
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// POST
    public static let post = HTTPMethod(rawValue: "POST")
    /// PUT
    public static let put = HTTPMethod(rawValue: "PUT")
    /// PATCH
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// DELETE
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// OPTIONS
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    /// Whether RFC 9110 §9.2.2 defines the method as idempotent (POST and PATCH are not).
    public var isIdempotent: Bool {
        switch self {
        case .get, .head, .put, .delete, .options, HTTPMethod(rawValue: "TRACE"): true
        default: false
        }
    }
}
