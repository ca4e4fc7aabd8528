import Foundation
import ResilienceKit
import ResilienceTesting

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The device's network as the demo plays it. Everything runs on loopback, so no real interface goes away;
/// instead a scripted path monitor stands in for `NWPathMonitor` / rtnetlink, and a transport decorator fails
/// the way URLSession does while the path is down (`URLError.notConnectedToInternet`, before a byte is sent).
///
/// The pipelines and the aggregator follow ``monitor``; ``requestsWhileOffline`` counts every request that
/// still tried to go out while the network was gone (each one an attempt, and possibly a retry, wasted).
final class SimulatedNetwork: Sendable {
    /// The path the pipelines' wait-for-connectivity stage and the aggregator follow.
    let monitor = ScriptedConnectivityMonitor(.satisfied)
    private let offlineAttempts = LockedState(initialState: 0)

    /// Requests that reached the transport while the path was unsatisfied.
    var requestsWhileOffline: Int { offlineAttempts.withLock { $0 } }

    /// `base`, failing at once with "not connected to the internet" while the path is down.
    func transport(wrapping base: any HTTPTransport) -> any HTTPTransport {
        OfflineAwareTransport(base: base, network: self)
    }

    /// Takes the network away now and gives it back after `duration` (on the real clock: the demo's server
    /// and sockets are real). The returned task ends when the network is back.
    func dropConnection(for duration: Duration) -> Task<Void, Never> {
        monitor.setOnline(false)
        let monitor = monitor
        return Task {
            try? await Task.sleep(for: duration)
            monitor.setOnline(true)
        }
    }

    fileprivate func recordAttemptWhileOffline() {
        offlineAttempts.withLock { $0 += 1 }
    }
}

/// The transport decorator behind ``SimulatedNetwork/transport(wrapping:)``.
private struct OfflineAwareTransport: HTTPTransport {
    let base: any HTTPTransport
    let network: SimulatedNetwork

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        guard network.monitor.currentPath.isSatisfied else {
            network.recordAttemptWhileOffline()
            throw URLError(.notConnectedToInternet)
        }
        return try await base.send(request, context: context)
    }
}

/// Counts the pipelines' waits for the network (`connectivity-wait` events) and how long they took.
final class ConnectivityWaitCounter: TelemetrySink {
    private let waits = LockedState(initialState: [Duration]())

    /// The waits so far, in the order they ended.
    var recorded: [Duration] { waits.withLock { $0 } }

    var isEnabled: Bool { true }

    func receive(_ event: ResilienceEvent) {
        guard event.kind == .connectivityWait else { return }
        waits.withLock { $0.append(event.duration ?? .zero) }
    }
}
