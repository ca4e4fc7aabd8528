/// How an admitted call ended, for limiters that learn from outcomes (adaptive throttling, bulkheads).
public enum RateLimitOutcome: Hashable, Sendable {
    /// The backend accepted the call.
    case accepted
    /// The backend rejected or failed it (counts against adaptive throttling).
    case rejectedByBackend
    /// The call was cancelled or failed locally; the backend's acceptance is unknown.
    case abandoned
}
