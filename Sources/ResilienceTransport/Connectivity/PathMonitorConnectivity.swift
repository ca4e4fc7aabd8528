#if canImport(Network)
import Dispatch
import Network
import ResilienceCore

/// A ``ConnectivityMonitor`` on Apple platforms: Apple's `NWPathMonitor`, translated into ``NetworkPath``.
///
/// Kept small on purpose: it only maps each `NWPath` and hands it to a ``ConnectivityBroadcaster``, the
/// platform-neutral type that holds the logic (dropping repeats, fanning out to listeners) and that the tests
/// cover on every platform.
///
/// ```swift
/// let monitor = PathMonitorConnectivity()
/// for await path in monitor.paths() { banner.isOffline = !path.isSatisfied }
/// ```
public final class PathMonitorConnectivity: ConnectivityMonitor, @unchecked Sendable {
    // `NWPathMonitor` is thread-safe (its updates arrive on `queue`); it is only started and cancelled here.
    private let monitor: NWPathMonitor
    private let broadcaster: ConnectivityBroadcaster

    /// Starts watching the path.
    ///
    /// - Parameters:
    ///   - interfaceType: Watch only this kind of interface (`.wifi`, `.cellular`); `nil` for any. Default: `nil`.
    ///   - queue: The queue the system reports changes on. Default: a serial queue of the monitor's own.
    public init(
        interfaceType: NWInterface.InterfaceType? = nil,
        queue: DispatchQueue = DispatchQueue(label: "ResilienceKit.PathMonitorConnectivity")
    ) {
        monitor = interfaceType.map { NWPathMonitor(requiredInterfaceType: $0) } ?? NWPathMonitor()
        let broadcaster = ConnectivityBroadcaster(initial: NetworkPath(monitor.currentPath))
        self.broadcaster = broadcaster
        monitor.pathUpdateHandler = { path in broadcaster.update(NetworkPath(path)) }
        monitor.start(queue: queue)
    }

    deinit {
        monitor.cancel()
        broadcaster.finish()
    }

    /// The path the system last reported.
    public var currentPath: NetworkPath { broadcaster.currentPath }

    /// The current path, then each change.
    public func paths() -> AsyncStream<NetworkPath> { broadcaster.paths() }
}

extension NetworkPath {
    /// The path `path` describes.
    ///
    /// - Parameter path: What `NWPathMonitor` reported.
    public init(_ path: NWPath) {
        let status: Status =
            switch path.status {
            case .satisfied: .satisfied
            case .requiresConnection: .requiresConnection
            case .unsatisfied: .unsatisfied
            @unknown default: .unsatisfied
            }
        self.init(
            status: status, isExpensive: path.isExpensive, isConstrained: path.isConstrained,
            interfaces: path.availableInterfaces.map(\.name))
    }
}
#endif
