import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ``HTTPTransport`` on one long-lived `URLSession` (Apple platforms and Linux's FoundationNetworking).
///
/// It returns every response that arrived, whatever its status, and throws a ``TransportError`` (or
/// `CancellationError`) when none did. It works around the platform quirks itself:
/// - the attempt deadline (`context.deadline`, else ``URLSessionTransportConfiguration/defaultAttemptTimeout``)
///   is enforced with the context's injected clock, so a slow drip cannot outlive it;
/// - the body is capped while it streams (after decompression), so a gzip bomb or a huge body fails fast
///   with bounded memory: on Linux the delegate runs on FoundationNetworking's own queue
///   (`InlineDelegateQueue`), so no chunk waits in a backlog past the cap (peak growth ≈ cap + 17 MB,
///   measured in `Docs/Transport.md`);
/// - redirects that leave the origin lose `Authorization`, `Cookie` and other credentials; loops, too many
///   hops and https→http downgrades fail with a classified error; under a ``SecureTransport`` every hop is held to
///   its ``SecureTransportPolicy`` like the first request (upgraded to `https` or refused), by ``RedirectPolicy``,
///   which also builds each hop's request (a 307 or 308 resends the body, which FoundationNetworking would drop);
/// - platform errors are classified by ResilienceKit's own table (``URLErrorClassifier``), including Linux's
///   `URLError.unknown` cases;
/// - cancelling the calling task cancels the request at once;
/// - the quota a server advertises on any response (`RateLimit`, `X-RateLimit-*`) is reported to the
///   context's ``ResilienceContext/quotaObserver`` (a quota-pacing limiter stage).
///
/// ```swift
/// let transport = URLSessionTransport()
/// let response = try await transport.send(HTTPRequest(url: url), context: ResilienceContext(key: "jobs"))
/// ```
public final class URLSessionTransport: HTTPTransport {
    /// The limits it enforces.
    public let configuration: URLSessionTransportConfiguration
    private let session: URLSession
    private let delegate: SessionDelegate
    /// The credential fields `configureSession` set in the session's additional headers, sent with each request
    /// (``withSessionCredentials(_:)``) so that ``RedirectPolicy`` strips them across origins.
    private let sessionCredentials: HTTPHeaders

    /// Creates the transport and its session. `configureSession` may adjust the ephemeral session
    /// configuration (cookies, proxies, extra headers) before the session is created.
    ///
    /// A credential field set in the session's `httpAdditionalHeaders` (one of
    /// ``URLSessionTransportConfiguration/credentialHeaders``, such as `Authorization`, `Cookie` or
    /// `Proxy-Authorization`, named in any case) is taken out of the session and sent as a field of each request
    /// that has no field of that name, so a redirect that leaves the origin drops it as it drops the request's own:
    /// URLSession (FoundationNetworking on every request, redirect hops included) would add the session's fields to
    /// the hop to the other origin. The other additional headers stay with the session.
    ///
    /// - Parameters:
    ///   - configuration: Response size, redirect and connection limits, timeouts and which headers are
    ///     credentials. Default: `.standard`.
    ///   - configureSession: Adjusts the ephemeral session configuration (cookies, proxies, extra headers) before the
    ///     session is created; its credential fields in `httpAdditionalHeaders` are sent with each request instead,
    ///     within the request's origin only. Default: no change.
    public init(
        configuration: URLSessionTransportConfiguration = .standard,
        configureSession: (URLSessionConfiguration) -> Void = { _ in }
    ) {
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.urlCache = nil
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
        sessionConfiguration.timeoutIntervalForRequest = Self.idleTimeoutInterval(configuration.idleTimeout)
        configureSession(sessionConfiguration)
        let separated = Self.separateCredentials(
            of: sessionConfiguration.httpAdditionalHeaders, credentialHeaders: configuration.credentialHeaders)
        sessionConfiguration.httpAdditionalHeaders = separated.session
        sessionCredentials = separated.credentials
        let delegate = SessionDelegate(configuration: configuration)
        self.delegate = delegate
        #if canImport(FoundationNetworking)
        let queue: OperationQueue = InlineDelegateQueue()
        #else
        let queue = OperationQueue()
        #endif
        queue.maxConcurrentOperationCount = 1
        self.session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: queue)
    }

    deinit { session.invalidateAndCancel() }

    /// Sends `request`, racing it against the attempt deadline on `context.clock`; redirect hops are held to the
    /// plaintext policies in effect (``SecureTransportPolicy/inEffect``).
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        let secureTransport = SecureTransportPolicy.inEffect
        let request = withSessionCredentials(request)
        return try await TransportExchange.run(
            request, context: context, defaultTimeout: configuration.defaultAttemptTimeout
        ) { _ in try await self.perform(request, secureTransport: secureTransport) }
    }

    /// Sends `request` and follows its redirects: URLSession follows each hop the delegate lets through, and the
    /// transport sends itself a hop whose request keeps a body (a 307 or 308), which FoundationNetworking would
    /// send without it.
    private func perform(
        _ request: HTTPRequest, secureTransport: [SecureTransportPolicy]
    ) async throws -> HTTPResponse {
        var redirects = RedirectPolicy(
            originalURL: request.url, method: request.method, maximumRedirects: configuration.maximumRedirects,
            allowsDowngrade: configuration.allowsRedirectDowngrade, secureTransport: secureTransport)
        var current = request
        while true {
            switch try await performTask(current, redirects: redirects) {
            case .response(let response):
                return response
            case .redirect(let next, let rules):
                current = next
                redirects = rules
            }
        }
    }

    /// Sends `request` in one URLSession task, its hops decided by `redirects`.
    private func performTask(
        _ request: HTTPRequest, redirects: RedirectPolicy
    ) async throws -> SessionDelegate.Outcome {
        let task = session.dataTask(with: Self.urlRequest(for: request, configuration: configuration))
        let identifier = task.taskIdentifier
        let delegate = delegate
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.register(identifier, request: request, redirects: redirects, continuation: continuation)
                if Task.isCancelled {
                    delegate.abandon(identifier, with: CancellationError())
                    task.cancel()
                } else {
                    task.resume()
                }
            }
        } onCancel: {
            delegate.abandon(identifier, with: CancellationError())
            // Not `task.cancel()` here: a cancellation handler runs under the task's status lock, and
            // FoundationNetworking's cancel waits for the session's queue, where the delegate may be resuming
            // this very task (which needs that lock): the two threads would wait for each other for ever.
            DispatchQueue.global().async { task.cancel() }
        }
    }

    /// `request` with each of the session's credential fields it has no field of the same name for (its own field
    /// wins, as it would over the session's additional header).
    private func withSessionCredentials(_ request: HTTPRequest) -> HTTPRequest {
        var request = request
        for field in sessionCredentials where !request.headers.contains(field.name) {
            request.headers.add(name: field.name, value: field.value)
        }
        return request
    }

    /// Splits a session's additional headers into the credential fields (named in `credentialHeaders`, in any
    /// case), which the transport sends with each request so that redirects strip them across origins, and the
    /// rest, which stay with the session.
    /// - Parameters:
    ///   - headers: The session configuration's `httpAdditionalHeaders`.
    ///   - credentialHeaders: The names of the headers that carry credentials.
    /// - Returns: The headers left to the session (nil when none were given) and the credential fields.
    static func separateCredentials(
        of headers: [AnyHashable: Any]?, credentialHeaders: Set<String>
    ) -> (session: [AnyHashable: Any]?, credentials: HTTPHeaders) {
        guard let headers else { return (nil, HTTPHeaders()) }
        var remaining = headers
        var credentials = HTTPHeaders()
        for (key, value) in headers {
            guard let name = key.base as? String, RedirectPolicy.isCredentialHeader(name, in: credentialHeaders)
            else { continue }
            remaining.removeValue(forKey: key)
            credentials.add(name: name, value: value as? String ?? "\(value)")
        }
        return (remaining, credentials)
    }

    /// The `URLRequest` that sends `request` (a redirect hop's too, built by ``RedirectPolicy``).
    static func urlRequest(
        for request: HTTPRequest, configuration: URLSessionTransportConfiguration
    ) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.timeoutInterval = Self.idleTimeoutInterval(configuration.idleTimeout)
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        urlRequest.httpBody = request.body
        return urlRequest
    }

    /// `idleTimeout` in seconds, clamped to `1...1_000_000_000`: FoundationNetworking keeps whole seconds
    /// (under one is zero, and every request then times out at once) and traps converting a value near
    /// `Int.max / 1000` to milliseconds.
    static func idleTimeoutInterval(_ idleTimeout: Duration) -> TimeInterval {
        let parts = idleTimeout.components
        let seconds = TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
        return min(max(seconds, 1), 1_000_000_000)
    }
}
