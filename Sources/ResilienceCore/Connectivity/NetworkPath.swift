/// The network path new connections would take: whether it can reach anything, and what using it costs.
///
/// The platform-neutral form of Apple's `NWPath` and of what Linux reports through rtnetlink, so that
/// policies, the sync engine and the presentation layer decide from one value whatever monitor produced it.
public struct NetworkPath: Hashable, Sendable, CustomStringConvertible {
    /// Whether the path can be used.
    public struct Status: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The identifier (`"satisfied"`).
        public let rawValue: String

        /// A status named `rawValue`.
        ///
        /// - Parameter rawValue: The identifier, in kebab-case like the predefined statuses.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// The identifier.
        public var description: String { rawValue }

        /// Connections can be made: an interface is up and has a routable address.
        public static let satisfied = Status(rawValue: "satisfied")
        /// No interface can reach the network (airplane mode, no link, no address).
        public static let unsatisfied = Status(rawValue: "unsatisfied")
        /// An interface could connect once something is done first (a VPN on demand, a cellular data
        /// connection that has to be brought up): not usable yet, but a request may bring it up.
        public static let requiresConnection = Status(rawValue: "requires-connection")
    }

    /// Whether the path can be used.
    public var status: Status
    /// True when the path costs the person money or battery (cellular, a personal hotspot).
    public var isExpensive: Bool
    /// True when the person asked to use little data (Low Data Mode).
    public var isConstrained: Bool
    /// The names of the usable interfaces (`en0`, `eth0`), in the monitor's order; empty when unknown.
    public var interfaces: [String]

    /// Creates a path.
    ///
    /// - Parameters:
    ///   - status: Whether the path can be used.
    ///   - isExpensive: True when the path costs money or battery. Default: `false`.
    ///   - isConstrained: True when the person asked to use little data. Default: `false`.
    ///   - interfaces: The names of the usable interfaces. Default: none.
    public init(status: Status, isExpensive: Bool = false, isConstrained: Bool = false, interfaces: [String] = []) {
        self.status = status
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
        self.interfaces = interfaces
    }

    /// A usable, free, unconstrained path.
    public static let satisfied = NetworkPath(status: .satisfied)
    /// No usable path.
    public static let unsatisfied = NetworkPath(status: .unsatisfied)

    /// True when connections can be made now.
    public var isSatisfied: Bool { status == .satisfied }

    /// `satisfied (expensive, constrained) [en0]`.
    public var description: String {
        var text = status.rawValue
        let flags = [isExpensive ? "expensive" : nil, isConstrained ? "constrained" : nil].compactMap { $0 }
        if !flags.isEmpty { text += " (" + flags.joined(separator: ", ") + ")" }
        if !interfaces.isEmpty { text += " [" + interfaces.joined(separator: ", ") + "]" }
        return text
    }
}
