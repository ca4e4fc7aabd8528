import ResilienceCore

extension DefaultErrorPresenter {
    /// The one message for the multi-source fetch `context` describes, or `nil` when every source delivered
    /// live and the policy was met. The failure explained is ``headline(of:)``; a fetch that missed its
    /// policy without any recorded failure is explained as an unknown failure.
    public func present(_ context: PresentationContext) -> UserFacingError? {
        guard let failure = headline(of: context) ?? (context.metPolicy ? nil : .unknown) else { return nil }
        return present(failure, context: context)
    }

    /// The failure this presenter explains for a multi-source fetch, or `nil` when every source delivered
    /// live (or nothing but cancellations was recorded).
    ///
    /// Picks the category most sources failed with (offline explains everything, so the most common wins);
    /// ties go to the category earlier in ``headlineOrder``. Within the category, the failure with the
    /// longest `retryAfter` wins (so a countdown is honest), then the first in source order. Failures of
    /// sources served from a cache count too: the cache is stale data the person should know about; sources
    /// that succeeded live or through a fallback do not.
    public func headline(of context: PresentationContext) -> FailureClassification? {
        let failures = context.sources.filter { $0.failure != nil || $0.servedFromCache }
            .compactMap(\.classification).filter { $0.category != .cancelled }
        guard !failures.isEmpty else { return nil }
        var counts: [FailureCategory: Int] = [:]
        for failure in failures { counts[failure.category, default: 0] += 1 }
        let order = Self.headlineOrder
        let rank = { (category: FailureCategory) -> Int in order.firstIndex(of: category) ?? order.count }
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

    /// Categories in the order ``headline(of:)`` prefers them when equally common: the most actionable first.
    public static let headlineOrder: [FailureCategory] = [
        .networkUnreachable, .rateLimited, .authentication, .insecureTransport, .serverError, .timeout, .transient,
        .invalidResponse, .notFound, .clientError, .circuitOpen, .throttled,
    ]
}
