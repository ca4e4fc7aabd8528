/// A stage's name and settings, for a pipeline's self-description.
public struct StageDescription: Hashable, Sendable, CustomStringConvertible {
    /// The stage's name (`"retry"`, `"circuit-breaker"`).
    public var name: String
    /// Its settings as ordered key/value pairs (`("maxAttempts", "3")`).
    public var settings: [Setting]

    /// One named setting.
    public struct Setting: Hashable, Sendable {
        /// The setting's name.
        public var name: String
        /// Its value, rendered for humans.
        public var value: String
        /// Creates a setting.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Creates a description.
    public init(name: String, settings: [Setting] = []) {
        self.name = name
        self.settings = settings
    }

    /// `retry(maxAttempts: 3, backoff: exponential)`.
    public var description: String {
        if settings.isEmpty { return name }
        return "\(name)(" + settings.map { "\($0.name): \($0.value)" }.joined(separator: ", ") + ")"
    }
}
