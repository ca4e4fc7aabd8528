/// Watches the network path: what it is now, and every change.
///
/// Implementations: `PathMonitorConnectivity` (Apple's `NWPathMonitor`) and `NetlinkConnectivityMonitor`
/// (Linux, the kernel's link, address and route notifications) in ResilienceTransport,
/// `ScriptedConnectivityMonitor` in ResilienceTesting, or your own (an app that already watches reachability).
/// Build one on ``ConnectivityBroadcaster``, which keeps the current path and fans changes out to every
/// listener; check it with `ConnectivityMonitorConformance`.
///
/// ## Contract
/// - ``currentPath`` never blocks and is the last path the monitor learned.
/// - ``paths()`` yields the current path at once, then every change (never the same path twice in a row),
///   until the caller stops iterating; many callers may listen at once, each with its own sequence.
public protocol ConnectivityMonitor: Sendable {
    /// The path as the monitor last learned it.
    var currentPath: NetworkPath { get }

    /// The current path, then each change, as a sequence of its own for this caller.
    func paths() -> AsyncStream<NetworkPath>
}

extension ConnectivityMonitor {
    /// Waits until the path satisfies `accepts` (by default: until it is ``NetworkPath/isSatisfied``) and
    /// returns that path; returns at once when the current path already does.
    ///
    /// Throws `CancellationError` when the task is cancelled while waiting, and
    /// ``ConnectivityMonitorError`` when the monitor stops before a path is accepted. To bound the wait, run
    /// it under ``withDeadline(until:clock:operation:)``, which cancels it when the time is up.
    ///
    /// - Parameter accepts: Which path ends the wait.
    public func waitForPath(
        where accepts: @Sendable (NetworkPath) -> Bool = { $0.isSatisfied }
    ) async throws -> NetworkPath {
        let current = currentPath
        if accepts(current) { return current }
        for await path in paths() where accepts(path) {
            return path
        }
        try Task.checkCancellation()
        throw ConnectivityMonitorError.stopped
    }

    /// The current path while the monitor runs, or `nil` once it has stopped: a stopped monitor's
    /// ``currentPath`` is the last path it learned, which says nothing about the network now. Returns at once,
    /// since ``paths()`` yields the current path first (and a stopped monitor's sequence ends at once).
    public func livePath() async -> NetworkPath? {
        for await path in paths() {
            return path
        }
        return nil
    }
}

/// Why waiting on a ``ConnectivityMonitor`` ended without a path.
public struct ConnectivityMonitorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The identifier (`"stopped"`).
    public let rawValue: String

    private init(_ rawValue: String) {
        self.rawValue = rawValue
    }

    /// The monitor stopped (it was shut down, or its source of path information failed).
    public static let stopped = ConnectivityMonitorError("stopped")

    /// `connectivity monitor stopped`.
    public var description: String { "connectivity monitor \(rawValue)" }
}
