/// A stable, greppable code for one specific failure, in the style `NET_002`.
///
/// Codes are what support staff search for and what dashboards group by; they never change meaning once
/// published. The catalogue of built-in codes is in `FailureCode+Catalog.swift`; modules and third parties
/// add their own with their own prefix.
public struct FailureCode: OpenVocabulary {
    /// The code, e.g. `"NET_002"`.
    public let rawValue: String

    /// Creates a code.
    ///
    /// - Parameter rawValue: The code, a prefix and a number like the catalogue's (`"NET_002"`).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `HTTP_<status>`, the code for an HTTP status nobody mapped more specifically.
    public static func http(_ status: Int) -> FailureCode { FailureCode("HTTP_\(status)") }
}
