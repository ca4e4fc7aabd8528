/// A source's stable identifier (`"greenhouse-acme"`): the key for its pipeline, cache and telemetry.
public struct SourceID: RawRepresentable, Hashable, Sendable, Codable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The identifier.
    public let rawValue: String
    /// Creates an identifier.
    ///
    /// - Parameter rawValue: The identifier, unique among the sources of one aggregator (`"jobs-api"`).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates an identifier.
    ///
    /// - Parameter rawValue: The identifier, unique among the sources of one aggregator (`"jobs-api"`).
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Creates an identifier from a literal.
    ///
    /// - Parameter value: The identifier, as for ``init(rawValue:)``.
    public init(stringLiteral value: String) { self.rawValue = value }
    /// The identifier.
    public var description: String { rawValue }
    /// Orders identifiers alphabetically.
    public static func < (lhs: SourceID, rhs: SourceID) -> Bool { lhs.rawValue < rhs.rawValue }
}
