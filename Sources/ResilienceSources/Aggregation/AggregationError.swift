import ResilienceCore

/// Thrown when a multi-source fetch could not meet its ``CompletionPolicy``; carries the full report.
public struct AggregationError: ClassifiedError, Hashable, Sendable, CustomStringConvertible {
    /// What happened to each source.
    public var report: AggregateReport
    /// The context an ``ErrorPresenter`` needs (no items are shown).
    public var itemNoun: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - report: What happened to each source.
    ///   - itemNoun: The context an ``ErrorPresenter`` needs (no items are shown). Default: `"items"`.
    public init(report: AggregateReport, itemNoun: String = "items") {
        self.report = report
        self.itemNoun = itemNoun
    }

    /// The report's ``AggregateReport/mostCommonFailure`` (a neutral summary for retry decisions and logs),
    /// or an unknown failure when none is recorded. What the person is told comes from an
    /// ``ErrorPresenter`` given ``presentationContext``.
    public var classification: FailureClassification {
        report.mostCommonFailure ?? .unknown
    }

    /// The whole outcome for an ``ErrorPresenter`` (no items are shown; the policy was not met).
    public var presentationContext: PresentationContext {
        report.presentationContext(itemNoun: itemNoun, itemsShown: 0, metPolicy: false)
    }

    /// `only 1 of 6 sources delivered; at-least(3) required`.
    public var description: String {
        "only \(report.deliveredCount) of \(report.sources.count) sources delivered; "
            + "\(report.policy) required \(report.requiredCount)"
    }
}
