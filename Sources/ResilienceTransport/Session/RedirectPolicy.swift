import Foundation

/// The redirect rules of one request, as a value: hop limit, loop detection (a loop is the same method sent to the
/// same URL again, so a POST answered with a 303 to its own URL is followed as a GET there: post/redirect/get), only
/// `http`/`https` targets with a host, the plaintext rule of every ``SecureTransportPolicy`` in effect (a plaintext
/// hop is upgraded or refused exactly as a first request would be), no https→http downgrade, and credential
/// stripping once the chain has left the original origin (scheme, host and port): the credential headers, and the
/// `user:password@` of the target's URL (which URLSession would send as Basic credentials; a scheme-relative
/// `Location` such as `//cdn.example.net/x` can carry the request's own along). Every transport that follows
/// redirects (URLSession's delegate, the AsyncHTTPClient transport in `Integrations/`) decides each hop with it, so
/// they refuse, upgrade and strip alike.
public struct RedirectPolicy: Sendable {
    /// What to do with one hop.
    public enum Verdict: Equatable, Sendable {
        /// Request `target` (the `Location`, or its `https` form when a ``SecureTransportPolicy`` upgraded it, without
        /// `user:password@` once the chain has left the first origin); drop credential headers when
        /// `stripCredentials` (the chain has left the first origin).
        case follow(to: URL, stripCredentials: Bool)
        /// Stop with this error.
        case refuse(TransportError)
    }

    /// The URL the chain started from: its origin decides what counts as cross-origin.
    public let originalURL: URL
    /// The most hops followed; one more is refused.
    public let maximumRedirects: Int
    /// Whether an https→http hop is allowed.
    public let allowsDowngrade: Bool
    /// The plaintext policies every hop's target is held to, outermost first (``SecureTransportPolicy/secured(_:)``).
    public let secureTransport: [SecureTransportPolicy]
    /// The header fields an ``AuthenticatingTransport`` attached a credential in (``Credential/headersInEffect``):
    /// a transport passes them to ``nextRequest(after:status:target:stripCredentials:credentialHeaders:)`` with its
    /// own credential headers, so a credential in a header of any name stays with its origin.
    public let attachedCredentialHeaders: Set<String>
    /// The hops evaluated so far.
    public private(set) var redirects = 0
    private var visited: Set<String>
    /// Whether any hop so far left the original origin (credentials stay stripped from then on).
    public private(set) var leftOrigin = false

    /// Creates the rules for one request.
    /// - Parameters:
    ///   - originalURL: The request's URL.
    ///   - method: The request's method. Default: `.get`.
    ///   - maximumRedirects: The most hops to follow.
    ///   - allowsDowngrade: Whether a hop from https to http may be followed (when the plaintext policies let
    ///     it through as plaintext).
    ///   - secureTransport: The plaintext policies every hop is held to, outermost first. Default: those of the
    ///     ``SecureTransport``s the current task is sending through (``SecureTransportPolicy/inEffect``), so a
    ///     transport that creates its rules while it sends needs nothing else.
    ///   - attachedCredentialHeaders: The header fields that carry an ``AuthenticatingTransport``'s credential.
    ///     Default: those of the authenticating transports the current task is sending through
    ///     (``Credential/headersInEffect``).
    public init(
        originalURL: URL, method: HTTPMethod = .get, maximumRedirects: Int, allowsDowngrade: Bool,
        secureTransport: [SecureTransportPolicy] = SecureTransportPolicy.inEffect,
        attachedCredentialHeaders: Set<String> = Credential.headersInEffect
    ) {
        self.originalURL = originalURL
        self.maximumRedirects = maximumRedirects
        self.allowsDowngrade = allowsDowngrade
        self.secureTransport = secureTransport
        self.attachedCredentialHeaders = attachedCredentialHeaders
        self.visited = [Self.visit(method, originalURL)]
    }

    /// Decides the hop from `source` to `target`, which will be requested with `method` (the method
    /// ``nextMethod(after:status:)`` gives). The target is first held to ``secureTransport`` (a plaintext target
    /// may come back upgraded to `https`); the other rules judge the URL that will be requested. Sending the same
    /// method to a URL already requested is a loop.
    ///
    /// A refusal comes after the server answered the request with the redirect, so its error is never marked
    /// ``FailureClassification/requestWasNotSent``, whichever rule refused (a plaintext hop the
    /// ``SecureTransportPolicy`` blocks, `NET_010`, included): a retry stage sends the request again only when it
    /// is safe to repeat.
    /// - Parameters:
    ///   - source: The URL that answered with the redirect.
    ///   - target: The resolved `Location`.
    ///   - method: The method the hop will be sent with. Default: `.get`.
    /// - Returns: ``Verdict/follow(to:stripCredentials:)`` with the URL to request, or ``Verdict/refuse(_:)``.
    public mutating func evaluate(from source: URL, to target: URL, method: HTTPMethod = .get) -> Verdict {
        switch judge(from: source, to: target, method: method) {
        case .refuse(var failure):
            failure.classification.requestWasNotSent = false
            return .refuse(failure)
        case let verdict:
            return verdict
        }
    }

