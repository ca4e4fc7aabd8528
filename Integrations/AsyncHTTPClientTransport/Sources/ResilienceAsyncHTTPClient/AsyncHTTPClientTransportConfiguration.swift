import ResilienceTransport

/// Settings of an ``AsyncHTTPClientTransport``: its limits, its redirect rules and the connection pool of the
/// `HTTPClient` it creates.
///
/// The defaults match `URLSessionTransportConfiguration.standard`, so swapping transports keeps behaviour.
public struct AsyncHTTPClientTransportConfiguration: Sendable, Hashable {
    /// The most body bytes held in memory for one unit the caller receives, counted after decompression
    /// (default 10 MB); a unit over it fails with `TransportError.responseTooLarge` (`NET_011`) as soon as it
    /// crosses the limit.
    ///
    /// For ``AsyncHTTPClientTransport/send(_:context:)`` the unit is the whole body, which is buffered: a
    /// plain body whose `Content-Length` is already larger is refused on the response head, before any byte
    /// is read (not a response to `HEAD`, a 1xx, 204 or 304, which has no body whatever its `Content-Length`
    /// says). A streamed body (``AsyncHTTPClientTransport/stream(_:context:)``) is not bounded in total, since
    /// its reader keeps only what it has not consumed yet: its chunks are at most one socket read (inflated in
    /// 16 KB pieces), and ``ServerSentEvents`` bounds each event, data and unfinished line together, by this
    /// limit. AsyncHTTPClient's inflater counts a whole response against this limit, so a stream asks for its body
    /// unencoded (`Accept-Encoding: identity`, unless the request names encodings): a streamed body that arrives
    /// `gzip` or `deflate` encoded all the same still ends at this limit (see ``decompressesResponses``).
    public var maximumResponseSize: Int = 10 * 1024 * 1024
    /// How long a streamed body may go without a byte once its head has arrived (default 60 s; nil: no limit),
    /// raced on the context's clock for every chunk: a stream that stalls ends with the transient
    /// `TransportError.idleTimedOut(after:url:)` (`NET_002`) instead of hanging its reader. Any byte resets it,
    /// a server-sent event comment too, so a stream whose server sends keep-alives (commonly every 15 to 30 s)
    /// stays open however long it runs. 60 s is URLSession's default idle timeout (`timeoutIntervalForRequest`):
    /// twice the longest usual keep-alive interval. A buffered body needs none: the attempt deadline covers it.
    public var streamIdleTimeout: Duration? = .seconds(60)
    /// How many redirects one request may follow (default 10). The transport follows them itself.
    public var maximumRedirects: Int = 10
    /// The attempt deadline used when the context has none (default 30 s).
    public var defaultAttemptTimeout: Duration = .seconds(30)
    /// How long a TCP (and TLS) connection may take to establish (default 10 s); the attempt deadline still
    /// ends the attempt earlier when it is shorter.
    public var connectTimeout: Duration = .seconds(10)
    /// How long an idle pooled connection is kept (default 60 s).
    public var idleConnectionTimeout: Duration = .seconds(60)
    /// Header fields removed when a redirect leaves the request's origin (scheme, host, port), named in any case.
    public var credentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization", "x-api-key"]
    /// Whether an `https` request may be redirected to plain `http` (never, by default).
    public var allowsRedirectDowngrade: Bool = false
    /// The plaintext policy the transport enforces itself on every request, streamed ones included, and on every
    /// redirect hop (default nil: only the policies of the `SecureTransport`s a request is sent through).
    ///
    /// A `SecureTransport` wraps ``AsyncHTTPClientTransport/send(_:context:)`` alone, so a request made with
    /// ``AsyncHTTPClientTransport/stream(_:context:)`` is held to a plaintext policy only through this setting: an
    /// `http://` URL to a host the policy does not allow is upgraded to `https` or refused with
    /// `insecureTransport` (`NET_010`) before anything is sent, as `SecureTransport` does it
    /// (`SecureTransport.enforcing(_:context:_:)`), and so is every redirect hop. Under a `SecureTransport` both
    /// apply, its policy first.
    public var plaintextPolicy: SecureTransportPolicy?
    /// How many HTTP/1.1 connections the pool opens per host (default 8, a soft limit).
    public var maximumConnectionsPerHost: Int = 8
    /// Whether the pool keeps retrying a failed connection until ``connectTimeout`` (off by default: the
    /// resilience pipeline owns retries, budgets and backoff, and a refused connection should fail at once
    /// as `NET_007` so a breaker can see it).
    public var retriesConnectionEstablishment: Bool = false
    /// Whether `gzip`/`deflate` bodies are inflated (default true). Inflation is bounded: the decompressor
    /// stops at ``maximumResponseSize`` bytes for the whole response, a streamed one included, which is why
    /// ``AsyncHTTPClientTransport/stream(_:context:)`` asks for the body unencoded unless the request names
    /// encodings. For a long-lived stream you ask to be compressed, turn it off (and inflate the chunks yourself).
    public var decompressesResponses: Bool = true

    /// The defaults.
    public init() {}

    /// 10 MB, 10 redirects, 30 s attempts.
    public static let standard = AsyncHTTPClientTransportConfiguration()

    /// For requests a person waits on: 10 s attempts, 5 redirects, 5 s connects.
    public static let interactive: AsyncHTTPClientTransportConfiguration = {
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.defaultAttemptTimeout = .seconds(10)
        configuration.maximumRedirects = 5
        configuration.connectTimeout = .seconds(5)
        return configuration
    }()

    /// For background jobs: 60 s attempts, 50 MB bodies.
    public static let background: AsyncHTTPClientTransportConfiguration = {
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.defaultAttemptTimeout = .seconds(60)
        configuration.maximumResponseSize = 50 * 1024 * 1024
        return configuration
    }()
}
