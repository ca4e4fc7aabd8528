import Foundation
import ResilienceCore

/// The breaker's snapshot as saved in the store's metadata table, stamped with the wall-clock time, so the
/// next process can age the cooldown by the time it was not running.
struct PersistedBreakerState: Codable, Hashable, Sendable {
    var snapshot: BreakerSnapshot
    var savedAt: Date
    var consecutiveRateLimitErrors: Int

    /// The snapshot with its remaining cooldown reduced by the wall time since it was saved (never below zero,
    /// and not reduced at all when the wall clock went backwards).
    func aged(now: Date) -> BreakerSnapshot {
        var aged = snapshot
        let elapsed = now.timeIntervalSince(savedAt)
        guard elapsed > 0, aged.remainingOpen > .zero else { return aged }
        let remaining = aged.remainingOpen - .milliseconds(Int64(min(elapsed, 1e9) * 1000))
        aged.remainingOpen = max(remaining, .zero)
        return aged
    }
}
