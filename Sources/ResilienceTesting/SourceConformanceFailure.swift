/// Thrown by ``SourceConformanceReport/requireConformance()``.
public struct SourceConformanceFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The broken rules.
    public var violations: [String]

    /// Creates a failure.
    public init(violations: [String]) { self.violations = violations }

    /// The violations, one per line.
    public var description: String { "source does not conform:\n" + violations.joined(separator: "\n") }
}
