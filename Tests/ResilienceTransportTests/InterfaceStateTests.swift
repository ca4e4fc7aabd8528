import Foundation
import ResilienceCore
import Testing

@testable import ResilienceTransport

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

    @Test("An interface without a default route reaches no host beyond its subnets: not usable")
    func withoutDefaultRoute() {
        let noRoute = InterfaceState(
            name: "eth0", isUp: true, isRunning: true, hasIPv4Address: true, hasDefaultRoute: false)
        #expect(!noRoute.isUsable)
        #expect(NetworkPath(interfaces: [noRoute]) == .unsatisfied)
    }

    #if os(Linux)
    @Test("The routing table's default routes: up, not rejected, IPv4 and IPv6, by interface")
    func defaultRoutesFromTheRoutingTable() {
        let ipv4 = """
            Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT
            eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0
            eth0\t000200C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
            eth1\t000300C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0
            eth2\t00000000\t00000000\t0201\t0\t0\t0\t00000000\t0\t0\t0
            eth3\t00000000\t010400C0
            """
        let ipv6 = """
            fd000000000000000000000000000000 40 00000000000000000000000000000000 00 \
            00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth1
            00000000000000000000000000000000 00 00000000000000000000000000000000 00 \
            fd000000000000000000000000000001 00000400 00000003 00000000 00000003     wlan0
            00000000000000000000000000000000 00 00000000000000000000000000000000 00 \
            00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo
            garbage
            """
        #expect(NetlinkConnectivityMonitor.defaultRouteInterfaces(ipv4: ipv4, ipv6: ipv6) == ["eth0", "wlan0"])
        #expect(NetlinkConnectivityMonitor.defaultRouteInterfaces(ipv4: "", ipv6: "") == [])
    }

    @Test("The routing table is read a line at a time: an overlong line is skipped, a missing file is no table")
    func routingTableLines() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rk-route-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let text =
            String(repeating: "x", count: 40_000) + "\n"
            + "eth0\t00000000\t010200C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
            + "eth1\t00000000\t010300C0\t0003\t0\t0\t0\t00000000\t0\t0\t0"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        var lines: [Substring] = []
        #expect(NetlinkConnectivityMonitor.forEachLine(of: path) { lines.append($0) } == true)
        #expect(lines.count == 2)
        #expect(lines.compactMap(NetlinkConnectivityMonitor.defaultRouteInterface(ipv4Line:)) == ["eth0", "eth1"])
        #expect(NetlinkConnectivityMonitor.forEachLine(of: path + "-missing") { _ in } == false)
    }

    @Test("An IPv6 address is usable once past its duplicate check: not tentative, not a duplicate, not link-local")
    func usableIPv6Addresses() {
        let lines = [
            "20010db8000000000000000000000001 03 40 00 80    veth0",  // permanent, checked
            "20010db8000000000000000000000002 04 40 00 c0    veth1",  // tentative
            "20010db8000000000000000000000003 05 40 00 c8    veth2",  // tentative, failed: a duplicate
            "20010db8000000000000000000000004 06 40 00 44    wlan0",  // tentative but optimistic: usable
            "fe800000000000000086b6fffec924cb 07 40 20 80    eth0",  // link-local
            "00000000000000000000000000000001 01 80 10 80       lo",  // loopback: the path excludes it elsewhere
            "20010db8000000000000000000000009 08 40 00 a0     eth1",  // deprecated: still usable
            "garbage",
        ]
        let usable = lines.compactMap { NetlinkConnectivityMonitor.usableIPv6Interface(line: Substring($0)) }
        #expect(usable == ["veth0", "wlan0", "lo", "eth1"])
    }

    /// One rtnetlink message: its header (`nlmsghdr`) and `body`, padded to four bytes.
    static func netlinkMessage(type: UInt16, body: [UInt8]) -> [UInt8] {
        let length = UInt32(16 + body.count)
        var bytes = withUnsafeBytes(of: length) { Array($0) } + withUnsafeBytes(of: type) { Array($0) }
        bytes += [UInt8](repeating: 0, count: 10) + body
        return bytes + [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
    }

    /// A route message (`rtmsg`) for a destination with `prefixLength`.
    static func route(_ type: UInt16, prefixLength: UInt8) -> [UInt8] {
        netlinkMessage(type: type, body: [2, prefixLength, 0, 0, 254, 4, 0, 1, 0, 0, 0, 0])
    }

    @Test("Only notifications that may change the path call for a re-read: not routes to networks")
    func notificationsThatMayChangeThePath() {
        func mayChange(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes(NetlinkConnectivityMonitor.mayChangePath) }
        let network = Self.route(24, prefixLength: 24)
        let removed = Self.route(25, prefixLength: 16)
        #expect(!mayChange(network))
        #expect(!mayChange(network + removed + network))
        #expect(mayChange(network + Self.route(24, prefixLength: 0)))  // a default route
        #expect(mayChange(Self.route(25, prefixLength: 0)))
        #expect(mayChange(network + Self.netlinkMessage(type: 16, body: [UInt8](repeating: 0, count: 16))))  // link
        #expect(mayChange(Self.netlinkMessage(type: 20, body: [UInt8](repeating: 0, count: 8))))  // address
        // Anything not understood is read again rather than missed.
        #expect(mayChange(Array(network.prefix(20))))
        #expect(mayChange(network + [1, 2, 3]))
        #expect(mayChange(Self.netlinkMessage(type: 24, body: [2])))
        var overlong = network
        overlong[0] = 200
        #expect(mayChange(overlong))
        #expect(!mayChange([]))
    }

    /// A route attribute (`rtattr`) of `type` holding `value`, padded to four bytes.
    static func attribute(_ type: UInt16, _ value: [UInt8]) -> [UInt8] {
        let bytes = withUnsafeBytes(of: UInt16(4 + value.count)) { Array($0) } + withUnsafeBytes(of: type) { Array($0) }
        return bytes + value + [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
    }

    @Test("A route dump's default routes: each usable next hop of the unicast ones of every table, to the dump's end")
    func defaultRoutesFromARouteDump() {
        func index(_ value: Int32) -> [UInt8] { withUnsafeBytes(of: value) { Array($0) } }
        func hop(_ interface: Int32, dead: Bool = false) -> [UInt8] {
            withUnsafeBytes(of: UInt16(8)) { Array($0) } + [dead ? 1 : 0, 0] + index(interface)
        }
        // rtmsg: family, destination length, source length, tos, table, protocol, scope, type; flags.
        func route(length: UInt8, table: UInt8 = 254, type: UInt8 = 1, _ attributes: [UInt8]) -> [UInt8] {
            Self.netlinkMessage(type: 24, body: [2, length, 0, 0, table, 3, 0, type, 0, 0, 0, 0] + attributes)
        }
        let single = route(length: 0, Self.attribute(4, index(2)))
        let multipath = route(length: 0, Self.attribute(9, hop(3) + hop(4, dead: true) + hop(5)))
        let network = route(length: 24, Self.attribute(4, index(6)))
        let otherTable = route(length: 0, table: 100, Self.attribute(4, index(7)))
        let unreachable = route(length: 0, type: 7, Self.attribute(4, index(8)))
        let done = Self.netlinkMessage(type: 3, body: [0, 0, 0, 0])
        var indices: Set<Int32> = []
        let datagram = single + multipath + network + otherTable + unreachable
        #expect(
            datagram.withUnsafeBytes { NetlinkConnectivityMonitor.collectDefaultRoutes($0, into: &indices) } == false)
        #expect(done.withUnsafeBytes { NetlinkConnectivityMonitor.collectDefaultRoutes($0, into: &indices) } == true)
        // A policy-routed default route (a table of its own, selected by a rule) carries traffic as the main
        // table's does.
        #expect(indices == [2, 3, 5, 7])
        let error = Self.netlinkMessage(type: 2, body: [0, 0, 0, 0])
        #expect(error.withUnsafeBytes { NetlinkConnectivityMonitor.collectDefaultRoutes($0, into: &indices) } == nil)
        let cut = Array(single.prefix(30))
        #expect(cut.withUnsafeBytes { NetlinkConnectivityMonitor.collectDefaultRoutes($0, into: &indices) } == nil)
    }

    @Test("A route dump nobody answers is given up after a second, so the routing table file decides alone")
    func unansweredRouteDumpIsGivenUp() {
        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0, &ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        // Ends a wait that never gives up, so that such a wait fails this test instead of hanging it.
        let writer = ends[1]
        let done = Self.netlinkMessage(type: 3, body: [0, 0, 0, 0])
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) { _ = send(writer, done, done.count, 0) }
        let started = ContinuousClock.now
        #expect(NetlinkConnectivityMonitor.receiveDefaultRoutes(from: ends[0]) == [])
        #expect(ContinuousClock.now - started < .seconds(5))
    }

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
