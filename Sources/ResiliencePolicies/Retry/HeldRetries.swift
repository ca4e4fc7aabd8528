/// The retries a ``RetryBudget`` holds until its scope's next first attempt answers
/// (``RetryBudget/holdRetry(afterFailureAt:until:priority:)``), kept under the budget's lock: each waiter from
/// the moment it claims its place until it is answered, gives up or is cancelled, and resumed exactly once,
/// after the lock is released.
struct HeldRetries: Sendable {
    /// How a held retry ends.
    enum Outcome: Sendable {
        /// A first attempt that started after the failure succeeded and the budget granted the retry.
        case go
        /// A first attempt failed, the breaker rejected a call, the budget had no retry left for the evidence,
        /// or the hold's time limit passed.
        case giveUp
        /// The waiting task was cancelled.
        case cancelled
    }

    /// A held retry answered, resumed once the lock is released.
    struct Release {
        var continuation: CheckedContinuation<Outcome, Never>
        var outcome: Outcome
    }

    /// A waiter between claiming its place and being answered.
    private enum Waiting {
        /// Claimed its place but has not suspended yet; holds the answer that came first, if any.
        case arriving(early: Outcome?)
        /// Suspended until it is answered.
        case held(CheckedContinuation<Outcome, Never>)
    }

    private struct Entry {
        var place: Int
        /// When the request's first attempt failed: only a first attempt that started later vouches for it.
        var failure: Duration
        var yieldsReserve: Bool
        var waiting: Waiting
    }

    /// The waiters, oldest first (a success grants the oldest first).
    private var entries: [Entry] = []
    private var nextPlace = 0

    /// Whether nobody is held or arriving.
    var isEmpty: Bool { entries.isEmpty }

    /// Claims a place for a retry of a request whose first attempt failed at `failure`.
    mutating func claim(failure: Duration, yieldsReserve: Bool) -> Int {
        let place = nextPlace
        nextPlace &+= 1
        entries.append(
            Entry(place: place, failure: failure, yieldsReserve: yieldsReserve, waiting: .arriving(early: nil)))
        return place
    }

    /// Suspends the waiter at `place` on `continuation`, or returns the answer that came before it could
    /// (and frees its place).
    mutating func hold(_ place: Int, _ continuation: CheckedContinuation<Outcome, Never>) -> Outcome? {
        guard let index = entries.firstIndex(where: { $0.place == place }) else { return .cancelled }
        if case .arriving(let early?) = entries[index].waiting {
            entries.remove(at: index)
            return early
        }
        entries[index].waiting = .held(continuation)
        return nil
    }

    /// Ends the wait at `place` with `outcome` (its time limit or its task's cancellation), unless it was
    /// answered already.
    mutating func end(_ place: Int, with outcome: Outcome) -> [Release] {
        guard let index = entries.firstIndex(where: { $0.place == place }) else { return [] }
        switch entries[index].waiting {
        case .held(let continuation):
            entries.remove(at: index)
            return [Release(continuation: continuation, outcome: outcome)]
        case .arriving(nil):
            entries[index].waiting = .arriving(early: outcome)
            return []
        case .arriving:
            return []
        }
    }

    /// Answers every waiter with `outcome` (a first attempt failed, or the breaker rejected a call).
    mutating func answer(with outcome: Outcome) -> [Release] {
        answer { _ in outcome }
    }

    /// Answers the waiters whose failure came before a first attempt that started at `start` and succeeded,
    /// oldest first: `go` where `withdraw` (given the failure and whether the request yields the reserve)
    /// takes a retry from the budget, else `giveUp`.
    mutating func answer(
        evidenceStartedAt start: Duration, withdraw: (ResilienceInstant, Bool) -> Bool
    ) -> [Release] {
        answer { entry in
            guard entry.failure < start else { return nil }
            return withdraw(ResilienceInstant(offset: entry.failure), entry.yieldsReserve) ? .go : .giveUp
        }
    }

    /// Answers each waiter `decide` has an outcome for, oldest first: a held one leaves and is released, an
    /// arriving one keeps the answer for when it suspends.
    private mutating func answer(_ decide: (Entry) -> Outcome?) -> [Release] {
        var released: [Release] = []
        var kept: [Entry] = []
        kept.reserveCapacity(entries.count)
        for entry in entries {
            switch entry.waiting {
            case .arriving(.some):
                kept.append(entry)
            case .arriving(nil):
                var answered = entry
                if let outcome = decide(entry) { answered.waiting = .arriving(early: outcome) }
                kept.append(answered)
            case .held(let continuation):
                if let outcome = decide(entry) {
                    released.append(Release(continuation: continuation, outcome: outcome))
                } else {
                    kept.append(entry)
                }
            }
        }
        entries = kept
        return released
    }

    /// Resumes the answered waiters (after the lock is released).
    static func resume(_ released: [Release]) {
        for release in released { release.continuation.resume(returning: release.outcome) }
    }
}
