/// The one shape of every conformance kit in ResilienceTesting (`RetryPolicyConformance`,
/// `BreakerPolicyConformance`, `RateLimiterConformance`, `MutationQueueConformance`,
/// `FailedMutationListConformance`, `MutationMetadataStoreConformance`, `SourceConformance`,
/// `HTTPTransportConformance`, `TelemetrySinkConformance`, `ErrorPresenterConformance`): build the kit with
/// your implementation, call ``run()`` for a ``ConformanceReport`` with one result per case, or ``check()`` to
/// throw one ``ConformanceFailure`` listing every broken rule. Works from any test framework.
///
/// ```swift
/// @Test func conforms() async throws {
///     try await BreakerPolicyConformance { MyBreaker() }.check()
/// }
/// ```
public protocol ConformanceKit: Sendable {
    /// What the kit checks (`"BreakerPolicy"`).
    var subject: String { get }

    /// Runs every case and reports what each found.
    func run() async -> ConformanceReport
}

extension ConformanceKit {
    /// Runs every case; throws a ``ConformanceFailure`` listing every broken rule, if any.
    public func check() async throws(ConformanceFailure) {
        try await run().requireConformance()
    }
}

/// What a conformance kit found: one result per case it ran.
public struct ConformanceReport: Hashable, Sendable, CustomStringConvertible {
    /// One case's outcome.
    public struct CaseResult: Hashable, Sendable, CustomStringConvertible {
        /// The case's name (`"reset-closes"`, `"redirect-cross-origin"`).
        public var name: String
        /// The rules the case found broken; empty when it passed.
        public var violations: [ConformanceViolation]

        /// Creates a result.
        ///
        /// - Parameters:
        ///   - name: The case's name.
        ///   - violations: The rules the case found broken.
        public init(name: String, violations: [ConformanceViolation] = []) {
            self.name = name
            self.violations = violations
        }

        /// True when no rule was broken.
        public var passed: Bool { violations.isEmpty }

        /// `✓ name` or `✗ name: violations`.
        public var description: String {
            passed ? "✓ \(name)" : "✗ \(name): " + violations.map(\.detail).joined(separator: "; ")
        }
    }

    /// What was checked (`"HTTPTransport"`).
    public var subject: String
    /// One result per case, in the order they ran.
    public var cases: [CaseResult]

    /// Creates a report.
    ///
    /// - Parameters:
    ///   - subject: What was checked.
    ///   - cases: One result per case.
    public init(subject: String, cases: [CaseResult]) {
        self.subject = subject
        self.cases = cases
    }

    /// Every broken rule, in case order.
    public var violations: [ConformanceViolation] { cases.flatMap(\.violations) }

    /// True when every case passed.
    public var conforms: Bool { cases.allSatisfy(\.passed) }

    /// The names of the cases that failed.
    public var failedCases: [String] { cases.filter { !$0.passed }.map(\.name) }

    /// The result of the case named `name`.
    public func result(_ name: String) -> CaseResult? { cases.first { $0.name == name } }

    /// Throws a ``ConformanceFailure`` listing every broken rule, if any.
    public func requireConformance() throws(ConformanceFailure) {
        if !conforms { throw ConformanceFailure(subject: subject, violations: violations) }
    }

    /// `HTTPTransport: 14 cases, 1 failed` and one line per case.
    public var description: String {
        (["\(subject): \(cases.count) cases, \(failedCases.count) failed"] + cases.map { "  \($0)" })
            .joined(separator: "\n")
    }
}

/// Collects case results while a kit runs.
struct ConformanceRun {
    var cases: [ConformanceReport.CaseResult] = []

    /// Runs one case whose body returns the violations it found.
    mutating func run(_ name: String, _ body: () async -> [ConformanceViolation]) async {
        cases.append(ConformanceReport.CaseResult(name: name, violations: await body()))
    }

    /// Runs one case whose body returns a violation detail (`nil` when the rule held).
    mutating func check(_ name: String, _ body: () async -> String?) async {
        let detail = await body()
        cases.append(
            ConformanceReport.CaseResult(
                name: name, violations: detail.map { [ConformanceViolation(rule: name, detail: $0)] } ?? []))
    }

    func report(_ subject: String) -> ConformanceReport { ConformanceReport(subject: subject, cases: cases) }
}
