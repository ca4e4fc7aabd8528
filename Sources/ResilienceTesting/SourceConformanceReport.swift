/// What ``SourceConformance`` found: the checks it ran and the rules the source broke.
public struct SourceConformanceReport: Hashable, Sendable, CustomStringConvertible {
    /// The checks that ran, in order.
    public var checks: [String]
    /// One line per broken rule (`rule: detail`); empty when the source conforms.
    public var violations: [String]

    /// Creates a report.
    public init(checks: [String], violations: [String]) {
        self.checks = checks
        self.violations = violations
    }

    /// True when no rule was broken.
    public var conforms: Bool { violations.isEmpty }

    /// Throws ``SourceConformanceFailure`` listing every violation, if any.
    public func requireConformance() throws {
        if !violations.isEmpty { throw SourceConformanceFailure(violations: violations) }
    }

    /// `12 checks, 0 violations` and the violations.
    public var description: String {
        (["\(checks.count) checks, \(violations.count) violations"] + violations).joined(separator: "\n")
    }
}
