import ResilienceCore

/// One network interface as the operating system reports it: the input from which a platform monitor
/// decides the ``NetworkPath`` (``NetworkPath/init(interfaces:)``).
public struct InterfaceState: Hashable, Sendable {
    /// The interface's name (`eth0`, `wlan0`, `wwan0`).
    public var name: String
    /// The administrator brought it up (`IFF_UP`).
    public var isUp: Bool
    /// It has a carrier and can pass packets (`IFF_RUNNING`).
    public var isRunning: Bool
    /// It is the loopback interface, which reaches nothing beyond this machine.
    public var isLoopback: Bool
    /// It has an IPv4 address.
    public var hasIPv4Address: Bool
    /// It has an IPv6 address that routes beyond the link and can be used: not link-local (`fe80::/10`), and
    /// (where the system says) past its duplicate address check.
    public var hasRoutableIPv6Address: Bool
    /// A default route (`0.0.0.0/0` or `::/0`) leaves through it: traffic for hosts beyond its own subnets has
    /// a way out. Without one, every connection to such a host fails at once (`ENETUNREACH`).
    public var hasDefaultRoute: Bool

    /// Creates a state.
    ///
    /// - Parameters:
    ///   - name: The interface's name.
    ///   - isUp: The administrator brought it up.
    ///   - isRunning: It has a carrier and can pass packets.
    ///   - isLoopback: It is the loopback interface.
    ///   - hasIPv4Address: It has an IPv4 address.
    ///   - hasRoutableIPv6Address: It has an IPv6 address that is not link-local.
    ///   - hasDefaultRoute: A default route leaves through it. Default: `true`, for a caller that does not
    ///     read the routing table.
    public init(
        name: String, isUp: Bool, isRunning: Bool, isLoopback: Bool = false, hasIPv4Address: Bool = false,
        hasRoutableIPv6Address: Bool = false, hasDefaultRoute: Bool = true
    ) {
        self.name = name
        self.isUp = isUp
        self.isRunning = isRunning
        self.isLoopback = isLoopback
        self.hasIPv4Address = hasIPv4Address
        self.hasRoutableIPv6Address = hasRoutableIPv6Address
        self.hasDefaultRoute = hasDefaultRoute
    }

    /// Whether new connections can leave the machine through it: up, running, not loopback, with a routable
    /// address and a default route.
    public var isUsable: Bool {
        isUp && isRunning && !isLoopback && (hasIPv4Address || hasRoutableIPv6Address) && hasDefaultRoute
    }

    /// Whether using it likely costs money or battery: cellular modems (`wwan*`, `rmnet*`, `ccmni*`) and
    /// point-to-point links (`ppp*`), the names Linux gives them.
    public var isLikelyExpensive: Bool {
        ["wwan", "rmnet", "ccmni", "ppp"].contains { name.hasPrefix($0) }
    }
}

extension NetworkPath {
    /// The path the interfaces give: satisfied when one is usable (``InterfaceState/isUsable``: with a routable
    /// address and a default route), expensive
    /// when every usable one is likely expensive (a phone tethered over cellular, a modem-only host).
    ///
    /// - Parameter interfaces: Every interface the system reports, in its order.
    public init(interfaces: [InterfaceState]) {
        let usable = interfaces.filter(\.isUsable)
        self.init(
            status: usable.isEmpty ? .unsatisfied : .satisfied,
            isExpensive: !usable.isEmpty && usable.allSatisfy(\.isLikelyExpensive),
            interfaces: usable.map(\.name))
    }
}
