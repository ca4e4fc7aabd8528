import ResilienceCore

/// What wakes ``SyncEngine/run()`` between passes: an enqueue, a wake-up call, the end of a wait, or the
/// task's cancellation.
///
/// A signal sent while nobody waits is kept, so the next wait returns at once. The timer that ends a wait runs
/// as a child task of the waiting task, so it inherits the task's executor preference: on a deterministic
/// runtime (a single-threaded simulation executor with a virtual clock) the engine's waits run on that
/// executor like everything else.
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
    func wait(orAfter delay: Duration?, on clock: ResilienceClock) async {
        if takePending() || delay == .zero { return }
        await withTaskGroup(of: Void.self) { group in
            if let delay {
                group.addTask {
                    if (try? await clock.sleep(for: delay)) != nil { self.signal() }
                }
            }
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
            group.cancelAll()
        }
        // The timer may have fired while the wait ended for another reason: that signal is spent.
        _ = takePending()
    }

    private func takePending() -> Bool {
        state.withLock { state in
            defer { state.pending = false }
            return state.pending
        }
    }
}
