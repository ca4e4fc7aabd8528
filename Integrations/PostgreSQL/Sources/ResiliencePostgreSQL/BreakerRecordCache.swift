import ResilienceCore

/// Breaker records one store instance read, kept while the database's notifications (`LISTEN`) are live and
/// say nothing changed, so a replica's breakers poll memory instead of the database.
///
/// Correctness rests on three rules: entries exist only while the listening connection is up (going live or
/// dropping clears them); every notification removes its key (an empty payload clears all); and a read
/// started before any invalidation that happened meanwhile is not stored (a generation counter), so a
/// notification can never be overtaken by the older answer it invalidated. Each entry also ages: its open
/// period and probe lease shrink with the time it spent in the cache, and it is dropped at the record's
/// expiry or after `lifetime`, whichever comes first.
final class BreakerRecordCache: Sendable {
    /// A record as the database answered it, with the durations relative to that answer.
    struct Answer: Sendable {
        var record: BreakerRecord?
        /// How long the probe holder's lease had left.
        var probeLeft: Duration
        /// How long the record had left to live.
        var expiresIn: Duration
    }

    private struct Entry {
        var answer: Answer
        var receivedAt: ContinuousClock.Instant
    }

    private struct State {
        var live = false
        var generation: UInt64 = 0
        var entries: [String: Entry] = [:]
    }

    private let state = LockedState(initialState: State())
    private let lifetime: Duration
    private let capacity: Int
    private let clock = ContinuousClock()

    init(lifetime: Duration, capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = max(1, capacity)
    }

    /// True while the listening connection is up.
    var isLive: Bool { state.withLock { $0.live } }

    /// The cached record (`.some(nil)`: known absent), or `nil` when the database must be asked.
    func lookup(_ key: String) -> BreakerRecord?? {
        let now = clock.now
        return state.withLock { state -> BreakerRecord?? in
            guard state.live, let entry = state.entries[key] else { return nil }
            let age = entry.receivedAt.duration(to: now)
            guard age < lifetime else {
                state.entries[key] = nil
                return nil
            }
            guard var record = entry.answer.record else { return .some(nil) }
            guard age < entry.answer.expiresIn else {
                state.entries[key] = nil
                return nil
            }
            record.remainingOpen = max(.zero, record.remainingOpen - age)
            if age >= entry.answer.probeLeft { record.probeHolder = nil }
            return .some(record)
        }
    }

    /// The generation a read starts in, or `nil` when nothing it returns may be cached.
    func beginRead() -> UInt64? {
        state.withLock { $0.live ? $0.generation : nil }
    }

    /// Keeps an answer unless an invalidation happened since the read began.
    func store(_ answer: Answer, for key: String, readIn generation: UInt64, receivedAt: ContinuousClock.Instant) {
        state.withLock { state in
            guard state.live, state.generation == generation else { return }
            if state.entries.count >= capacity, state.entries[key] == nil { state.entries.removeAll() }
            state.entries[key] = Entry(answer: answer, receivedAt: receivedAt)
        }
    }

    /// Forgets `key` (every key when it is empty): another writer changed it.
    func invalidate(_ key: String) {
        state.withLock { state in
            state.generation &+= 1
            if key.isEmpty { state.entries.removeAll() } else { state.entries[key] = nil }
        }
    }

    /// Starts or stops caching as the listening connection comes up or goes down; forgets everything.
    func setLive(_ live: Bool) {
        state.withLock { state in
            state.live = live
            state.generation &+= 1
            state.entries.removeAll()
        }
    }
}
