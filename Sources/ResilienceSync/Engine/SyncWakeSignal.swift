import ResilienceCore

/// What wakes ``SyncEngine/run()`` between passes: an enqueue, a wake-up call, the end of a wait, or the
/// task's cancellation.
///
/// A signal sent while nobody waits is kept, so the next wait returns at once. A limited wait and its timer
/// run as child tasks of the waiting task (Core's timer race), so they inherit the task's executor preference:
/// on a deterministic runtime (a single-threaded simulation executor with a virtual clock) the engine's waits
/// run on that executor like everything else.
final class SyncWakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = LockedState(initialState: State())

    /// Wakes the waiter, or the next wait if nobody waits now.
    func signal() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
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

    /// Waits for a signal or the task's cancellation; returns at once for a kept signal.
    private func waitForSignal() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.pending || Task.isCancelled {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            signal()
        }
    }

    private func takePending() -> Bool {
        state.withLock { state in
            defer { state.pending = false }
            return state.pending
        }
    }
}
