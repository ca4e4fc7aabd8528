/// A credential to attach to requests: one header field, and when it expires on the injected clock.
public struct Credential: Sendable, Hashable, CustomStringConvertible {
    /// The header it goes in (`Authorization` by default).
    public var headerName: String
    /// The header value (`Bearer …`). Never logged: ``description`` redacts it.
    public var headerValue: String
    /// When it expires, on the transport's ``ResilienceClock``, if known.
    public var expiresAt: ResilienceInstant?

    /// Creates a credential.
    ///
    /// - Parameters:
    ///   - headerName: The header it goes in (`Authorization` by default).
    ///   - headerValue: The header value (`Bearer …`). Never logged: ``description`` redacts it.
    ///   - expiresAt: When it expires, on the transport's ``ResilienceClock``, if known.
    public init(headerName: String = "Authorization", headerValue: String, expiresAt: ResilienceInstant? = nil) {
        self.headerName = headerName
        self.headerValue = headerValue
        self.expiresAt = expiresAt
    }

    /// A bearer token in `Authorization`.
    public static func bearer(_ token: String, expiresAt: ResilienceInstant? = nil) -> Credential {
        Credential(headerValue: "Bearer \(token)", expiresAt: expiresAt)
    }

    /// Whether it expires within `skew` of `now`.
    public func expires(within skew: Duration, of now: ResilienceInstant) -> Bool {
        guard let expiresAt else { return false }
        return now.advanced(by: skew) >= expiresAt
    }

    /// `Authorization: <redacted>`.
    public var description: String { "\(headerName): <redacted>" }
}

extension Credential {
    /// The header fields the ``AuthenticatingTransport``s the current task is sending through attached their
    /// credentials in (each ``headerName``, whatever it is); empty outside any.
    ///
    /// An ``AuthenticatingTransport`` sets it while its wrapped transport sends, so a transport that follows
    /// redirects itself strips those fields once a chain leaves the request's origin, as it strips its own
    /// credential headers: ``RedirectPolicy`` reads it when it is created (its `attachedCredentialHeaders`
    /// parameter's default).
    public static var headersInEffect: Set<String> { attachedHeaders }

    /// The storage of ``headersInEffect``: bound by ``AuthenticatingTransport/send(_:context:)`` around its
    /// wrapped transport.
    @TaskLocal static var attachedHeaders: Set<String> = []
}
