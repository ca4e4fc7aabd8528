import ResilienceCore

/// A ``ConnectivityMonitor`` a test drives by hand: set the path, and every listener sees the change.
///
/// ```swift
/// let monitor = ScriptedConnectivityMonitor(.unsatisfied)
/// async let online = monitor.waitForPath()
/// monitor.setPath(.satisfied)
/// #expect(try await online == .satisfied)
/// ```
public final class ScriptedConnectivityMonitor: ConnectivityMonitor {
    private let broadcaster: ConnectivityBroadcaster

    /// Creates a monitor whose path is `initial`.
    ///
    /// - Parameter initial: The path before the first ``setPath(_:)``. Default: satisfied.
    public init(_ initial: NetworkPath = .satisfied) {
        broadcaster = ConnectivityBroadcaster(initial: initial)
    }

    /// The path last set.
    public var currentPath: NetworkPath { broadcaster.currentPath }

    /// The current path, then each change.
    public func paths() -> AsyncStream<NetworkPath> { broadcaster.paths() }

    /// How many callers are listening now (waiting for a path, or iterating ``paths()``).
    public var listenerCount: Int { broadcaster.listenerCount }

    /// Makes `path` the current path and tells every listener.
    ///
    /// - Parameter path: The new path.
    public func setPath(_ path: NetworkPath) { broadcaster.update(path) }

    /// Goes offline (`unsatisfied`) or back online (`satisfied`).
    ///
    /// - Parameter online: Whether the network is reachable.
    public func setOnline(_ online: Bool) { setPath(online ? .satisfied : .unsatisfied) }

    /// Stops the monitor: every listener's sequence ends, and waiting callers get
    /// ``ConnectivityMonitorError/stopped``.
    public func stop() { broadcaster.finish() }
}
