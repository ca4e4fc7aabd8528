import ResilienceCore

/// One row of the terminal per-source status table: what happened to one source in one fetch.
public struct SourceStatusRow: Sendable, Hashable {
    /// A source's outcome. An open set: add your own with `Status("stale")`.
    public struct Status: OpenVocabulary {
        /// The label shown in the table.
        public let rawValue: String
        /// Creates a status.
        ///
        /// - Parameter rawValue: The label shown in the table.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Fetched fresh items.
        public static let ok: Status = "ok"
        /// Served from a cache or a fallback.
        public static let cached: Status = "cached"
        /// Failed.
        public static let failed: Status = "failed"
        /// Not tried (breaker open, rate limited).
        public static let skipped: Status = "skipped"
    }

    /// The source's name.
    public var source: String
    /// Its outcome.
    public var status: Status
    /// Items it contributed.
    public var items: Int
    /// Attempts made.
    public var attempts: Int
    /// Its breaker's state, if known.
    public var breakerState: BreakerState?
    /// The last failure's code, if any.
    public var lastErrorCode: FailureCode?

    /// Creates a row.
    ///
    /// - Parameters:
    ///   - source: The source's name.
    ///   - status: Its outcome.
    ///   - items: Items it contributed. Default: `0`.
    ///   - attempts: Attempts made. Default: `0`.
    ///   - breakerState: Its breaker's state, if known.
    ///   - lastErrorCode: The last failure's code, if any.
    public init(
        source: String, status: Status, items: Int = 0, attempts: Int = 0, breakerState: BreakerState? = nil,
        lastErrorCode: FailureCode? = nil
    ) {
        self.source = source
        self.status = status
        self.items = items
        self.attempts = attempts
        self.breakerState = breakerState
        self.lastErrorCode = lastErrorCode
    }
}
