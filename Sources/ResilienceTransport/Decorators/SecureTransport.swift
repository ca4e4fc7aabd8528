import Foundation

/// Enforces a ``SecureTransportPolicy``: upgrades `http://` to `https://` or blocks it, and never downgrades,
/// on the request and on every redirect hop the wrapped transport follows.
///
/// A blocked request throws ``TransportError/insecureTransport(url:reason:)`` (`insecureTransport`,
/// `NET_010`, with a message naming the host) and emits ``ResilienceEventKind/insecureTransportBlocked``
/// with the URL without its query (which may hold secrets).
///
/// Redirects are followed inside the wrapped transport, so the policy travels with the call: while the wrapped
/// transport sends, ``SecureTransportPolicy/inEffect`` holds it, and ``RedirectPolicy`` (which
/// ``URLSessionTransport`` and the AsyncHTTPClient transport decide every hop with) applies the same rule to each
/// hop's target: a plaintext hop to a host the policy does not allow is upgraded to `https` (``SecureTransportPolicy/Action/upgrade``)
/// or refused before it is sent (``SecureTransportPolicy/Action/block``). A refusal from the wrapped transport
/// with the same code (a hop refused by the policy, an https→http redirect) is reported with the same event.
/// Nested secure transports apply their policies in order, outermost first, to the request and to every hop;
/// only the outermost emits the event.
public struct SecureTransport: HTTPTransport {
    /// The wrapped transport.
    public let base: any HTTPTransport
    /// The policy.
    public let policy: SecureTransportPolicy

    /// Wraps `base` with `policy`.
    ///
    /// - Parameters:
    ///   - base: The wrapped transport.
    ///   - policy: What happens to plaintext (`http://`) requests and redirect hops. Default: `.standard`
    ///     (upgrade to HTTPS, except for `localhost`, `127.0.0.1` and `::1`).
    public init(wrapping base: any HTTPTransport, policy: SecureTransportPolicy = .standard) {
        self.base = base
        self.policy = policy
    }

    /// Applies the policy, then sends with the policy in effect for every redirect hop the wrapped transport
    /// follows (``SecureTransportPolicy/inEffect``).
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        try await enforcing(request, context: context) { request in
            try await base.send(request, context: context)
        }
    }

    /// Runs `operation`, a request made some other way than ``HTTPTransport/send(_:context:)`` (a streamed
    /// response, say), under the policy exactly as ``send(_:context:)`` runs the wrapped transport: `operation` gets
    /// `request` after the policy (upgraded to `https`, or refused before `operation` runs) and runs with the policy
    /// in effect (``SecureTransportPolicy/inEffect``), so every redirect hop it follows through ``RedirectPolicy`` is
    /// held to it. A refusal with the `insecureTransport` code, the request's or a hop's, emits
    /// ``ResilienceEventKind/insecureTransportBlocked`` unless an enclosing ``SecureTransport`` does.
    ///
    /// The policy in effect is a task-local value: a transport that hands the request to a detached task or
    /// another thread reads ``SecureTransportPolicy/inEffect`` before it does and passes the policies on.
    /// - Parameters:
    ///   - request: The request about to be made.
    ///   - context: Where the event goes.
    ///   - operation: Makes the request it is given.
    /// - Returns: What `operation` returns.
    public func enforcing<Result>(
        _ request: HTTPRequest, context: ResilienceContext, _ operation: (HTTPRequest) async throws -> Result
    ) async throws -> Result {
        let enclosing = SecureTransportPolicy.active
        do {
            var request = request
            request.url = try policy.secured(request.url)
            return try await SecureTransportPolicy.$active.withValue(enclosing + [policy]) {
                try await operation(request)
            }
        } catch let failure as TransportError where failure.code == .insecureTransportBlocked {
            if enclosing.isEmpty { Self.report(failure, context: context) }
            throw failure
        }
    }

    /// `request` after the policy: unchanged, upgraded, or refused (emitting
    /// ``ResilienceEventKind/insecureTransportBlocked``).
    /// - Parameters:
    ///   - request: The request about to be sent.
    ///   - context: Where the event goes.
    public func secured(_ request: HTTPRequest, context: ResilienceContext) throws -> HTTPRequest {
        do {
            var request = request
            request.url = try policy.secured(request.url)
            return request
        } catch {
            Self.report(error, context: context)
            throw error
        }
    }

    /// Emits ``ResilienceEventKind/insecureTransportBlocked`` for `failure`, its URL without query or userinfo.
    static func report(_ failure: TransportError, context: ResilienceContext) {
        let redacted = failure.url.map(Self.redacted) ?? "(url)"
        context.emit(.insecureTransportBlocked) { $0.detail = redacted }
    }

    static func redacted(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "(url)" }
        components.query = nil
        components.user = nil
        components.password = nil
        return components.string ?? "(url)"
    }
}
