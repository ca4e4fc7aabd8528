/// A value from an open set named by a stable string: failure categories and codes, source ids and kinds,
/// event kinds, mutation operations. Modules and third parties add members as static constants
/// (`extension FailureCategory { static let quotaExceeded: Self = "quota-exceeded" }`) without a breaking
/// change; switch over one with `case .rateLimited:` patterns and a `default:`.
///
/// A conforming type stores `rawValue` and implements ``init(rawValue:)``; the string initialisers,
/// `description` and `Codable` (as the bare string) come from here.
public protocol OpenVocabulary: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
where RawValue == String, StringLiteralType == String {
    /// Creates the value named `rawValue` (stable: used in logs, metrics and persisted state).
    init(rawValue: String)
}

extension OpenVocabulary {
    /// Creates the value named `rawValue`.
    ///
    /// - Parameter rawValue: The stable identifier, as for ``init(rawValue:)``.
    @inlinable
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }

    /// Creates the value named by a string literal.
    ///
    /// - Parameter value: The stable identifier, as for ``init(rawValue:)``.
    @inlinable
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// The identifier.
    public var description: String { rawValue }
}