    /// The rules of ``evaluate(from:to:method:)``, before its refusals are marked as coming after a sent request.
    private mutating func judge(from source: URL, to target: URL, method: HTTPMethod) -> Verdict {
        redirects += 1
        if redirects > maximumRedirects { return .refuse(.tooManyRedirects(limit: maximumRedirects, url: target)) }
        let targetScheme = target.scheme?.lowercased()
        guard targetScheme == "http" || targetScheme == "https" else {
            return .refuse(
                TransportError(
                    FailureClassification(
                        category: .invalidResponse, code: .invalidResponse, isTransient: false,
                        message: "refused a redirect to the unsupported scheme \(targetScheme ?? "none")"),
                    url: target))
        }
        guard let host = target.host, !host.isEmpty else {
            return .refuse(
                TransportError(
                    FailureClassification(
                        category: .invalidResponse, code: .invalidResponse, isTransient: false,
                        message: "refused a redirect to a URL without a host"),
                    url: target))
        }
        var next: URL
        do {
            next = try SecureTransportPolicy.secured(target, by: secureTransport)
        } catch {
            return .refuse(error)
        }
        let leavesOrigin = leftOrigin || !Self.sameOrigin(originalURL, next)
        if leavesOrigin, next.user != nil || next.password != nil {
            guard let bare = Self.withoutUserInfo(next) else {
                return .refuse(
                    TransportError(
                        FailureClassification(
                            category: .invalidResponse, code: .invalidResponse, isTransient: false,
                            message: "refused a redirect whose credentials could not be removed from its URL"),
                        url: nil))
            }
            next = bare
        }
        if !visited.insert(Self.visit(method, next)).inserted { return .refuse(.redirectLoop(url: next)) }
        if source.scheme?.lowercased() == "https", next.scheme?.lowercased() == "http", !allowsDowngrade {
            return .refuse(.insecureTransport(url: next, reason: "refused a redirect from https to http"))
        }
        leftOrigin = leavesOrigin
        return .follow(to: next, stripCredentials: leftOrigin)
    }

    /// Same scheme, host and (effective) port.
    public static func sameOrigin(_ lhs: URL, _ rhs: URL) -> Bool {
        func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }
        return lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
            && lhs.host?.lowercased() == rhs.host?.lowercased() && port(lhs) == port(rhs)
    }

    /// The request for the next hop, for transports that follow redirects themselves: 303 (and 301/302 after a
    /// POST) become a GET without a body and without the fields that describe it (`Content-Type`,
    /// `Content-Length`, `Content-Encoding`, `Content-Language`, `Content-Location`, `Content-Digest`, `Digest`,
    /// `Last-Modified`, `Transfer-Encoding`), as RFC 9110 §15.4 allows; 307 and 308 keep the method, the body and
    /// those fields.
    /// - Parameters:
    ///   - request: The request that was answered with a redirect.
    ///   - status: The redirect's status code.
    ///   - target: The URL to request (from ``Verdict/follow(to:stripCredentials:)``).
    ///   - stripCredentials: Whether to drop the credential headers (from ``Verdict/follow(to:stripCredentials:)``).
    ///   - credentialHeaders: The names of the headers that carry credentials, matched without regard to case.
    public static func nextRequest(
        after request: HTTPRequest, status: Int, target: URL, stripCredentials: Bool, credentialHeaders: Set<String>
    ) -> HTTPRequest {
        var next = request
        next.url = target
        next.method = nextMethod(after: request.method, status: status)
        if status == 303 ? request.method != .head : next.method != request.method {
            next.body = nil
            for name in Self.contentFields { next.headers.remove(name) }
        }
        if stripCredentials {
            for field in request.headers where isCredentialHeader(field.name, in: credentialHeaders) {
                next.headers.remove(field.name)
            }
        }
        next.headers.remove("host")
        return next
    }

    /// The method a redirect's next hop is sent with: 303 turns any method but `HEAD` into `GET`, and 301 and 302
    /// turn a `POST` into a `GET` (RFC 9110 §15.4); every other hop keeps the method.
    /// - Parameters:
    ///   - method: The method of the request that was answered with a redirect.
    ///   - status: The redirect's status code.
    public static func nextMethod(after method: HTTPMethod, status: Int) -> HTTPMethod {
        let becomesGet = status == 303 ? method != .head : (status == 301 || status == 302) && method == .post
        return becomesGet ? .get : method
    }

    /// `url` without its `user:password@`, or nil when it cannot be rebuilt.
    private static func withoutUserInfo(_ url: URL) -> URL? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.user = nil
        components.password = nil
        return components.url
    }

    /// A request already sent in this chain: its method and URL.
    private static func visit(_ method: HTTPMethod, _ url: URL) -> String { "\(method.rawValue) \(url.absoluteString)" }

    /// Whether `name` is one of `credentialHeaders`, compared without regard to case (a configured
    /// `X-Session-Token` matches a sent `x-session-token`, and the other way round).
    static func isCredentialHeader(_ name: String, in credentialHeaders: Set<String>) -> Bool {
        let name = name.lowercased()
        return credentialHeaders.contains { $0.lowercased() == name }
    }

    /// The fields that describe a request's content, dropped with the body when a redirect turns the request into a
    /// GET: RFC 9110 §15.4's `Content-Encoding`, `Content-Language`, `Content-Location`, `Content-Type`,
    /// `Content-Length`, `Digest` and `Last-Modified`, with `Content-Digest` (RFC 9530) and `Transfer-Encoding`.
    static let contentFields = [
        "content-encoding", "content-language", "content-location", "content-type", "content-length", "digest",
        "content-digest", "last-modified", "transfer-encoding",
    ]
}
