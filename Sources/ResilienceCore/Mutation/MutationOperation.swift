/// What a queued mutation does to its entity. An open set.
public struct MutationOperation: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// The operation's identifier.
    public let rawValue: String
    /// Creates an operation.
    ///
    /// - Parameter rawValue: The operation's identifier, like the predefined `"create"`, `"update"` and `"delete"`;
    ///   stored with the mutation.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates an operation from a literal.
    ///
    /// - Parameter value: The identifier, as for ``init(rawValue:)``.
    public init(stringLiteral value: String) { self.rawValue = value }
    /// The identifier.
    public var description: String { rawValue }

    /// Create the entity on the server.
    public static let create: Self = "create"
    /// Update the entity.
    public static let update: Self = "update"
    /// Delete the entity.
    public static let delete: Self = "delete"
}
