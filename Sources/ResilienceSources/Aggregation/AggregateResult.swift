import ResilienceCore

/// The merged items of a multi-source fetch and what happened to each source.
public struct AggregateResult<Item: Sendable>: Sendable {
    /// The items, in source registration order (each source's own order kept), de-duplicated if configured.
    public var items: [Item]
    /// What happened to each source.
    public var report: AggregateReport
    /// What the items are called in messages (`"jobs"`).
    public var itemNoun: String

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - items: The items, in source registration order (each source's own order kept), de-duplicated if configured.
    ///   - report: What happened to each source.
    ///   - itemNoun: What the items are called in messages (`"jobs"`). Default: `"items"`.
    public init(items: [Item], report: AggregateReport, itemNoun: String = "items") {
        self.items = items
        self.report = report
        self.itemNoun = itemNoun
    }

    /// The whole outcome an ``ErrorPresenter`` needs to decide what to say about this result (the policy
    /// was met).
    public var presentationContext: PresentationContext {
        report.presentationContext(itemNoun: itemNoun, itemsShown: items.count, metPolicy: true)
    }
}
