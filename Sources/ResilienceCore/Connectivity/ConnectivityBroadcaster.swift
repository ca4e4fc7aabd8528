/// The platform-neutral heart of every ``ConnectivityMonitor``: keeps the current path and fans each change
/// out to every listener.
///
/// A platform monitor feeds it what the system reports (``update(_:)``) and forwards ``currentPath`` and
/// ``paths()`` to it; this type holds the logic all monitors share, so the tests that cover it cover them all:
/// repeated reports of the same path are dropped, every listener gets the current path first and then each
/// change in order, a listener that stops iterating is forgotten, and ``finish()`` ends every sequence.
///
/// ```swift
/// final class MyMonitor: ConnectivityMonitor {
///     let broadcaster = ConnectivityBroadcaster(initial: .unsatisfied)
///     var currentPath: NetworkPath { broadcaster.currentPath }
///     func paths() -> AsyncStream<NetworkPath> { broadcaster.paths() }
///     func reachabilityChanged(_ online: Bool) { broadcaster.update(online ? .satisfied : .unsatisfied) }
/// }
/// ```
public final class ConnectivityBroadcaster: Sendable {
    private struct State {
        var path: NetworkPath
        var listeners: [Int: AsyncStream<NetworkPath>.Continuation] = [:]
        var nextListener = 0
        var finished = false
    }

    private let state: LockedState<State>

    /// Creates a broadcaster whose current path is `initial`.
    ///
    /// - Parameter initial: The path before the first report.
    public init(initial: NetworkPath) {
        state = LockedState(initialState: State(path: initial))
    }

    /// The last path reported.
    public var currentPath: NetworkPath { state.withLock { $0.path } }

    /// How many sequences are being iterated now.
    public var listenerCount: Int { state.withLock { $0.listeners.count } }

    /// Records `path` and, when it differs from the current one, yields it to every listener. Safe to call
    /// from any thread: concurrent reports reach every listener in the order they became the current path.
    ///
    /// - Parameter path: What the system reports now.
    public func update(_ path: NetworkPath) {
        state.withLock { state in
            guard !state.finished, state.path != path else { return }
            state.path = path
            // Yielded under the lock, as in `paths()`: a report that became current later is never overtaken
            // by an earlier one, so a listener's newest path is always the current one.
            for (_, listener) in state.listeners.sorted(by: { $0.key < $1.key }) { listener.yield(path) }
        }
    }

    /// The current path, then each change; the sequence ends when the caller stops iterating or at
    /// ``finish()``. It buffers only the newest path, so a slow listener never holds stale changes.
    public func paths() -> AsyncStream<NetworkPath> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: NetworkPath.self, bufferingPolicy: .bufferingNewest(1))
        let registered: Int? = state.withLock { state in
            guard !state.finished else { return nil }
            let id = state.nextListener
            state.nextListener += 1
            state.listeners[id] = continuation
            // Yielded under the lock so no change can slip in before the current path.
            continuation.yield(state.path)
            return id
        }
        guard let registered else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.removeValue(forKey: registered) }
        }
        return stream
    }

    /// Ends every sequence; later ``paths()`` sequences end at once, and later updates are ignored.
    public func finish() {
        let listeners = state.withLock { state in
            state.finished = true
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener.finish() }
    }
}
