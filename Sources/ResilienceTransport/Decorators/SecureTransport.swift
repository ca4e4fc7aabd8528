import Foundation

/// Enforces a ``SecureTransportPolicy``: upgrades `http://` to `https://` or blocks it, and never downgrades.
///
/// A blocked request throws ``TransportError/insecureTransport(url:reason:)`` (`insecureTransport`,
/// `NET_010`, with a message naming the host) and emits ``ResilienceEventKind/insecureTransportBlocked``
/// with the URL without its query (which may hold secrets).
public struct SecureTransport: HTTPTransport {
    /// The wrapped transport.
    public let base: any HTTPTransport
    /// The policy.
    public let policy: SecureTransportPolicy

    /// Wraps `base` with `policy`.
    ///
    /// - Parameters:
    ///   - base: The wrapped transport.
    ///   - policy: What happens to plaintext (`http://`) requests. Default: `.standard` (upgrade to HTTPS,
    ///     except for `localhost`, `127.0.0.1` and `::1`).
    public init(wrapping base: any HTTPTransport, policy: SecureTransportPolicy = .standard) {
        self.base = base
        self.policy = policy
    }

    /// Applies the policy, then sends.
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        try await base.send(try secured(request, context: context), context: context)
    }

    /// `request` after the policy: unchanged, upgraded, or refused.
    public func secured(_ request: HTTPRequest, context: ResilienceContext) throws -> HTTPRequest {
        guard request.url.scheme?.lowercased() == "http" else { return request }
        let host = request.url.host?.lowercased() ?? ""
        if policy.allowedInsecureHosts.contains(host) || policy.action == .allow { return request }
        if policy.action == .upgrade, var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false) {
            components.scheme = "https"
            if components.port == 80 { components.port = nil }
            if let upgraded = components.url {
                var request = request
                request.url = upgraded
                return request
            }
        }
        let redacted = Self.redacted(request.url)
        context.emit(.insecureTransportBlocked) { $0.detail = redacted }
        throw TransportError.insecureTransport(
            url: request.url, reason: "blocked plaintext HTTP to \(host); use https:// or allow the host in the policy")
    }

    static func redacted(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "(url)" }
        components.query = nil
        components.user = nil
        components.password = nil
        return components.string ?? "(url)"
    }
}
