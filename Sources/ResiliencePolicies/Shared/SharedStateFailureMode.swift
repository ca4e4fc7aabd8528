/// What a shared limiter or breaker does while its store (a ``RateCoordinationStore`` or a
/// ``BreakerCoordinationStore``) cannot be reached.
public enum SharedStateFailureMode: Hashable, Sendable, CustomStringConvertible {
    /// Keep working locally: a limiter admits at its share of the limit (the shared rate divided by
    /// `expectedReplicas`), a breaker keeps counting and tripping on this replica's own calls.
    case failOpen(expectedReplicas: Int)
    /// Stop: a limiter rejects every call, a breaker rejects every call, until the store answers again.
    case failClosed

    /// `fail-open` or `fail-closed`.
    public var description: String {
        switch self {
        case .failOpen: "fail-open"
        case .failClosed: "fail-closed"
        }
    }
}

/// When the coordination store stopped answering, and when to try it again.
struct StoreOutage: Hashable, Sendable {
    var since: ResilienceInstant
    var nextAttempt: ResilienceInstant
}
