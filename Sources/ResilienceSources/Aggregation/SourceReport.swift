import ResilienceCore

/// What happened to one source in a multi-source fetch: enough for a status table row.
public struct SourceReport: Hashable, Sendable, CustomStringConvertible {
    /// How a source ended. An open set of static members.
    public struct Status: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        /// The identifier (`"succeeded"`).
        public let rawValue: String
        /// Creates a status.
        ///
        /// - Parameter rawValue: The identifier, in kebab-case like the predefined statuses (`"served-from-cache"`).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// The source delivered live items.
        public static let succeeded = Status(rawValue: "succeeded")
        /// The source failed and nothing replaced it; ``SourceReport/classification`` says how.
        public static let failed = Status(rawValue: "failed")
        /// The source was not called because its circuit breaker is open.
        public static let skippedCircuitOpen = Status(rawValue: "skipped-circuit-open")
        /// The source failed (or was skipped) and cached items were served instead.
        public static let servedFromCache = Status(rawValue: "served-from-cache")
        /// A fallback alternative of the source delivered (``SourceReport/servedBy`` names it).
        public static let servedByFallback = Status(rawValue: "served-by-fallback")
        /// The source was cancelled (or never started) because the fetch could no longer meet its policy or its
        /// caller cancelled it, whatever error the source threw when cancelled; its classification is a
        /// cancellation.
        public static let cancelled = Status(rawValue: "cancelled")

        /// True when the source contributed items (live, fallback or cache).
        public var delivered: Bool { self == .succeeded || self == .servedByFallback || self == .servedFromCache }
    }

    /// The source.
    public var id: SourceID
    /// Its name for people.
    public var displayName: String
    /// Its kind.
    public var kind: SourceKind
    /// How it ended.
    public var status: Status
    /// How many items it contributed (before de-duplication).
    public var itemCount: Int
    /// How many times the pipeline called the source (retries included; 0 when skipped).
    public var attempts: Int
    /// Time from start to end of this source's part, on the aggregator's clock.
    public var duration: Duration
    /// The last failure, if any: for failed and skipped sources the failure, for cache-served ones why the
    /// cache was needed, for sources that succeeded after retries the last failed attempt's (an attempt that
    /// was cancelled, such as a hedge that lost, did not fail).
    public var classification: FailureClassification?
    /// The fallback alternative that served, if any.
    public var servedBy: String?
    /// The age of cached items, if served from cache.
    public var cacheAge: Duration?
    /// True when served cached items were older than the cache's freshness window.
    public var isStale: Bool

    /// Creates a report.
    ///
    /// - Parameters:
    ///   - id: The source's identifier.
    ///   - displayName: Its name for people.
    ///   - kind: Its kind.
    ///   - status: How it ended.
    ///   - itemCount: How many items it contributed (before de-duplication). Default: `0`.
    ///   - attempts: How many times the pipeline called the source (retries included; 0 when skipped). Default: `0`.
    ///   - duration: Time from start to end of this source's part, on the aggregator's clock. Default: `.zero`.
    ///   - classification: The last failure, if any: for failed and skipped sources the failure, for cache-served ones
    ///     why the cache was needed, for sources that succeeded after retries the last failed attempt's.
    ///   - servedBy: The fallback alternative that served, if any.
    ///   - cacheAge: The age of cached items, if served from cache.
    ///   - isStale: True when served cached items were older than the cache's freshness window. Default: `false`.
    public init(
        id: SourceID, displayName: String, kind: SourceKind, status: Status, itemCount: Int = 0, attempts: Int = 0,
        duration: Duration = .zero, classification: FailureClassification? = nil, servedBy: String? = nil,
        cacheAge: Duration? = nil, isStale: Bool = false
    ) {
        self.id = id
        self.displayName = displayName
        self.kind = kind
        self.status = status
        self.itemCount = itemCount
        self.attempts = attempts
        self.duration = duration
        self.classification = classification
        self.servedBy = servedBy
        self.cacheAge = cacheAge
        self.isStale = isStale
    }

    /// This source's row in a ``PresentationContext``: delivered sources (live, fallback, cache) have no
    /// failure, as ``PresentationContext/SourceStatus`` defines; the last failure is kept either way.
    public var presentationStatus: PresentationContext.SourceStatus {
        PresentationContext.SourceStatus(
            id: id, displayName: displayName, kind: kind,
            failure: status.delivered ? nil : (classification ?? .unknown), classification: classification,
            servedFromCache: status == .servedFromCache, isStale: isStale,
            cacheAge: status == .servedFromCache ? cacheAge : nil)
    }

    /// `greenhouse-acme: failed (server-error/NET_014) 0 items, 3 attempts, 1.2 seconds`.
    public var description: String {
        var text = "\(id): \(status)"
        if let classification, status != .succeeded { text += " (\(classification.category)/\(classification.code))" }
        if let servedBy { text += " by \(servedBy)" }
        if let cacheAge { text += " age \(cacheAge)\(isStale ? " stale" : "")" }
        return text + " \(itemCount) items, \(attempts) attempts, \(duration)"
    }
}
