import ResilienceCore

/// What wakes ``SyncEngine/run()`` between passes: an enqueue, a wake-up call, the end of a wait, or the
/// task's cancellation.
///
/// A signal wakes every wait in progress (an app may run more than one loop); one sent while nobody waits is
/// kept, so the next wait returns at once. Cancelling a waiting task ends its own wait only. A limited wait and
/// its timer run as child tasks of the waiting task (Core's timer race), so they inherit the task's executor
/// preference: on a deterministic runtime (a single-threaded simulation executor with a virtual clock) the
/// engine's waits run on that executor like everything else.
final class SyncWakeSignal: Sendable {
    private struct State {
        var pending = false
        var nextWaiter = 0
        /// Every wait now in progress (several when an app runs more than one ``SyncEngine/run()`` loop).
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = LockedState(initialState: State())

    /// Wakes every waiter, or the next wait if nobody waits now.
    func signal() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.waiters.isEmpty else {
                state.pending = true
                return []
            }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits for a signal, for `delay` on `clock` (`nil`: no time limit), or for the task's cancellation,
    /// whichever comes first; returns at once for a kept signal or a zero delay. Clears any signal sent meanwhile.
    ///
    /// A limited wait runs through Core's timer race (`withDeadline(after:clock:operation:)`): when `delay`
    /// passes, the race cancels the wait, which ends it.
    func wait(orAfter delay: Duration?, on clock: ResilienceClock) async {
        if takePending() || delay == .zero { return }
        if let delay {
            _ = try? await withDeadline(after: delay, clock: clock) { await self.waitForSignal() }
        } else {
            await waitForSignal()
        }
        // The wait may have ended for the time or a cancellation while a signal arrived: that signal is spent.
        _ = takePending()
    }

    /// Waits for a signal or the task's cancellation; returns at once for a kept signal. A cancellation ends
    /// only this wait.
    private func waitForSignal() async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    private func takePending() -> Bool {
        state.withLock { state in
            defer { state.pending = false }
            return state.pending
        }
    }
}
