import ResilienceCore

/// What happened to every source in one multi-source fetch, in registration order.
public struct AggregateReport: Hashable, Sendable, CustomStringConvertible {
    /// One report per registered source, in registration order.
    public var sources: [SourceReport]
    /// The completion policy the fetch ran under.
    public var policy: CompletionPolicy
    /// Time from start to end of the whole fetch, on the aggregator's clock.
    public var duration: Duration
    /// True when the aggregator's ``Aggregator/connectivity`` monitor said the device was offline when the
    /// fetch ended (a monitor that has stopped says nothing: this and ``wasOnline`` are then false).
    public var wasOffline = false
    /// True when the aggregator's ``Aggregator/connectivity`` monitor said the device had a usable network path
    /// when the fetch ended (so a source's network-unreachable failure is not presented as being offline).
    /// Both this and ``wasOffline`` are false without a monitor.
    public var wasOnline = false

    /// Creates a report.
    ///
    /// - Parameters:
    ///   - sources: One report per registered source, in registration order.
    ///   - policy: The completion policy the fetch ran under.
    ///   - duration: Time from start to end of the whole fetch, on the aggregator's clock.
    public init(sources: [SourceReport], policy: CompletionPolicy, duration: Duration) {
        self.sources = sources
        self.policy = policy
        self.duration = duration
    }

    /// How many sources contributed items (live, fallback or cache).
    public var deliveredCount: Int { sources.filter { $0.status.delivered }.count }
    /// How many sources delivered live items from their primary.
    public var succeededCount: Int { sources.filter { $0.status == .succeeded }.count }
    /// How many sources contributed nothing.
    public var failedCount: Int { sources.count - deliveredCount }
    /// How many sources the policy required.
    public var requiredCount: Int { policy.requiredSources(of: sources.count) }
    /// True when the policy was met.
    public var meetsPolicy: Bool { deliveredCount >= requiredCount }
    /// True when every source delivered live items from its primary.
    public var isComplete: Bool { succeededCount == sources.count }
    /// True when some, but not all, sources contributed.
    public var isPartial: Bool { deliveredCount > 0 && deliveredCount < sources.count }

    /// The report of source `id`, if registered.
    public func report(for id: SourceID) -> SourceReport? { sources.first { $0.id == id } }

    /// A neutral summary of what went wrong, for logs, telemetry and ``AggregationError/classification``:
    /// the first failure (in registration order) of the category most sources that did not deliver live
    /// failed with (sources served from cache included, cancellations excluded); on a tie, the category seen
    /// first. `nil` when every source delivered live or by a fallback. What the person is told is decided by
    /// the ``ErrorPresenter`` from ``presentationContext(itemNoun:itemsShown:metPolicy:)``, not by this.
    public var mostCommonFailure: FailureClassification? {
        let failures = sources.filter { $0.status != .succeeded && $0.status != .servedByFallback }
            .compactMap(\.classification).filter { $0.category != .cancelled }
        var counts: [FailureCategory: Int] = [:]
        for failure in failures { counts[failure.category, default: 0] += 1 }
        let most = counts.values.max()
        return failures.first { counts[$0.category] == most }
    }

    /// The report as a ``PresentationContext`` for an ``ErrorPresenter``, which decides what to tell.
    ///
    /// - Parameters:
    ///   - itemNoun: What the items are called in messages.
    ///   - itemsShown: How many items are on screen.
    ///   - metPolicy: Whether the fetch met its completion policy; ``meetsPolicy`` when `nil`.
    public func presentationContext(
        itemNoun: String = "items", itemsShown: Int, metPolicy: Bool? = nil
    ) -> PresentationContext {
        PresentationContext(
            itemNoun: itemNoun, sources: sources.map(\.presentationStatus), itemsShown: itemsShown,
            metPolicy: metPolicy ?? meetsPolicy, isOffline: wasOffline, isOnline: wasOnline)
    }

    /// One line per source, then the totals.
    public var description: String {
        (sources.map(\.description) + ["\(deliveredCount)/\(sources.count) delivered (\(policy)) in \(duration)"])
            .joined(separator: "\n")
    }
}
