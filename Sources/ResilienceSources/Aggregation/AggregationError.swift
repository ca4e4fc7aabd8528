import ResilienceCore

/// Thrown when a multi-source fetch could not meet its ``CompletionPolicy``; carries the full report.
public struct AggregationError: ClassifiedError, Hashable, Sendable, CustomStringConvertible {
    /// What happened to each source.
    public var report: AggregateReport
    /// The context an ``ErrorPresenter`` needs (no items are shown).
    public var itemNoun: String

    /// Creates an error.
    public init(report: AggregateReport, itemNoun: String = "items") {
        self.report = report
        self.itemNoun = itemNoun
    }

    /// The report's ``AggregateReport/presentedFailure``, or an unknown failure when none is recorded.
    public var classification: FailureClassification {
        report.presentedFailure ?? .unknown
    }

    /// The context for an ``ErrorPresenter``.
    public var presentationContext: PresentationContext {
        report.presentationContext(itemNoun: itemNoun, itemsShown: 0)
    }

    /// `only 1 of 6 sources delivered; at-least(3) required`.
    public var description: String {
        "only \(report.deliveredCount) of \(report.sources.count) sources delivered; "
            + "\(report.policy) required \(report.requiredCount)"
    }
}
