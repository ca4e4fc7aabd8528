/// Settings of a ``URLSessionTransport``: its limits and how it treats redirects.
public struct URLSessionTransportConfiguration: Sendable, Hashable {
    /// The largest body accepted, counted after decompression while streaming (default 10 MB). A larger body
    /// fails with ``TransportError/responseTooLarge(limit:url:)`` as soon as it crosses the limit.
    public var maximumResponseSize: Int = 10 * 1024 * 1024
    /// How many redirects one request may follow (default 10).
    public var maximumRedirects: Int = 10
    /// The attempt deadline used when the context has none (default 30 s).
    public var defaultAttemptTimeout: Duration = .seconds(30)
    /// URLSession's own idle timeout. Kept long on purpose: the transport enforces the real deadline with the
    /// injected clock, because FoundationNetworking treats `timeoutInterval` as an idle timeout and
    /// misfires below one second. Clamped to 1 s...10⁹ s (under 1 s FoundationNetworking times every request out
    /// at once; near `Int64.max` seconds it traps).
    public var idleTimeout: Duration = .seconds(120)
    /// Header fields removed when a redirect leaves the request's origin (scheme, host, port), named in any case:
    /// the request's own, and those set in the session's `httpAdditionalHeaders` (which
    /// ``URLSessionTransport/init(configuration:configureSession:)`` sends with each request instead).
    public var credentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization", "x-api-key"]
    /// Whether an `https` request may be redirected to plain `http` (never, by default). Under a ``SecureTransport``
    /// such a hop is first held to its ``SecureTransportPolicy`` (upgraded back to `https`, or refused).
    public var allowsRedirectDowngrade: Bool = false
    /// How many connections URLSession opens per host.
    public var maximumConnectionsPerHost: Int = 8

    /// The defaults.
    public init() {}

    /// 10 MB, 10 redirects, 30 s attempts.
    public static let standard = URLSessionTransportConfiguration()

    /// For screens a person waits on: 10 s attempts, 5 redirects.
    public static let interactive: URLSessionTransportConfiguration = {
        var configuration = URLSessionTransportConfiguration()
        configuration.defaultAttemptTimeout = .seconds(10)
        configuration.maximumRedirects = 5
        return configuration
    }()

    /// For background refreshes: 60 s attempts, 50 MB bodies.
    public static let background: URLSessionTransportConfiguration = {
        var configuration = URLSessionTransportConfiguration()
        configuration.defaultAttemptTimeout = .seconds(60)
        configuration.maximumResponseSize = 50 * 1024 * 1024
        return configuration
    }()
}
