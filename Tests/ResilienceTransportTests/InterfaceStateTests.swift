import ResilienceCore
import ResilienceTransport
import Testing

@Suite("The path the interfaces give")
struct InterfaceStateTests {
    @Test("Satisfied only through an interface that is up, running, not loopback, with a routable address")
    func usable() {
        let loopback = InterfaceState(name: "lo", isUp: true, isRunning: true, isLoopback: true, hasIPv4Address: true)
        let down = InterfaceState(name: "eth0", isUp: false, isRunning: false, hasIPv4Address: true)
        let noCarrier = InterfaceState(name: "eth1", isUp: true, isRunning: false, hasIPv4Address: true)
        let linkLocalOnly = InterfaceState(name: "eth2", isUp: true, isRunning: true)
        #expect(NetworkPath(interfaces: [loopback, down, noCarrier, linkLocalOnly]) == .unsatisfied)
        #expect(NetworkPath(interfaces: []) == .unsatisfied)
        let wired = InterfaceState(name: "eth0", isUp: true, isRunning: true, hasIPv4Address: true)
        let sixOnly = InterfaceState(name: "wlan0", isUp: true, isRunning: true, hasRoutableIPv6Address: true)
        let path = NetworkPath(interfaces: [loopback, wired, sixOnly])
        #expect(path.isSatisfied && !path.isExpensive && path.interfaces == ["eth0", "wlan0"])
    }

    @Test("Expensive when every usable interface is a cellular modem or point-to-point link")
    func expensive() {
        let modem = InterfaceState(name: "wwan0", isUp: true, isRunning: true, hasIPv4Address: true)
        let wifi = InterfaceState(name: "wlan0", isUp: true, isRunning: true, hasIPv4Address: true)
        #expect(NetworkPath(interfaces: [modem]).isExpensive)
        #expect(!NetworkPath(interfaces: [modem, wifi]).isExpensive)
        #expect(NetworkPath(interfaces: [modem]).description == "satisfied (expensive) [wwan0]")
    }

    #if os(Linux)
    @Test("The Linux monitor starts, reports this host's path, and stops cleanly")
    func netlinkMonitorStartsAndStops() async throws {
        let monitor = try NetlinkConnectivityMonitor()
        var paths = monitor.paths().makeAsyncIterator()
        #expect(await paths.next() == monitor.currentPath)
        monitor.stop()
        #expect(await paths.next() == nil)
    }
    #endif
}
