/// What ``SecureTransport`` does with a plaintext (`http://`) request.
public struct SecureTransportPolicy: Sendable, Hashable {
    /// How plaintext is treated.
    public struct Action: RawRepresentable, Sendable, Hashable {
        /// The identifier.
        public let rawValue: String
        /// Creates an action.
        ///
        /// - Parameter rawValue: The identifier, like the predefined `"upgrade"`, `"block"` and `"allow"`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Rewrite `http://` to `https://` and send.
        public static let upgrade = Action(rawValue: "upgrade")
        /// Refuse with an `insecureTransport` failure.
        public static let block = Action(rawValue: "block")
        /// Send as is.
        public static let allow = Action(rawValue: "allow")
    }

    /// What happens to plaintext requests to hosts not in ``allowedInsecureHosts``.
    public var action: Action
    /// Hosts that may be reached over plaintext (for example a local development server).
    public var allowedInsecureHosts: Set<String>

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - action: What happens to plaintext requests to hosts not in ``allowedInsecureHosts``. Default: `.upgrade`.
    ///   - allowedInsecureHosts: Hosts that may be reached over plaintext (for example a local development server).
    ///     Default: `[]`.
    public init(action: Action = .upgrade, allowedInsecureHosts: Set<String> = []) {
        self.action = action
        self.allowedInsecureHosts = Set(allowedInsecureHosts.map { $0.lowercased() })
    }

    /// Upgrade every plaintext `http` request to `https`, as App Transport Security expects; no host is exempt.
    public static let upgrade = SecureTransportPolicy(action: .upgrade)
    /// Refuse every plaintext request.
    public static let block = SecureTransportPolicy(action: .block)
    /// Allow plaintext only to loopback (`localhost`, `127.0.0.1`, `::1`); upgrade the rest.
    public static let standard = SecureTransportPolicy(
        action: .upgrade, allowedInsecureHosts: ["localhost", "127.0.0.1", "::1"])
}
