import Foundation
import ResilienceCore
import ResilienceTesting
import Testing

@testable import ResilienceTransport

#if os(Linux)
import Glibc

/// The Linux monitor against the real kernel: a network namespace made for the test, a veth pair inside it,
/// and the `connectivity-probe` executable running in the namespace while the test takes the interface down
/// and up. Real processes and real time, with generous bounds. Skipped, saying why, where the test cannot
/// create network namespaces (not root, or a sandbox without them).
@Suite("NetlinkConnectivityMonitor in a network namespace", .serialized)
struct ConnectivityNamespaceTests {
    /// Whether this process may create network namespaces (`ip netns add` as root).
    static let namespacesAvailable: Bool = {
        guard geteuid() == 0 else { return false }
        let name = "rk-check-\(getpid())"
        defer { _ = try? ip(["netns", "del", name]) }
        return (try? ip(["netns", "add", name])) != nil
    }()

    /// Where iproute2's `ip` is.
    static let ipExecutable =
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }
        ?? "/usr/sbin/ip"

    /// Runs `ip` with `arguments`; throws with its output when it fails.
    @discardableResult
    static func ip(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ipExecutable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw NamespaceError(command: "ip " + arguments.joined(separator: " "), output: text)
        }
        return text
    }

    struct NamespaceError: Error, CustomStringConvertible {
        var command: String
        var output: String
        var description: String { "\(command) failed: \(output)" }
    }

    /// The built `connectivity-probe`, beside the test bundle.
    static func probe() -> URL? { BuiltExecutable.url(named: "connectivity-probe") }

    /// A network namespace made for one test: `veth0` (10.200.0.1/24) up with its peer `veth1`, and a default
    /// route through it. ``delete()`` removes it.
    struct TestNamespace {
        let name: String

        init(name: String) throws {
            try ConnectivityNamespaceTests.ip(["netns", "add", name])
            self.name = name
            do {
                try ip(["link", "add", "veth0", "type", "veth", "peer", "name", "veth1"])
                try ip(["addr", "add", "10.200.0.1/24", "dev", "veth0"])
                try ip(["link", "set", "veth1", "up"])
                try ip(["link", "set", "veth0", "up"])
                try ip(Self.defaultRoute)
            } catch {
                delete()
                throw error
            }
        }

        /// The `ip` arguments that add (or replace) the default route through `veth0`.
        static let defaultRoute = ["route", "replace", "default", "via", "10.200.0.254", "dev", "veth0"]

        /// Runs `ip -n <namespace>` with `arguments`.
        @discardableResult
        func ip(_ arguments: [String]) throws -> String {
            try ConnectivityNamespaceTests.ip(["-n", name] + arguments)
        }

        /// Deletes the namespace.
        func delete() { _ = try? ConnectivityNamespaceTests.ip(["netns", "del", name]) }

        /// A monitor started on a thread that entered this namespace (`setns`), so the monitor and its thread
        /// follow this namespace while the test process stays in its own.
        func monitor() async throws -> NetlinkConnectivityMonitor {
            let setns = try #require(ConnectivityNamespaceTests.setns, "setns is not in the C library")
            let path = "/run/netns/\(name)"
            return try await withCheckedThrowingContinuation { continuation in
                let thread = Thread {
                    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                    defer { if descriptor >= 0 { close(descriptor) } }
                    guard descriptor >= 0, setns(descriptor, ConnectivityNamespaceTests.newNetworkNamespace) == 0 else {
                        let reason = String(cString: strerror(errno))
                        continuation.resume(throwing: NamespaceError(command: "setns \(path)", output: reason))
                        return
                    }
                    continuation.resume(with: Result { try NetlinkConnectivityMonitor() })
                }
                thread.start()
            }
        }
    }

    /// `setns(2)`, which Glibc's module does not import.
    static let setns: (@convention(c) (Int32, Int32) -> Int32)? = dlsym(nil, "setns").map {
        unsafeBitCast($0, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }

    /// `CLONE_NEWNET`.
    static let newNetworkNamespace: Int32 = 0x4000_0000

    /// A ``TestNamespace`` with `connectivity-probe` running inside, printing the path and then `changes`
    /// changes as ``lines``. ``close()`` ends the probe and deletes the namespace.
    struct ProbedNamespace {
        let name: String
        let lines: AsyncStream<String>
        private let process: Process

        init(name: String, changes: Int) throws {
            let probe = try #require(ConnectivityNamespaceTests.probe(), "connectivity-probe is not built")
            let namespace = try TestNamespace(name: name)
            self.name = name
            process = Process()
            do {
                process.executableURL = URL(fileURLWithPath: ConnectivityNamespaceTests.ipExecutable)
                process.arguments = ["netns", "exec", name, probe.path, "--changes", "\(changes)"]
                let output = Pipe()
                process.standardOutput = output
                lines = ConnectivityNamespaceTests.lines(of: output.fileHandleForReading)
                try process.run()
            } catch {
                namespace.delete()
                throw error
            }
        }

        /// The `ip` arguments that add the default route through `veth0` in `namespace`.
        static func addDefaultRoute(in namespace: String) -> [String] {
            ["-n", namespace] + TestNamespace.defaultRoute
        }

        /// Ends the probe and deletes the namespace.
        func close() {
            if process.isRunning { process.terminate() }
            _ = try? ConnectivityNamespaceTests.ip(["netns", "del", name])
        }
    }

    @Test(
        "Taking the interface down and up: unsatisfied, then satisfied again",
        .enabled(if: namespacesAvailable, "needs root and network namespaces (ip netns add)"))
    func downAndUp() async throws {
        let probed = try ProbedNamespace(name: "rk-conn-\(getpid())", changes: 2)
        defer { probed.close() }
        let (namespace, lines) = (probed.name, probed.lines)
        // The probe's three lines (the path, after down, after up), all within one generous bound.
        let seen = try await withDeadline(after: .seconds(60), clock: .continuous) {
            var reader = lines.makeAsyncIterator()
            let first = await reader.next()
            try Self.ip(["-n", namespace, "link", "set", "veth0", "down"])
            let down = await reader.next()
            try Self.ip(["-n", namespace, "link", "set", "veth0", "up"])
            // Taking the link down removed its default route; back up, it is added again (as DHCP would).
            try Self.ip(ProbedNamespace.addDefaultRoute(in: namespace))
            let up = await reader.next()
            return [first, down, up]
        }
        #expect(seen[0]?.hasPrefix("path: satisfied") == true, "first: \(seen[0] ?? "nothing")")
        #expect(seen[0]?.contains("veth0") == true)
        #expect(seen[1] == "path: unsatisfied", "after down: \(seen[1] ?? "nothing")")
        #expect(seen[2]?.hasPrefix("path: satisfied") == true, "after up: \(seen[2] ?? "nothing")")
    }

    @Test(
        "The default route gone while the link stays up: unsatisfied, then satisfied when it is back",
        .enabled(if: namespacesAvailable, "needs root and network namespaces (ip netns add)"))
    func defaultRouteGoneAndBack() async throws {
        let probed = try ProbedNamespace(name: "rk-route-\(getpid())", changes: 2)
        defer { probed.close() }
        let (namespace, lines) = (probed.name, probed.lines)
        let route = ProbedNamespace.addDefaultRoute(in: namespace)
        let seen = try await withDeadline(after: .seconds(60), clock: .continuous) {
            var reader = lines.makeAsyncIterator()
            let first = await reader.next()
            // veth0 keeps its carrier and address: only the way beyond its subnet goes.
            try Self.ip(["-n", namespace, "route", "del", "default"])
            let gone = await reader.next()
            try Self.ip(route)
            let back = await reader.next()
            return [first, gone, back]
        }
        #expect(seen[0] == "path: satisfied [veth0]", "first: \(seen[0] ?? "nothing")")
        #expect(seen[1] == "path: unsatisfied", "after the route went: \(seen[1] ?? "nothing")")
        #expect(seen[2] == "path: satisfied [veth0]", "after it came back: \(seen[2] ?? "nothing")")
    }

    @Test(
        "A monitor started on a thread in another namespace reads that namespace's routes, not the main thread's",
        .enabled(if: namespacesAvailable, "needs root and network namespaces (ip netns add)"))
    func threadNamespaceRoutes() async throws {
        let namespace = try TestNamespace(name: "rk-thread-\(getpid())")
        defer { namespace.delete() }
        let monitor = try await namespace.monitor()
        defer { monitor.stop() }
        // veth0 has its default route in the namespace; the test process's own namespace has no veth0.
        #expect(monitor.currentPath == NetworkPath(status: .satisfied, interfaces: ["veth0"]))
        try namespace.ip(["route", "del", "default"])
        let gone = try await withDeadline(after: .seconds(60), clock: .continuous) {
            try await monitor.waitForPath { !$0.isSatisfied }
        }
        #expect(gone == .unsatisfied)
    }

    @Test(
        "The Linux monitor passes the connectivity conformance kit in a namespace whose link goes down and up",
        .enabled(if: namespacesAvailable, "needs root and network namespaces (ip netns add)"))
    func conformance() async throws {
        let namespace = try TestNamespace(name: "rk-kit-\(getpid())")
        defer { namespace.delete() }
        let kit = ConnectivityMonitorConformance {
            // Each case starts from a satisfied path: veth0 up with its default route.
            try namespace.ip(["link", "set", "veth0", "up"])
            try namespace.ip(TestNamespace.defaultRoute)
            let monitor = try await namespace.monitor()
            _ = try await monitor.waitForPath()
            return (
                monitor,
                { path in
                    if path.isSatisfied {
                        try namespace.ip(["link", "set", "veth0", "up"])
                        try namespace.ip(TestNamespace.defaultRoute)
                    } else {
                        try namespace.ip(["link", "set", "veth0", "down"])
                    }
                    // Returns once the monitor learned of it, as the kit asks of a system monitor.
                    _ = try await monitor.waitForPath { $0.status == path.status }
                }
            )
        }
        try await kit.check()
    }

    @Test(
        "Routes to networks come and go without re-reading the routing table; a default route's change is seen",
        .enabled(if: namespacesAvailable, "needs root and network namespaces (ip netns add)"))
    func networkRoutesCostNoReread() async throws {
        let namespace = try TestNamespace(name: "rk-routes-\(getpid())")
        defer { namespace.delete() }
        let monitor = try await namespace.monitor()
        defer { monitor.stop() }
        #expect(monitor.currentPath.isSatisfied)
        let before = monitor.rereadCount
        // 2,000 routes to networks beyond the gateway, as a router or a Kubernetes node has: at once (`ip -batch`),
        // then 100 more one at a time, each a change of its own as when a node adds a pod's route.
        let batch = FileManager.default.temporaryDirectory.appendingPathComponent("rk-routes-\(getpid()).txt")
        defer { try? FileManager.default.removeItem(at: batch) }
        let routes = (0..<2_000).map { "route add 10.\(100 + $0 / 250).\($0 % 250).0/24 via 10.200.0.254 dev veth0" }
        try routes.joined(separator: "\n").write(to: batch, atomically: true, encoding: .utf8)
        try namespace.ip(["-batch", batch.path])
        for index in 0..<100 { try namespace.ip(["route", "add", "10.99.\(index).0/24", "via", "10.200.0.254"]) }
        // The default route's removal comes after every one of them: once it is seen, all were followed.
        try namespace.ip(["route", "del", "default"])
        let gone = try await withDeadline(after: .seconds(60), clock: .continuous) {
            try await monitor.waitForPath { !$0.isSatisfied }
        }
        #expect(gone == .unsatisfied)
        let rereads = monitor.rereadCount - before
        // The default route's removal is one; an IPv6 link-local address finishing its duplicate check may add
        // one or two. Never one per route.
        #expect(rereads < 10, "\(rereads) re-reads of the routing table for 2,100 routes")
        try namespace.ip(TestNamespace.defaultRoute)
        let back = try await withDeadline(after: .seconds(60), clock: .continuous) {
            try await monitor.waitForPath()
        }
        #expect(back == NetworkPath(status: .satisfied, interfaces: ["veth0"]))
    }

    @Test(
        "An IPv6-only link is satisfied only once its address passed the duplicate check, never with a duplicate",
        .enabled(if: namespacesAvailable, "needs root and network namespaces (ip netns add)"))
    func ipv6AddressUsableOnlyAfterItsCheck() async throws {
        let namespace = try TestNamespace(name: "rk-ipv6-\(getpid())")
        defer { namespace.delete() }
        try namespace.ip(["-4", "addr", "flush", "dev", "veth0"])  // IPv6 only: no IPv4 address or route
        let monitor = try await namespace.monitor()
        defer { monitor.stop() }
        #expect(monitor.currentPath == .unsatisfied)
        let seen = LockedState(initialState: [NetworkPath]())
        let listener = Task {
            for await path in monitor.paths() {
                seen.withLock { $0.append(path) }
                if path.interfaces.contains("veth0") { return }
            }
        }
        defer { listener.cancel() }
        // veth1, on the same link, already has the address veth0 is given: its duplicate check fails.
        try namespace.ip(["-6", "addr", "add", "2001:db8::5/64", "dev", "veth1", "nodad"])
        try namespace.ip(["-6", "addr", "add", "2001:db8::5/64", "dev", "veth0"])
        try namespace.ip(["-6", "route", "add", "default", "via", "2001:db8::fe", "dev", "veth0"])
        // The kernel's duplicate address check takes about a second of real time: a shell in the namespace waits
        // for its verdict, as the probe scripts below wait for theirs.
        let checked = try await Self.run(
            Self.ipExecutable,
            [
                "netns", "exec", namespace.name, "sh", "-c",
                "until ip -6 addr show dev veth0 | grep -q dadfailed; do sleep 0.05; done",
            ],
            within: .seconds(60))
        try #require(
            checked.exited && checked.status == 0, "the duplicate address check never failed: \(checked.output)")
        // A second link, its address used at once (`nodad`): once it is seen, so was the failed check before it.
        try namespace.ip(["link", "add", "veth2", "type", "veth", "peer", "name", "veth3"])
        try namespace.ip(["link", "set", "veth3", "up"])
        try namespace.ip(["-6", "addr", "add", "2001:db9::1/64", "dev", "veth2", "nodad"])
        try namespace.ip(["link", "set", "veth2", "up"])
        try namespace.ip(["-6", "route", "add", "default", "via", "2001:db9::fe", "dev", "veth2", "metric", "2048"])
        _ = try await withDeadline(after: .seconds(60), clock: .continuous) {
            try await monitor.waitForPath { $0.interfaces.contains("veth2") }
        }
        #expect(!seen.withLock { $0 }.contains { $0.interfaces.contains("veth0") }, "\(seen.withLock { $0 })")
        // An address of its own: usable once its check passes (a second or two), and the path says so then.
        try namespace.ip(["-6", "addr", "add", "2001:db8::1/64", "dev", "veth0"])
        let both = try await withDeadline(after: .seconds(60), clock: .continuous) {
            try await monitor.waitForPath { $0.interfaces.contains("veth0") }
        }
        #expect(both == NetworkPath(status: .satisfied, interfaces: ["veth0", "veth2"]))
        #expect(
            try !namespace.ip(["-6", "addr", "show", "dev", "veth0"]).contains("2001:db8::1/64 scope global tentative"))
    }

    @Test(
        "A multipath default route: every next hop's interface carries the path, not only the first one's",
        .enabled(if: namespacesAvailable, "needs root and network namespaces (ip netns add)"))
    func multipathDefaultRoute() async throws {
        let namespace = try TestNamespace(name: "rk-ecmp-\(getpid())")
        defer { namespace.delete() }
        try namespace.ip(["link", "add", "veth2", "type", "veth", "peer", "name", "veth3"])
        try namespace.ip(["addr", "add", "10.201.0.1/24", "dev", "veth2"])
        try namespace.ip(["link", "set", "veth3", "up"])
        try namespace.ip(["link", "set", "veth2", "up"])
        try namespace.ip([
            "route", "replace", "default", "nexthop", "via", "10.200.0.254", "dev", "veth0", "nexthop", "via",
            "10.201.0.254", "dev", "veth2",
        ])
        let monitor = try await namespace.monitor()
        defer { monitor.stop() }
        let both = try await withDeadline(after: .seconds(60), clock: .continuous) {
            try await monitor.waitForPath { $0.interfaces.count == 2 }
        }
        #expect(both == NetworkPath(status: .satisfied, interfaces: ["veth0", "veth2"]))
        // The first next hop's link goes; traffic leaves through the second.
        try namespace.ip(["link", "set", "veth0", "down"])
        let second = try await withDeadline(after: .seconds(60), clock: .continuous) {
            try await monitor.waitForPath { !$0.interfaces.contains("veth0") }
        }
        #expect(second == NetworkPath(status: .satisfied, interfaces: ["veth2"]))
    }

    @Test(
        "A default route in a table of its own, selected by a rule: satisfied, and unsatisfied when it goes",
        .enabled(if: namespacesAvailable, "needs root and network namespaces (ip netns add)"))
    func policyRoutedDefaultRoute() async throws {
        let namespace = try TestNamespace(name: "rk-rule-\(getpid())")
        defer { namespace.delete() }
        // Policy routing, as a VPN or a host with one table per uplink sets it up: the main table has no default
        // route, table 100 has one, and a rule sends every lookup to table 100 first.
        try namespace.ip(["route", "del", "default"])
        try namespace.ip(["route", "add", "default", "via", "10.200.0.254", "dev", "veth0", "table", "100"])
        try namespace.ip(["rule", "add", "lookup", "100", "pref", "100"])
        #expect(try namespace.ip(["route", "get", "192.0.2.1"]).contains("dev veth0"))
        let monitor = try await namespace.monitor()
        defer { monitor.stop() }
        let routed = try await withDeadline(after: .seconds(60), clock: .continuous) {
            try await monitor.waitForPath { $0.status == .satisfied }
        }
        #expect(routed == NetworkPath(status: .satisfied, interfaces: ["veth0"]))
        try namespace.ip(["route", "del", "default", "table", "100"])
        let gone = try await withDeadline(after: .seconds(60), clock: .continuous) {
            try await monitor.waitForPath { $0.status == .unsatisfied }
        }
        #expect(gone == NetworkPath(status: .unsatisfied, interfaces: []))
    }

    @Test(
        "A default route through a next-hop object: unsatisfied when the object is deleted, which takes the route along",
        .enabled(if: namespacesAvailable, "needs root and network namespaces (ip netns add)"))
    func nextHopObjectDeleted() async throws {
        let namespace = try TestNamespace(name: "rk-nhid-\(getpid())")
        defer { namespace.delete() }
        // No IPv6: the links' link-local addresses, which finish their duplicate check a second or two after the
        // links come up, would make the monitor re-read everything then, whatever else it had missed.
        for interface in ["veth0", "veth1"] {
            try Self.ip(["netns", "exec", namespace.name, "sysctl", "-qw", "net.ipv6.conf.\(interface).disable_ipv6=1"])
        }
        // As a routing daemon (FRR) installs routes: through a next-hop object the route names by id.
        try namespace.ip(["nexthop", "add", "id", "1", "via", "10.200.0.254", "dev", "veth0"])
        try namespace.ip(["route", "replace", "default", "nhid", "1"])
        let monitor = try await namespace.monitor()
        defer { monitor.stop() }
        #expect(monitor.currentPath == NetworkPath(status: .satisfied, interfaces: ["veth0"]))
        // The kernel removes every route through a deleted object and sends no route notification for them.
        try namespace.ip(["nexthop", "del", "id", "1"])
        #expect(try namespace.ip(["route", "show", "default"]).isEmpty)
        let gone = try await withDeadline(after: .seconds(60), clock: .continuous) {
            try await monitor.waitForPath { $0.status == .unsatisfied }
        }
        #expect(gone == NetworkPath(status: .unsatisfied, interfaces: []))
    }

    /// Whether `executable` runs with `arguments` and exits with status 0 (its output discarded).
    static func succeeds(_ executable: String, _ arguments: [String]) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: executable) else { return false }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Runs `executable` with `arguments` until it exits, within `bound` of real time (a real kernel and
    /// processes): whether it exited in time, its status, and what it printed.
    static func run(
        _ executable: String, _ arguments: [String], within bound: Duration
    ) async throws -> (exited: Bool, status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let log = Pipe()
        process.standardOutput = log
        process.standardError = log
        let exited = AsyncStream<Void> { continuation in process.terminationHandler = { _ in continuation.finish() } }
        try process.run()
        let finished = try? await withDeadline(after: bound, clock: .continuous) {
            for await _ in exited {}
            try Task.checkCancellation()
            return true
        }
        // Ended first (SIGKILL: a child may block SIGTERM), so that its output ends too.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        let output = String(decoding: log.fileHandleForReading.availableData, as: UTF8.self)
        return (finished == true && !process.isRunning, finished == true ? process.terminationStatus : -1, output)
    }

    /// Whether this process may start `connectivity-probe` as another user (`setpriv`, as root) with a limit on
    /// its threads (`prlimit`).
    static let threadLimitAvailable: Bool = {
        guard geteuid() == 0, let probe = probe() else { return false }
        return succeeds("/usr/bin/prlimit", ["--version"])
            && succeeds("/usr/bin/setpriv", Self.asNobody + ["/usr/bin/test", "-x", probe.path])
    }()

    /// `setpriv` arguments that run a command as `nobody`, whose threads `RLIMIT_NPROC` counts (root's it does not).
    static let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]

    @Test(
        "A process that can start no thread gets a typed error from the monitor, not one whose path never changes",
        .enabled(if: threadLimitAvailable, "needs root, setpriv and prlimit, and the probe executable by nobody"))
    func noThreadThrows() async throws {
        let probe = try #require(Self.probe(), "connectivity-probe is not built beside the tests")
        // One process and no thread more for its user: the monitor's thread cannot start.
        let run = try await Self.run(
            "/usr/bin/setpriv", Self.asNobody + ["/usr/bin/prlimit", "--nproc=1", probe.path, "--changes", "0"],
            within: .seconds(30))
        #expect(run.exited, "the probe was still running after 30 s: \(run.output)")
        #expect(run.status == 1 && run.output.contains("netlink pthread_create failed"), "\(run.output)")
    }

    /// Whether `strace` is there and may trace a child process.
    static let straceAvailable = succeeds("/usr/bin/strace", ["-o", "/dev/null", "/bin/true"])

    @Test(
        "The monitor's descriptors are close-on-exec from the call that creates them: a child never inherits one",
        .enabled(if: straceAvailable, "needs strace, allowed to trace a child process"))
    func descriptorsCloseOnExecFromCreation() async throws {
        let probe = try #require(Self.probe(), "connectivity-probe is not built beside the tests")
        let trace = FileManager.default.temporaryDirectory.appendingPathComponent("rk-cloexec-\(getpid()).txt")
        defer { try? FileManager.default.removeItem(at: trace) }
        // The probe starts the monitor, prints the path and exits.
        let traced = try await Self.run(
            "/usr/bin/strace",
            [
                "-f", "-qq", "-e", "trace=socket,socketpair,pipe,pipe2,fcntl", "-o", trace.path, probe.path,
                "--changes", "0",
            ],
            within: .seconds(60))
        #expect(traced.exited && traced.status == 0, "\(traced.output)")
        let calls = try String(contentsOf: trace, encoding: .utf8).split(separator: "\n").map(String.init)
        // The monitor's netlink socket and its stop signal (the C library's own sockets say so too).
        let created = calls.filter { $0.contains("socket(") || $0.contains("socketpair(") || $0.contains("pipe") }
        #expect(created.contains { $0.contains("socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC") }, "\(calls)")
        #expect(created.contains { $0.contains("socketpair(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC") }, "\(calls)")
        // Made without the flag, a descriptor is inherited by a child started before a later `fcntl` sets it.
        #expect(created.allSatisfy { $0.contains("CLOEXEC") }, "\(created)")
        #expect(!calls.contains { $0.contains("F_SETFD") }, "\(calls)")
    }

    /// Whether this process may make a network namespace of its own without root (`unshare -rn`), and
    /// `prlimit` is there to take file descriptors away from another process.
    static let userNamespacesAvailable =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit")
        && succeeds("/usr/bin/unshare", ["-rn", "ip", "link", "add", "rk0", "type", "veth", "peer", "name", "rk1"])

    /// In a namespace of its own: two veth pairs, `veth0` up with an address; the probe ($1) writing to $2; then
    /// an address change while the probe cannot open a file descriptor (so `getifaddrs` fails), the limit
    /// lifted, and `veth2` brought up with a default route of its own: the probe's one change to print.
    static let fileDescriptorPressureScript = #"""
        set -e
        ip link add veth0 type veth peer name veth1
        ip addr add 10.200.0.1/24 dev veth0
        ip link set veth1 up
        ip link set veth0 up
        ip route add default via 10.200.0.254 dev veth0
        ip link add veth2 type veth peer name veth3
        ip addr add 10.201.0.1/24 dev veth2
        ip link set veth3 up
        "$1" --changes 1 > "$2" &
        pid=$!
        i=0; while [ ! -s "$2" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
        free=0; while [ -e /proc/$pid/fd/$free ]; do free=$((free+1)); done
        prlimit --pid $pid --nofile=$free:
        ip addr add 10.200.0.2/24 dev veth0
        sleep 1
        prlimit --pid $pid --nofile=1024:
        ip link set veth2 up
        ip route add default via 10.201.0.254 dev veth2 metric 200
        wait $pid
        """#

    @Test(
        "A re-read that fails (out of file descriptors) keeps the path: never reported as unsatisfied",
        .enabled(if: userNamespacesAvailable, "needs unshare -rn (user and network namespaces) and prlimit"))
    func failedReadKeepsThePath() async throws {
        let probe = try #require(Self.probe(), "connectivity-probe is not built beside the tests")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("rk-netlink-\(getpid()).txt")
        defer { try? FileManager.default.removeItem(at: output) }
        // The script takes about a second.
        let run = try await Self.run(
            "/usr/bin/unshare", ["-rn", "sh", "-c", Self.fileDescriptorPressureScript, "sh", probe.path, output.path],
            within: .seconds(90))
        #expect(run.exited, "the script did not finish within 90 s")
        let script = run.output
        let lines = (try? String(contentsOf: output, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
        #expect(lines.first == "path: satisfied [veth0]", "\(lines) \(script)")
        // veth0 stayed up with its addresses: the failed read must not have been reported as offline.
        #expect(!lines.contains("path: unsatisfied"), "\(lines) \(script)")
        #expect(lines.count == 2 && lines[1].hasPrefix("path: satisfied") && lines[1].contains("veth2"), "\(lines)")
        #expect(run.status == 0, "\(script)")
    }

    /// The lines a pipe delivers, as they arrive.
    static func lines(of handle: FileHandle) -> AsyncStream<String> {
        AsyncStream { continuation in
            let pending = LockedState(initialState: "")
            handle.readabilityHandler = { handle in
                let data = handle.availableData
                guard !data.isEmpty else {
                    handle.readabilityHandler = nil
                    continuation.finish()
                    return
                }
                let complete: [String] = pending.withLock { buffer in
                    buffer += String(decoding: data, as: UTF8.self)
                    var lines = buffer.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                    buffer = lines.removeLast()
                    return lines
                }
                for line in complete { continuation.yield(line) }
            }
        }
    }
}
#endif
