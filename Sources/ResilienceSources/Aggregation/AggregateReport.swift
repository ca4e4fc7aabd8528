import ResilienceCore

/// What happened to every source in one multi-source fetch, in registration order.
public struct AggregateReport: Hashable, Sendable, CustomStringConvertible {
    /// One report per registered source, in registration order.
    public var sources: [SourceReport]
    /// The completion policy the fetch ran under.
    public var policy: CompletionPolicy
    /// Time from start to end of the whole fetch, on the aggregator's clock.
    public var duration: Duration

    /// Creates a report.
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

    /// The one failure to present, or `nil` when every source delivered live.
    ///
    /// Picks the category most sources failed with (offline explains everything, so the most common wins);
    /// ties go to the more actionable category (network unreachable, rate limited, authentication, insecure
    /// transport, server error, timeout, …). Within the category, the failure with the longest `retryAfter`
    /// wins (so a countdown is honest), then the first in registration order. Failures of sources served from
    /// cache count too: the cache is stale data the user should know about.
    public var presentedFailure: FailureClassification? {
        let failures = sources.filter { $0.status != .succeeded && $0.status != .servedByFallback }
            .compactMap(\.classification).filter { $0.category != .cancelled }
        guard !failures.isEmpty else { return nil }
        var counts: [FailureCategory: Int] = [:]
        for failure in failures { counts[failure.category, default: 0] += 1 }
        let rank = { (category: FailureCategory) -> Int in
            Self.actionableOrder.firstIndex(of: category) ?? Self.actionableOrder.count
        }
        let category = counts.keys.max { lhs, rhs in
            let (left, right) = (counts[lhs, default: 0], counts[rhs, default: 0])
            if left != right { return left < right }
            return rank(lhs) > rank(rhs)
        }
        let candidates = failures.filter { $0.category == category }
        var best = candidates[0]
        for candidate in candidates.dropFirst() where (candidate.retryAfter ?? .zero) > (best.retryAfter ?? .zero) {
            best = candidate
        }
        return best
    }

    /// Categories in the order a presenter prefers them when equally common.
    public static let actionableOrder: [FailureCategory] = [
        .networkUnreachable, .rateLimited, .authentication, .insecureTransport, .serverError, .timeout, .transient,
        .invalidResponse, .notFound, .clientError, .circuitOpen, .throttled,
    ]

    /// The report as a ``PresentationContext`` for an ``ErrorPresenter``.
    public func presentationContext(itemNoun: String = "items", itemsShown: Int) -> PresentationContext {
        PresentationContext(itemNoun: itemNoun, sources: sources.map(\.presentationStatus), itemsShown: itemsShown)
    }

    /// One line per source, then the totals.
    public var description: String {
        (sources.map(\.description) + ["\(deliveredCount)/\(sources.count) delivered (\(policy)) in \(duration)"])
            .joined(separator: "\n")
    }
}
