/// One rule that fired, with a message for operators.
public struct HealthAlert: Sendable, Hashable, CustomStringConvertible {
    /// The rule's identifier (`"error-rate-critical"`).
    public var rule: String
    /// How urgent.
    public var severity: HealthSeverity
    /// What is wrong, for people (`"Error rate 62% over the last 2 min (limit 50%)"`).
    public var message: String
    /// The keys involved, sorted.
    public var keys: [String]
    /// The measured value that crossed the threshold, if the rule has one.
    public var value: Double?

    /// Creates an alert.
    ///
    /// - Parameters:
    ///   - rule: The rule's identifier (`"error-rate-critical"`).
    ///   - severity: How urgent.
    ///   - message: What is wrong, for people (`"Error rate 62% over the last 2 min (limit 50%)"`).
    ///   - keys: The keys involved, sorted. Default: `[]`.
    ///   - value: The measured value that crossed the threshold, if the rule has one.
    public init(rule: String, severity: HealthSeverity, message: String, keys: [String] = [], value: Double? = nil) {
        self.rule = rule
        self.severity = severity
        self.message = message
        self.keys = keys.sorted()
        self.value = value
    }

    /// `[severity] rule: message`.
    public var description: String { "[\(severity)] \(rule): \(message)" }
}
