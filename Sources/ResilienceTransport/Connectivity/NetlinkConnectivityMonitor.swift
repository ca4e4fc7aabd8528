#if os(Linux)
import Foundation
import Glibc
import ResilienceCore

/// A ``ConnectivityMonitor`` for Linux: follows the kernel's link, address, route and next-hop object changes
/// through an rtnetlink socket, and decides the path from the interfaces and the default routes through them
/// (``NetworkPath/init(interfaces:)``) after each change that may change it: a link, an address, a default
/// route, a next-hop object (deleting one removes the routes through it silently). A route to a network causes
/// no re-read, however many of them a host has.
///
/// One background thread waits on the socket (it costs nothing while nothing changes); ``stop()``, or the
/// monitor's release, ends it. The path reflects the network namespace of the thread that creates the monitor:
/// the process's, unless that thread entered another (`setns`), whose interfaces and routes it then follows.
///
/// A re-read that fails (`getifaddrs` or the routing table in `/proc` cannot be opened when the process is
/// out of file descriptors, or out of memory) says nothing about the network: the path stays what it was, and
/// the read is tried again every second until it succeeds. It is never reported as `unsatisfied`, which would
/// hold every waiting call and tell the person they are offline.
///
/// ```swift
/// let monitor = try NetlinkConnectivityMonitor()
/// for await path in monitor.paths() { print(path) }   // satisfied [eth0], unsatisfied, …
/// ```
public final class NetlinkConnectivityMonitor: ConnectivityMonitor {
    private let broadcaster: ConnectivityBroadcaster
    private let wakeWriter: Int32
    private let stopped = LockedState(initialState: false)
    private let rereads: LockedState<Int>

