import ResilienceCore

/// Runs a shared policy's calls to its coordination store, each within the store deadline, and never waits
/// for one past it.
///
/// Each call runs in a task of its own (a ``SingleFlight`` run) and its caller waits through Core's timer
/// race (`withDeadline(after:clock:operation:)`). When the deadline passes, the caller stops waiting at once
/// and gets ``CoordinationStoreError/timedOut(_:)``, and the call is cancelled. A store that honours
/// cancellation ends it there; one that does not (a client blocked in a socket read, a connection pool that
/// keeps a cancelled request queued) keeps running in its own task, *abandoned*: its answer is dropped, and
/// the policy, which never waits for the store on a caller's path, has already moved to its failure mode.
///
/// Abandoned calls are bounded: while ``abandonedLimit`` of them are still running, a new call fails at
/// once with ``CoordinationStoreError/unavailable(_:)`` without reaching the store, so a store that hangs
/// for good costs a fixed number of tasks, not one per retry. Each abandoned call that ends frees its place,
/// and the next retry reaches the store again.
final class StoreCaller: Sendable {
    /// How many abandoned calls may still be running before new calls fail without reaching the store.
    static let abandonedLimit = 4

    private struct Calls {
        var started: UInt64 = 0
        /// Calls whose operation has not ended yet.
        var running: Set<UInt64> = []
        /// Running calls whose caller stopped waiting (deadline or cancellation).
        var abandoned: Set<UInt64> = []
        /// Calls whose caller is waiting: from before the deadline is set until the caller has its result.
        var awaited = 0
    }

    private let clock: ResilienceClock
    private let deadline: Duration
    private let runs = SingleFlight<UInt64>()
    private let calls = LockedState(initialState: Calls())

    /// Creates a caller whose calls each get `deadline` on `clock`.
    init(clock: ResilienceClock, deadline: Duration) {
        self.clock = clock
        self.deadline = deadline
    }

    /// Runs `operation` within the deadline.
    ///
    /// - Returns: What the store answered; ``CoordinationStoreError/timedOut(_:)`` when the deadline passed
    ///   first; ``CoordinationStoreError/unavailable(_:)`` when the caller was cancelled or too many abandoned
    ///   calls are still running.
    func call<Value: Sendable>(
        _ operation: @escaping @Sendable () async throws(CoordinationStoreError) -> Value
    ) async -> Result<Value, CoordinationStoreError> {
        let number = calls.withLock { calls -> UInt64? in
            guard calls.abandoned.count < Self.abandonedLimit else { return nil }
            calls.started &+= 1
            calls.running.insert(calls.started)
            calls.awaited += 1
            return calls.started
        }
        guard let number else {
            return .failure(
                .unavailable(
                    "\(Self.abandonedLimit) earlier calls ignored their deadline and are still running"))
        }
        let calls = calls
        defer { calls.withLock { $0.awaited -= 1 } }
        do {
            let (value, _) = try await withDeadline(after: deadline, clock: clock) {
                try await runs.run(number) { () async throws -> Value in
                    defer {
                        calls.withLock { calls in
                            calls.running.remove(number)
                            calls.abandoned.remove(number)
                        }
                    }
                    return try await operation()
                }
            }
            return .success(value)
        } catch is DeadlineExceededError {
            abandon(number)
            return .failure(.timedOut(deadline))
        } catch let error as CoordinationStoreError where !Task.isCancelled {
            return .failure(error)
        } catch {
            abandon(number)
            return .failure(.unavailable("cancelled"))
        }
    }

    /// The calls whose callers are waiting now, counted from before each call's deadline is set until its caller
    /// has the result: a test that moves a manual clock by hand waits for none, so that no call's deadline passes
    /// while its task (or its caller's) only waits for a thread.
    var callsAwaited: Int { calls.withLock { $0.awaited } }

    /// Counts a call whose caller stopped waiting, unless it has already ended.
    private func abandon(_ number: UInt64) {
        calls.withLock { calls in
            if calls.running.contains(number) { calls.abandoned.insert(number) }
        }
    }
}
