import ResilienceCore

/// What one sync pass did.
public struct SyncReport: Hashable, Sendable, CustomStringConvertible {
    /// Mutations the server applied, including duplicates (409) counted as applied.
    public var synced = 0
    /// Of ``synced``, the duplicates whose local copy was deleted.
    public var duplicates = 0
    /// Failed attempts recorded against mutations that stay queued.
    public var failedAttempts = 0
    /// Mutations that exceeded their retry limit and moved to the failed list.
    public var movedToFailed = 0
    /// Rate-limit (429) responses met; they do not count against attempts.
    public var rateLimitResponses = 0
    /// 409 answers saying a request with the same idempotency key is still in progress (kept queued).
    public var inProgressConflicts = 0
    /// Requests sent (a batch counts once).
    public var requestsSent = 0
    /// Mutations still pending after the pass, as the store counts them (0 when the count failed). For a pass
    /// that did not start because another pass or a clear was under way, those pending when it returned.
    public var remaining = 0
    /// The state the pass ended in.
    public var finalState: SyncState = .idle
    /// When a stage of the pipeline held the pass back (an open breaker, a local rate limit, a full bulkhead):
    /// the instant, on the engine's clock, at which it expects to admit requests again. ``SyncEngine/run()``
    /// sleeps until then. `nil` when nothing held the pass back.
    public var nextAttempt: ResilienceInstant?

    /// Creates an empty report.
    public init() {}

    /// `synced 10 (1 duplicate), 2 failed attempts, 0 moved to failed, 3 × 429, 4 remaining → idle`.
    public var description: String {
        "synced \(synced) (\(duplicates) duplicate), \(failedAttempts) failed attempts, \(movedToFailed) moved to "
            + "failed, \(rateLimitResponses) × 429, \(remaining) remaining → \(finalState)"
    }
}
