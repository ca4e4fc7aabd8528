import ResilienceCore

/// A gate that holds scripted operations until the test opens it: the operation calls ``pass()``, the test
/// checks who is waiting, then calls ``open()``. Cancelling a task that waits at the gate ends its wait with
/// `CancellationError`.
///
/// ```swift
/// let gate = CallGate()
/// async let value = flights.run("k") { try await gate.pass(); return 42 }
/// ```
public final class CallGate: Sendable {
    private struct State {
        var isOpen = false
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        var passed = 0
        var cancelled = 0
    }

    private let state = LockedState(initialState: State())

    /// Creates a closed gate.
    public init() {}

    /// How many tasks wait at the gate now.
    public var waitingCount: Int { state.withLock { $0.waiters.count } }
    /// How many tasks have come to the gate (waiting, through or cancelled).
    public var arrivals: Int { state.withLock { $0.passed + $0.waiters.count + $0.cancelled } }
    /// How many waits ended by cancellation.
    public var cancellations: Int { state.withLock { $0.cancelled } }

    /// Returns once the gate is open (at once if it already is).
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled first.
    public func pass() async throws {
        let waiter = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Bool? in
                    if state.isOpen {
                        state.passed += 1
                        return true
                    }
                    if Task.isCancelled {
                        state.cancelled += 1
                        return false
                    }
                    state.waiters[waiter] = continuation
                    return nil
                }
                switch outcome {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let continuation = state.withLock { state in
                let continuation = state.waiters.removeValue(forKey: waiter)
                if continuation != nil { state.cancelled += 1 }
                return continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Opens the gate: every waiting task goes on, and later ones pass at once.
    public func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            state.passed += state.waiters.count
            defer { state.waiters = [:] }
            return state.waiters
        }
        for continuation in waiters.values { continuation.resume() }
    }
}