    /// Opens the netlink socket, reads the current path and starts following changes.
    ///
    /// - Throws: ``NetlinkMonitorError`` when the socket cannot be opened (a sandbox without netlink), the
    ///   interfaces cannot be read (step `getifaddrs`), or the process can start no more threads (step
    ///   `pthread_create`).
    public init() throws(NetlinkMonitorError) {
        let socket = Glibc.socket(
            Netlink.family, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Netlink.route)
        guard socket >= 0 else { throw NetlinkMonitorError(step: "socket", errno: errno) }
        var address = Netlink.Address(groups: Netlink.linkAddressAndRouteGroups)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<Netlink.Address>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(socket)
            throw NetlinkMonitorError(step: "bind", errno: code)
        }
        // Next-hop objects (kernel 5.3 and later) have a group above the 32 the bind mask can name. Deleting one
        // removes every route through it and the kernel sends no route notification for them, only this group's.
        // An older kernel refuses the group and has no such objects, so a refusal is not an error.
        var nextHopGroup = Netlink.nextHopGroup
        _ = setsockopt(
            socket, Netlink.socketOptionLevel, Netlink.addMembership, &nextHopGroup,
            socklen_t(MemoryLayout<UInt32>.size))
        // The stop signal: a socket pair, close-on-exec from its creation, so that a fork and exec on another
        // thread never hands it to a child process (`pipe2`, which takes the flag, is not in Glibc's module).
        var wake: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &wake) == 0 else {
            let code = errno
            close(socket)
            throw NetlinkMonitorError(step: "socketpair", errno: code)
        }
        guard let initial = Self.interfaces() else {
            let code = errno
            for descriptor in [socket, wake[0], wake[1]] { close(descriptor) }
            throw NetlinkMonitorError(step: "getifaddrs", errno: code)
        }
        let broadcaster = ConnectivityBroadcaster(initial: NetworkPath(interfaces: initial))
        let wakeReader = wake[0]
        let rereads = LockedState(initialState: 0)
        // A thread of its own, started with `pthread_create` so that a process out of threads gets an error
        // (Foundation's `Thread.start()` does nothing then, and the path would never change again).
        let follow = FollowThread {
            Self.follow(socket: socket, wake: wakeReader, broadcaster: broadcaster, rereads: rereads)
        }
        let context = Unmanaged.passRetained(follow).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<FollowThread>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            }, context)
        guard started == 0 else {
            Unmanaged<FollowThread>.fromOpaque(context).release()
            for descriptor in [socket, wake[0], wake[1]] { close(descriptor) }
            throw NetlinkMonitorError(step: "pthread_create", errno: started)
        }
        pthread_detach(thread)
        self.broadcaster = broadcaster
        self.rereads = rereads
        wakeWriter = wake[1]
    }

    deinit { stop() }

    /// How many times the monitor's thread has read the interfaces and routing table again since it started:
    /// what following the kernel's notifications has cost.
    var rereadCount: Int { rereads.withLock { $0 } }

    /// The path after the last change the kernel reported.
    public var currentPath: NetworkPath { broadcaster.currentPath }

    /// The current path, then each change.
    public func paths() -> AsyncStream<NetworkPath> { broadcaster.paths() }

    /// Stops following changes: the thread ends, the socket closes, every ``paths()`` sequence ends.
    public func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
        close(wakeWriter)
    }

    /// The thread's loop: wait for notifications (or the stop), then re-read the interfaces when one of them
    /// may change the path (``mayChangePath(_:)``); a read that fails leaves the path as it is and is tried
    /// again after a second.
    private static func follow(
        socket: Int32, wake: Int32, broadcaster: ConnectivityBroadcaster, rereads: LockedState<Int>
    ) {
        defer {
            close(socket)
            close(wake)
            broadcaster.finish()
        }
        func reread() -> Bool {
            rereads.withLock { $0 += 1 }
            guard let interfaces = interfaces() else { return false }
            broadcaster.update(NetworkPath(interfaces: interfaces))
            return true
        }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var descriptors = [
            pollfd(fd: socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
        ]
        var rereadPending = false
        while true {
            let ready = poll(&descriptors, nfds_t(descriptors.count), rereadPending ? 1_000 : -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if descriptors[1].revents != 0 { return }
            guard descriptors[0].revents != 0 else {
                if ready == 0, rereadPending { rereadPending = !reread() }
                continue
            }
            // Drain everything queued: one re-read covers any number of notifications.
            var mayChange = rereadPending
            while true {
                // MSG_TRUNC: the datagram's whole length, even when it did not fit.
                let received = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT) | Int32(MSG_TRUNC))
                if received > buffer.count {
                    mayChange = true
                } else if received > 0 {
                    if !mayChange {
                        mayChange = buffer.withUnsafeBytes {
                            mayChangePath(UnsafeRawBufferPointer(rebasing: $0[0..<received]))
                        }
                    }
                } else if received < 0 && errno == EINTR {
                    continue
                } else if received < 0 && errno == ENOBUFS {
                    // The kernel dropped notifications it could not queue: only a re-read recovers them.
                    mayChange = true
                } else if received < 0 && errno != EAGAIN && errno != EWOULDBLOCK {
                    return
                } else {
                    break
                }
            }
            if mayChange { rereadPending = !reread() }
        }
    }

    /// Whether a datagram of rtnetlink notifications may change the path: a link or address change, a route
    /// whose destination is a default one (prefix length 0), or anything not understood. A route to a network
    /// (a destination with a prefix) cannot: only default routes decide the path, so the many routes of a
    /// router or a Kubernetes node come and go without a re-read of the routing table.
    static func mayChangePath(_ datagram: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < datagram.count {
            // struct nlmsghdr: length (UInt32), type (UInt16), flags (UInt16), sequence, port (UInt32 each).
            guard datagram.count - offset >= Netlink.headerSize else { return true }
            let length = Int(datagram.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
            let type = datagram.loadUnaligned(fromByteOffset: offset + 4, as: UInt16.self)
            guard length >= Netlink.headerSize, length <= datagram.count - offset else { return true }
            switch type {
            case Netlink.newRoute, Netlink.deleteRoute:
                // struct rtmsg: family, destination prefix length, …
                guard length >= Netlink.headerSize + 12, datagram[offset + Netlink.headerSize + 1] != 0 else {
                    return true
                }
            case Netlink.noop:
                break
            default:
                return true
            }
            offset += (length + 3) & ~3
        }
        return false
    }

    /// Every interface, its addresses (`getifaddrs`, and for IPv6 whether one can be used, `if_inet6`) and
    /// whether a default route leaves through it (`route` and `ipv6_route`, and every next hop of an IPv4
    /// default route in any routing table, ``ipv4DefaultRouteIndices()``), from
    /// `/proc/thread-self/net` (or `/proc/net` on a kernel without it); `nil` when they cannot be read (`errno`
    /// says why). Where `/proc` does not show the routing table, every interface counts as having a route.
    ///
    /// A default route counts in whichever table holds it, not only in the main one: with policy routing (a
    /// VPN's own table, one table per uplink) the main table may hold none while traffic leaves through
    /// another, and `ipv6_route` lists every table's IPv6 routes too. A table that no rule selects still
    /// counts: the path may then say `satisfied` for a host whose traffic cannot leave, an error that holds no
    /// call, where ignoring the other tables would say `unsatisfied` and hold every call of a host that is online.
    ///
    /// Both are read in the network namespace of the calling thread: `getifaddrs` asks the kernel through a
    /// socket of that thread, and `/proc/thread-self/net` is that thread's view (`/proc/net` is the main
    /// thread's, which differs in a process whose threads entered other namespaces with `setns`).
    static func interfaces() -> [InterfaceState]? {
        var routed: Set<String> = []
        var usableIPv6: Set<String> = []
        let ipv4Line: (Substring) -> Void = {
            if let name = defaultRouteInterface(ipv4Line: $0) { routed.insert(name) }
        }
        var directory = "/proc/thread-self/net"
        var ipv4Table = forEachLine(of: directory + "/route", ipv4Line)
        if ipv4Table == false {
            directory = "/proc/net"
            ipv4Table = forEachLine(of: directory + "/route", ipv4Line)
        }
        guard
            let hasIPv4Table = ipv4Table,
            forEachLine(
                of: directory + "/ipv6_route",
                { if let name = defaultRouteInterface(ipv6Line: $0) { routed.insert(name) } })
                != nil,
            let hasAddressTable = forEachLine(
                of: directory + "/if_inet6", { if let name = usableIPv6Interface(line: $0) { usableIPv6.insert(name) } }
            )
        else { return nil }
        // `route` shows only the first next hop of a multipath route: the kernel is asked for all of them.
        guard let multipath = ipv4DefaultRouteIndices() else { return nil }
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0 else { return nil }
        guard let first = head else { return [] }
        defer { freeifaddrs(head) }
        var states: [String: InterfaceState] = [:]
        var order: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            let name = String(cString: entry.pointee.ifa_name)
            let flags = Int32(bitPattern: entry.pointee.ifa_flags)
            var state =
                states[name]
                ?? InterfaceState(
                    name: name, isUp: flags & Int32(IFF_UP) != 0,
                    isRunning: flags & Int32(IFF_RUNNING) != 0,
                    isLoopback: flags & Int32(IFF_LOOPBACK) != 0,
                    hasDefaultRoute: !hasIPv4Table || routed.contains(name))
            if states[name] == nil { order.append(name) }
            if let address = entry.pointee.ifa_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    state.hasIPv4Address = true
                case AF_PACKET:
                    // struct sockaddr_ll: family, protocol (UInt16 each), interface index (Int32).
                    let index = UnsafeRawPointer(address).loadUnaligned(fromByteOffset: 4, as: Int32.self)
                    if multipath.contains(index) { state.hasDefaultRoute = true }
                case AF_INET6:
                    let bytes = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        $0.pointee.sin6_addr.__in6_u.__u6_addr8
                    }
                    // fe80::/10 is link-local: it never routes beyond the link. The kernel's address table also
                    // says whether an address may be used yet (`usableIPv6Interface(line:)`).
                    let linkLocal = bytes.0 == 0xfe && bytes.1 & 0xc0 == 0x80
                    if hasAddressTable ? usableIPv6.contains(name) : !linkLocal { state.hasRoutableIPv6Address = true }
                default:
                    break
                }
            }
            states[name] = state
        }
        return order.compactMap { states[$0] }
    }

    /// The interface indices of every next hop of the IPv4 default routes of every routing table, asked of the
    /// kernel (`RTM_GETROUTE`) in the calling thread's namespace: a multipath route's every usable next hop, where
    /// `/proc/net/route` shows only its first, and the routes of tables other than the main one, which it does not
    /// show at all. Empty when the kernel does not answer such a request within a second or answers with an error
    /// (a sandbox that emulates part of rtnetlink; `/proc/net/route` then decides alone); `nil` when the request
    /// cannot be made (`errno` says why).
    static func ipv4DefaultRouteIndices() -> Set<Int32>? {
        let socket = Glibc.socket(
            Netlink.family, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), Netlink.route)
        guard socket >= 0 else { return nil }
        defer { close(socket) }
        // struct nlmsghdr and struct rtmsg: a dump of the IPv4 routes.
        var request = [UInt8](repeating: 0, count: Netlink.headerSize + 12)
        request.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: UInt32(Netlink.headerSize + 12), toByteOffset: 0, as: UInt32.self)
            bytes.storeBytes(of: Netlink.getRoute, toByteOffset: 4, as: UInt16.self)
            bytes.storeBytes(of: Netlink.dumpRequest, toByteOffset: 6, as: UInt16.self)
            bytes.storeBytes(of: UInt32(1), toByteOffset: 8, as: UInt32.self)
            bytes[Netlink.headerSize] = UInt8(AF_INET)
        }
        var sent = -1
        repeat { sent = send(socket, request, request.count, 0) } while sent < 0 && errno == EINTR
        guard sent == request.count else { return errno == ENOBUFS || errno == ENOMEM ? nil : [] }
        return receiveDefaultRoutes(from: socket)
    }

    /// The interface indices of the IPv4 default routes' next hops in the answers to a route dump read from
    /// `socket`: empty when no answer comes within a second (a kernel, or a sandbox emulating rtnetlink, that
    /// never answers must not hold the monitor) or the answer is an error; `nil` when reading fails for lack of
    /// memory (`errno` says why).
    static func receiveDefaultRoutes(from socket: Int32) -> Set<Int32>? {
        var patience = timeval(tv_sec: 1, tv_usec: 0)
        guard setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size)) == 0
        else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var indices: Set<Int32> = []
        while true {
            let received = recv(socket, &buffer, buffer.count, 0)
            if received < 0 && errno == EINTR { continue }
            guard received > 0 else { return received < 0 && errno == ENOMEM ? nil : [] }
            let end = buffer.withUnsafeBytes {
                collectDefaultRoutes(UnsafeRawBufferPointer(rebasing: $0[0..<received]), into: &indices)
            }
            switch end {
            case .some(true): return indices
            case .some(false): continue
            case .none: return []
            }
        }
    }

    /// Adds to `indices` the interface index of each next hop (not dead) of each IPv4 unicast default route, of
    /// any table, in a datagram of answers to a route dump: `true` at the dump's end, `false` when more follows,
    /// `nil` for an error answer or one that is not understood.
    static func collectDefaultRoutes(_ datagram: UnsafeRawBufferPointer, into indices: inout Set<Int32>) -> Bool? {
        func u16(_ at: Int) -> UInt16 { datagram.loadUnaligned(fromByteOffset: at, as: UInt16.self) }
        func u32(_ at: Int) -> UInt32 { datagram.loadUnaligned(fromByteOffset: at, as: UInt32.self) }
        var offset = 0
        while offset < datagram.count {
            guard datagram.count - offset >= Netlink.headerSize else { return nil }
            let length = Int(u32(offset))
            guard length >= Netlink.headerSize, length <= datagram.count - offset else { return nil }
            switch u16(offset + 4) {
            case Netlink.done:
                return true
            case Netlink.newRoute:
                // struct rtmsg: family, destination length, source length, tos, table, protocol, scope, type, flags.
                let body = offset + Netlink.headerSize
                guard length >= Netlink.headerSize + 12 else { return nil }
                let isDefaultUnicast = datagram[body + 1] == 0 && datagram[body + 7] == Netlink.unicast
                let dead = u32(body + 8) & Netlink.deadHop != 0
                var hops: [Int32] = []
                var attribute = body + 12
                let end = offset + length
                // struct rtattr: length, type, then the value.
                while end - attribute >= 4 {
                    let attributeLength = Int(u16(attribute))
                    guard attributeLength >= 4, attributeLength <= end - attribute else { return nil }
                    let value = attribute + 4
                    switch u16(attribute + 2) & 0x3fff {
                    case Netlink.outputInterface where attributeLength >= 8:
                        if !dead { hops.append(Int32(bitPattern: u32(value))) }
                    case Netlink.multipath:
                        // struct rtnexthop: length, flags, hops, interface index; then its own attributes.
                        var hop = value
                        while attribute + attributeLength - hop >= 8 {
                            let hopLength = Int(u16(hop))
                            guard hopLength >= 8 else { return nil }
                            if UInt32(datagram[hop + 2]) & Netlink.deadHop == 0 {
                                hops.append(Int32(bitPattern: u32(hop + 4)))
                            }
                            hop += (hopLength + 3) & ~3
                        }
                    default:
                        break
                    }
                    attribute += (attributeLength + 3) & ~3
                }
                if isDefaultUnicast { indices.formUnion(hops) }
            case Netlink.error:
                return nil
            default:
                break
            }
            offset += (length + 3) & ~3
        }
        return false
    }

    /// The interface of an IPv6 address that new connections can use, from a line of `/proc/net/if_inet6`: not
    /// link-local (`fe80::/10`), not still in its duplicate address check (tentative, unless optimistic) and not
    /// found to be another host's (`dadfailed`); `nil` for any other line. Until its check ends (a second or
    /// more after it is added) the kernel never picks the address for a connection, which fails at once.
    static func usableIPv6Interface(line: Substring) -> String? {
        // address index prefix-length scope flags interface
        let fields = line.split(separator: " ")
        guard fields.count == 6, fields[0].utf8.count == 32, let head = UInt16(fields[0].prefix(4), radix: 16),
            let flags = UInt32(fields[4], radix: 16)
        else { return nil }
        let linkLocal = head & 0xffc0 == 0xfe80
        let tentative = flags & Netlink.tentative != 0 && flags & Netlink.optimistic == 0
        guard !linkLocal, !tentative, flags & Netlink.duplicateAddressDetectionFailed == 0 else { return nil }
        return String(fields[5])
    }

    /// Calls `body` with each line of a `/proc` file, read a chunk at a time so that a large routing table
    /// never sits in memory whole (a line longer than 4 KiB is skipped): `true` when it was read, `false` when
    /// it does not exist (no `/proc`, or IPv6 disabled), `nil` when it cannot be read (`errno` says why).
    static func forEachLine(of path: String, _ body: (Substring) -> Void) -> Bool? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return errno == ENOENT ? false : nil }
        defer { close(descriptor) }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var pending: [UInt8] = []
        var overlong = false
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            guard count > 0 else { break }
            for byte in chunk[0..<count] {
                if byte == UInt8(ascii: "\n") {
                    if !overlong { body(Substring(String(decoding: pending, as: UTF8.self))) }
                    pending.removeAll(keepingCapacity: true)
                    overlong = false
                } else if pending.count < 4_096 {
                    pending.append(byte)
                } else {
                    overlong = true
                }
            }
        }
        if !pending.isEmpty && !overlong { body(Substring(String(decoding: pending, as: UTF8.self))) }
        return true
    }

    /// The interfaces a default route leaves through, from the text of `/proc/net/route` and
    /// `/proc/net/ipv6_route` (``defaultRouteInterface(ipv4Line:)``, ``defaultRouteInterface(ipv6Line:)``).
    static func defaultRouteInterfaces(ipv4: String, ipv6: String) -> Set<String> {
        Set(ipv4.split(separator: "\n").compactMap(defaultRouteInterface(ipv4Line:)))
            .union(ipv6.split(separator: "\n").compactMap(defaultRouteInterface(ipv6Line:)))
    }

    /// The interface of a default route (destination and mask `00000000`) in a line of `/proc/net/route`;
    /// `nil` for any other line, a route not up (`RTF_UP`) or one that rejects traffic (`RTF_REJECT`).
    static func defaultRouteInterface(ipv4Line line: Substring) -> String? {
        // Iface Destination Gateway Flags RefCnt Use Metric Mask …
        let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
        guard fields.count >= 8, fields[1] == "00000000", fields[7] == "00000000", routes(flags: fields[3]) else {
            return nil
        }
        return String(fields[0])
    }

    /// The interface of a default route (destination `::`, prefix length 0) in a line of `/proc/net/ipv6_route`;
    /// `nil` for any other line, a route not up or one that rejects traffic (the kernel's unreachable default on
    /// `lo`).
    static func defaultRouteInterface(ipv6Line line: Substring) -> String? {
        // destination prefix source prefix next-hop metric refcount use flags interface
        let fields = line.split(separator: " ")
        guard fields.count == 10, fields[0].utf8.count == 32, fields[0].allSatisfy({ $0 == "0" }), fields[1] == "00",
            routes(flags: fields[8])
        else { return nil }
        return String(fields[9])
    }

    /// Whether route flags (hexadecimal) say the route is up (`RTF_UP`) and does not reject traffic
    /// (`RTF_REJECT`).
    private static func routes(flags: Substring) -> Bool {
        guard let value = UInt32(flags, radix: 16) else { return false }
        return value & 0x0001 != 0 && value & 0x0200 == 0
    }
}

