import ResilienceCore

/// Fans the engine's state out to any number of `AsyncStream`s; readable without hopping onto the actor.
final class SyncStateBroadcaster: Sendable {
    private struct State {
        var current: SyncState
        var nextID = 0
        var continuations: [Int: AsyncStream<SyncState>.Continuation] = [:]
    }

    private let state: LockedState<State>

    init(initial: SyncState) {
        state = LockedState(initialState: State(current: initial))
    }

    var current: SyncState { state.withLock { $0.current } }

    /// A stream that starts with the current state and then yields every change (keeping the newest 64 if the
    /// reader falls behind).
    func stream() -> AsyncStream<SyncState> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SyncState.self, bufferingPolicy: .bufferingNewest(64))
        let (id, current) = state.withLock { state -> (Int, SyncState) in
            defer { state.nextID += 1 }
            state.continuations[state.nextID] = continuation
            return (state.nextID, state.current)
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
        }
        continuation.yield(current)
        return stream
    }

    func publish(_ newState: SyncState) {
        let continuations = state.withLock { state in
            state.current = newState
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.yield(newState) }
    }

    func finish() {
        let continuations = state.withLock { state in
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
