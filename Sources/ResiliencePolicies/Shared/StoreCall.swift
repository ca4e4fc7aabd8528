/// Runs one coordination store call with a deadline on `clock`, returning when either finishes.
///
/// The call runs in its own task and is cancelled when the deadline passes; the caller gets
/// ``CoordinationStoreError/timedOut(_:)`` at the deadline even when the call ignores cancellation, so a
/// stalled network store can never hang a policy. Cancelling the caller cancels the call and answers
/// ``CoordinationStoreError/unavailable(_:)``.
func callStore<Value: Sendable>(
    clock: ResilienceClock, deadline: Duration,
    _ operation: @escaping @Sendable () async throws(CoordinationStoreError) -> Value
) async -> Result<Value, CoordinationStoreError> {
    let gate = StoreCallGate<Value>()
    return await withTaskCancellationHandler {
        await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Value, CoordinationStoreError>, Never>) in
            gate.install(continuation)
            let call = Task {
                do throws(CoordinationStoreError) {
                    gate.finish(.success(try await operation()))
                } catch {
                    gate.finish(.failure(error))
                }
            }
            let timer = Task {
                do {
                    try await clock.sleep(for: deadline)
                    gate.finish(.failure(.timedOut(deadline)))
                } catch {}
            }
            gate.attach(call: call, timer: timer)
        }
    } onCancel: {
        gate.finish(.failure(.unavailable("cancelled")))
    }
}

/// Resumes a store call's continuation exactly once, then cancels the losing task.
final class StoreCallGate<Value: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<Value, CoordinationStoreError>, Never>?
        var pending: Result<Value, CoordinationStoreError>?
        var finished = false
        var tasks: [Task<Void, Never>] = []
    }

    private let state = LockedState(initialState: State())

    func install(_ continuation: CheckedContinuation<Result<Value, CoordinationStoreError>, Never>) {
        let early = state.withLock { state -> Result<Value, CoordinationStoreError>? in
            if let pending = state.pending { return pending }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func attach(call: Task<Void, Never>, timer: Task<Void, Never>) {
        let finished = state.withLock { state -> Bool in
            if !state.finished { state.tasks = [call, timer] }
            return state.finished
        }
        if finished {
            call.cancel()
            timer.cancel()
        }
    }

    func finish(_ result: Result<Value, CoordinationStoreError>) {
        let (continuation, tasks) = state.withLock {
            state -> (CheckedContinuation<Result<Value, CoordinationStoreError>, Never>?, [Task<Void, Never>]) in
            guard !state.finished else { return (nil, []) }
            state.finished = true
            defer {
                state.continuation = nil
                state.tasks = []
            }
            if state.continuation == nil { state.pending = result }
            return (state.continuation, state.tasks)
        }
        for task in tasks { task.cancel() }
        continuation?.resume(returning: result)
    }
}
