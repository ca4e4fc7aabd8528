import ResilienceCore

/// What a ``SyncEngine`` is doing, for a UI and for telemetry.
public enum SyncState: Hashable, Sendable, CustomStringConvertible {
    /// Nothing to do, or the last pass succeeded.
    case idle
    /// A pass is sending mutations.
    case syncing
    /// The server rate-limited the queue; nothing is sent before `until` (on the engine's clock).
    case rateLimited(until: ResilienceInstant, pending: Int)
    /// The network is unavailable; the queue waits.
    case offline
    /// The last pass ended with failures; they clear on the next pass.
    case error(String)

    /// `idle`, `syncing`, `rate-limited(until +30.0 seconds, 12 pending)`, `offline`, `error(…)`.
    public var description: String {
        switch self {
        case .idle: "idle"
        case .syncing: "syncing"
        case .rateLimited(let until, let pending): "rate-limited(until \(until), \(pending) pending)"
        case .offline: "offline"
        case .error(let message): "error(\(message))"
        }
    }

    /// The state's name without its values (`"rate-limited"`), for grouping.
    public var name: String {
        switch self {
        case .idle: "idle"
        case .syncing: "syncing"
        case .rateLimited: "rate-limited"
        case .offline: "offline"
        case .error: "error"
        }
    }
}