/// The work of a monitor's thread, handed to `pthread_create`.
private final class FollowThread {
    let body: () -> Void

    init(_ body: @escaping () -> Void) {
        self.body = body
    }
}

/// Why a ``NetlinkConnectivityMonitor`` could not start.
public struct NetlinkMonitorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The call that failed (`socket`, `bind`, `socketpair`, `getifaddrs` for reading the interfaces and
    /// routes, or `pthread_create` for the thread that follows them).
    public var step: String
    /// The `errno` it set.
    public var errno: Int32

    /// `netlink bind failed: Operation not permitted (errno 1)`.
    public var description: String {
        "netlink \(step) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// The rtnetlink constants and address layout (`<linux/netlink.h>`, `<linux/rtnetlink.h>`), which Glibc's
/// module does not import.
private enum Netlink {
    static let family: Int32 = 16  // AF_NETLINK
    static let route: Int32 = 0  // NETLINK_ROUTE
    /// RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE.
    static let linkAddressAndRouteGroups: UInt32 = 0x1 | 0x10 | 0x40 | 0x100 | 0x400
    /// `SOL_NETLINK`.
    static let socketOptionLevel: Int32 = 270
    /// `NETLINK_ADD_MEMBERSHIP`: joins one multicast group by number, including those past the bind mask's 32.
    static let addMembership: Int32 = 1
    /// `RTNLGRP_NEXTHOP`: next-hop object changes.
    static let nextHopGroup: UInt32 = 32
    /// The size of `struct nlmsghdr`.
    static let headerSize = 16
    /// `NLMSG_NOOP`.
    static let noop: UInt16 = 1
    /// `RTM_NEWROUTE`.
    static let newRoute: UInt16 = 24
    /// `RTM_DELROUTE`.
    static let deleteRoute: UInt16 = 25
    /// `RTM_GETROUTE`.
    static let getRoute: UInt16 = 26
    /// `NLMSG_ERROR`.
    static let error: UInt16 = 2
    /// `NLMSG_DONE`.
    static let done: UInt16 = 3
    /// `NLM_F_REQUEST | NLM_F_DUMP`.
    static let dumpRequest: UInt16 = 0x1 | 0x300
    /// `RTN_UNICAST`.
    static let unicast: UInt8 = 1
    /// `RTNH_F_DEAD`.
    static let deadHop: UInt32 = 1
    /// `RTA_OIF`.
    static let outputInterface: UInt16 = 4
    /// `RTA_MULTIPATH`.
    static let multipath: UInt16 = 9
    /// `IFA_F_OPTIMISTIC`: a tentative IPv6 address that may be used during its duplicate address check.
    static let optimistic: UInt32 = 0x04
    /// `IFA_F_DADFAILED`: another host on the link has this IPv6 address.
    static let duplicateAddressDetectionFailed: UInt32 = 0x08
    /// `IFA_F_TENTATIVE`: an IPv6 address still in its duplicate address check.
    static let tentative: UInt32 = 0x40

    /// `struct sockaddr_nl`.
    struct Address {
        var family = UInt16(Netlink.family)
        var padding: UInt16 = 0
        var portID: UInt32 = 0
        var groups: UInt32

        init(groups: UInt32) {
            self.groups = groups
        }
    }
}
#endif
