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
