import ResilienceCore

extension DefaultErrorPresenter {
    /// The one message for the multi-source fetch `context` describes, or `nil` when every source delivered
    /// live and the policy was met.
    ///
    /// - Some source delivered nothing: the failure explained is ``headline(of:)``.
    /// - Every source delivered but some only from a cache: "Showing saved jobs from Lever (5 minutes old)",
    ///   with no countdown (waiting would not change what is shown) and the code of why the first cached
    ///   source needed its cache.
    /// - A fetch that missed its policy without any recorded failure is explained as an unknown failure.
    /// - Offline (``PresentationContext/isOffline``) explains everything: "You're offline. Showing jobs from
    ///   5 minutes ago. 3 changes will be sent when you're back online."
    public func present(_ context: PresentationContext) -> UserFacingError? {
        if context.isOffline {
            return offline(headline(of: context), context)
        }
        if let failure = headline(of: context) { return present(failure, context: context) }
        if let cached = cachedOnly(context) { return cached }
        return context.metPolicy ? nil : present(.unknown, context: context)
    }

    /// The failure this presenter explains for a multi-source fetch, or `nil` when no source is unavailable
    /// (every source delivered, live or from a cache or fallback, or only cancellations were recorded).
    ///
    /// Only the sources the message names as unavailable (``PresentationContext/unavailableSources``) count:
    /// a source served from a cache is never the reason for the headline's category, code or countdown.
    /// The category is the one most of them failed with (offline explains everything, so the most common
    /// wins); ties go to the category earlier in ``headlineOrder``. Category and code are the first such
    /// source's. The countdown (`retryAfter`) is set only when every unavailable source has a retry time,
    /// and it is the earliest of them: the soonest moment retrying can help, never a promise that a source
    /// without a retry time will be back.
    public func headline(of context: PresentationContext) -> FailureClassification? {
        let failures = context.unavailableSources.compactMap(\.failure)
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
        guard var headline = failures.first(where: { $0.category == category }) else { return nil }
        headline.retryAfter = Self.countdown(failures)
        return headline
    }

    /// The earliest retry time among `failures`, when every one of them has a positive one; else `nil`.
    static func countdown(_ failures: [FailureClassification]) -> Duration? {
        var earliest: Duration?
        for failure in failures {
            guard let retryAfter = failure.retryAfter, retryAfter > .zero else { return nil }
            earliest = min(earliest ?? retryAfter, retryAfter)
        }
        return earliest
    }

    /// Categories in the order ``headline(of:)`` prefers them when equally common: the most actionable first.
    public static let headlineOrder: [FailureCategory] = [
        .networkUnreachable, .rateLimited, .authentication, .insecureTransport, .serverError, .timeout, .transient,
        .invalidResponse, .notFound, .clientError, .circuitOpen, .throttled,
    ]

    /// "Saved: Lever (5 minutes old) and RSS." for the sources of `context` served from a cache, or `nil`
    /// when none was.
    func cachedNote(_ context: PresentationContext, key: String) -> String? {
        let cached = context.sources.filter(\.servedFromCache)
        guard !cached.isEmpty else { return nil }
        let names = cached.map { source in
            guard let age = source.cacheAge else { return source.displayName }
            return strings.string(
                "cached.entry", ["source": source.displayName, "age": timeFormatter.string(forAge: age)])
        }
        return strings.string(key, ["names": strings.list(names), "noun": context.itemNoun])
    }

    /// The offline message: what is on screen and how old it is, and what waits to be sent (a warning while
    /// something is on screen, an error when nothing is). With a known
    /// offline path (``PresentationContext/isOffline``) there is no Retry button (the app refreshes once the
    /// path is back); offline inferred from a failure alone keeps it. Its code is `failure`'s when that failed
    /// for lack of a network, else `NET_001` (no connection): a server's failure never lends it its code.
    func offline(_ failure: FailureClassification?, _ context: PresentationContext) -> UserFacingError {
        var message =
            context.dataAge.map { age in
                strings.string(
                    "offline.message.data", ["noun": context.itemNoun, "age": timeFormatter.string(forAge: age)])
            } ?? strings.string("offline.message")
        if context.queuedMutations > 0 {
            let key = context.queuedMutations == 1 ? "offline.queued.one" : "offline.queued.other"
            message += " " + strings.string(key, ["count": String(context.queuedMutations)])
        }
        let reason =
            failure.flatMap { $0.category == .networkUnreachable ? $0 : nil }
            ?? FailureClassification(category: .networkUnreachable, code: .noConnection)
        return UserFacingError(
            title: strings.string("offline.title"), message: message,
            severity: context.itemsShown > 0 || context.dataAge != nil ? .warning : .error, isRecoverable: true,
            suggestedAction: context.isOffline ? nil : strings.string(refreshAction.key),
            showsRetry: !context.isOffline, retryAfter: nil, technicalDetails: details(reason, context: context),
            code: reason.code, isOffline: true)
    }

    /// The message for a fetch in which every source delivered but some only from a cache.
    private func cachedOnly(_ context: PresentationContext) -> UserFacingError? {
        guard context.unavailableSources.isEmpty,
            let message = cachedNote(context, key: "cached.message"),
            let first = context.sources.first(where: \.servedFromCache)
        else { return nil }
        var reason = first.classification ?? .unknown
        reason.retryAfter = nil
        return UserFacingError(
            title: strings.string("cached.title"), message: message, severity: .info, isRecoverable: true,
            suggestedAction: nil, showsRetry: false, retryAfter: nil,
            technicalDetails: details(reason, context: context), code: reason.code)
    }
}
