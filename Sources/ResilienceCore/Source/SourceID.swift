/// A source's stable identifier (`"greenhouse-acme"`): the key for its pipeline, cache and telemetry.
public struct SourceID: OpenVocabulary, Comparable {
    /// The identifier.
    public let rawValue: String
    /// Creates an identifier.
    ///
    /// - Parameter rawValue: The identifier, unique among the sources of one aggregator (`"jobs-api"`).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Orders identifiers alphabetically.
    public static func < (lhs: SourceID, rhs: SourceID) -> Bool { lhs.rawValue < rhs.rawValue }
}
