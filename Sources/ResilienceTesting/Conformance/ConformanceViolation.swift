/// One rule a conformance kit found broken: shared by every kit in ResilienceTesting.
public struct ConformanceViolation: Error, Hashable, Sendable, CustomStringConvertible {
    /// The rule's short name (`"reset-closes"`, `"never-retries-cancellation"`).
    public var rule: String
    /// What was observed.
    public var detail: String

    /// Creates a violation.
    ///
    /// - Parameters:
    ///   - rule: The rule's short name (`"reset-closes"`, `"never-retries-cancellation"`).
    ///   - detail: What was observed.
    public init(rule: String, detail: String) {
        self.rule = rule
        self.detail = detail
    }

    /// `rule: detail`.
    public var description: String { "\(rule): \(detail)" }
}
