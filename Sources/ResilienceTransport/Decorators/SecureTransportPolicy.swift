import Foundation

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

extension SecureTransportPolicy {
    /// The URL a request to `url` goes to under this policy: `url` itself when it is not plaintext `http`, when
    /// its host is in ``allowedInsecureHosts`` or when the action is ``Action/allow``; its `https` form (port 80
    /// dropped) when the action is ``Action/upgrade``.
    ///
    /// This is the one rule for plaintext: ``SecureTransport`` applies it to the request, and ``RedirectPolicy``
    /// to every redirect hop a transport follows under that ``SecureTransport``.
    /// - Parameter url: The URL a request is about to be sent to.
    /// - Returns: The URL to send it to.
    /// - Throws: ``TransportError/insecureTransport(url:reason:)`` (`NET_010`, its message naming the host) when
    ///   the policy refuses plaintext to the host (``Action/block``, or an action the policy does not know).
    public func secured(_ url: URL) throws(TransportError) -> URL {
        guard url.scheme?.lowercased() == "http" else { return url }
        let host = url.host?.lowercased() ?? ""
        if allowedInsecureHosts.contains(host) || action == .allow { return url }
        if action == .upgrade, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            components.scheme = "https"
            if components.port == 80 { components.port = nil }
            if let upgraded = components.url { return upgraded }
        }
        throw TransportError.insecureTransport(
            url: url, reason: "blocked plaintext HTTP to \(host); use https:// or allow the host in the policy")
    }

    /// The policies of the ``SecureTransport``s the current task is sending through, outermost first; empty
    /// outside any.
    ///
    /// A ``SecureTransport`` sets it for the duration of its wrapped transport's `send`, so a transport that
    /// follows redirects itself holds every hop to the same policies as the first request: ``RedirectPolicy``
    /// reads it when it is created (its `secureTransport` parameter's default).
    public static var inEffect: [SecureTransportPolicy] { active }

    /// The storage of ``inEffect``: bound by ``SecureTransport/send(_:context:)`` around its wrapped transport.
    @TaskLocal static var active: [SecureTransportPolicy] = []

    /// `url` after each of `policies` in turn (outermost first), as a request passes through nested
    /// ``SecureTransport``s.
    static func secured(_ url: URL, by policies: [SecureTransportPolicy]) throws(TransportError) -> URL {
        var url = url
        for policy in policies { url = try policy.secured(url) }
        return url
    }
}
