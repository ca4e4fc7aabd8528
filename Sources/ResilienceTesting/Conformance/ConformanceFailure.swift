/// Every violation a conformance kit's `check()` found, thrown as one error.
public struct ConformanceFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was checked (`"BreakerPolicy"`).
    public var subject: String
    /// The broken rules.
    public var violations: [ConformanceViolation]

    /// Creates a failure.
    ///
    /// - Parameters:
    ///   - subject: What was checked (`"BreakerPolicy"`).
    ///   - violations: The broken rules.
    public init(subject: String, violations: [ConformanceViolation]) {
        self.subject = subject
        self.violations = violations
    }

    /// One line per violation.
    public var description: String {
        "\(subject) conformance failed:\n" + violations.map { "  - \($0)" }.joined(separator: "\n")
    }
}
