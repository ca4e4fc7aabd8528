/// What a queued mutation does to its entity. An open set.
public struct MutationOperation: OpenVocabulary {
    /// The operation's identifier.
    public let rawValue: String
    /// Creates an operation.
    ///
    /// - Parameter rawValue: The operation's identifier, like the predefined `"create"`, `"update"` and `"delete"`;
    ///   stored with the mutation.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Create the entity on the server.
    public static let create: Self = "create"
    /// Update the entity.
    public static let update: Self = "update"
    /// Delete the entity.
    public static let delete: Self = "delete"
}
