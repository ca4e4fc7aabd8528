import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import ResilienceCore
import ResilienceTransport

/// An `HTTPTransport` on swift-server's AsyncHTTPClient: SwiftNIO's event loops, a connection pool, and
/// true backpressure on the response body. For servers on Linux, where `URLSessionTransport` has
/// FoundationNetworking's quirks (no backpressure, resends without the body, shared delegate queues).
///
/// It keeps the `HTTPTransport` contract exactly like `URLSessionTransport`, with the same stable codes:
/// - every response that arrived is returned, whatever its status; otherwise it throws a `TransportError`
///   (or `CancellationError`);
/// - the attempt deadline (`context.deadline`, else ``AsyncHTTPClientTransportConfiguration/defaultAttemptTimeout``)
///   is enforced on the context's injected clock for the whole exchange, body included;
/// - the body is streamed with backpressure and capped as it is read (after bounded decompression): at the
///   cap the transport stops reading, the request is cancelled and `responseTooLarge` (`NET_011`) is thrown;
/// - it follows redirects itself: loops, too many hops and https→http fail with a classified error,
///   `Authorization`, `Cookie` and the other ``AsyncHTTPClientTransportConfiguration/credentialHeaders`` never
///   cross to another origin, and under a `SecureTransport` every hop is held to its `SecureTransportPolicy` like
///   the first request (a plaintext hop to a host it does not allow is upgraded to `https` or refused);
/// - a `SecureTransport` wraps ``send(_:context:)`` only: ``AsyncHTTPClientTransportConfiguration/plaintextPolicy``
///   holds every request of the transport, ``stream(_:context:)`` included, and its redirect hops to a policy;
/// - every AsyncHTTPClient and SwiftNIO error is classified (``AsyncHTTPClientErrorClassifier``);
/// - it never resends a request by itself: a reset keep-alive connection fails the attempt, and the retry
///   stage decides.
///
/// It sends with `HTTPClient.shared` unless given a client. The shared client follows redirects itself by
/// AsyncHTTPClient's rules (at most 20, no cycles, `Cookie`, `Authorization` and `Proxy-Authorization` dropped
/// across origins); for the transport's own rules (``AsyncHTTPClientTransportConfiguration/maximumRedirects``,
/// no https→http downgrade, every ``AsyncHTTPClientTransportConfiguration/credentialHeaders`` field stripped),
/// give it a client created with ``clientConfiguration(for:)``, or let it create one with
/// ``init(configuration:eventLoopGroup:)`` and call ``shutdown()`` when done (there is no shutdown in `deinit`:
/// a transport that owns its client must be shut down explicitly, as an `HTTPClient` must).
///
/// ```swift
/// let transport = AsyncHTTPClientTransport()            // HTTPClient.shared; nothing to shut down
/// let response = try await transport.send(HTTPRequest(url: url), context: ResilienceContext(key: "jobs"))
///
/// let owned = AsyncHTTPClientTransport(configuration: .standard, eventLoopGroup: HTTPClient.defaultEventLoopGroup)
/// defer { Task { try await owned.shutdown() } }        // or call it from your service's shutdown
/// ```
public final class AsyncHTTPClientTransport: HTTPTransport {
    /// The limits it enforces.
    public let configuration: AsyncHTTPClientTransportConfiguration
    /// The client it sends with.
    public let client: HTTPClient
    private let ownsClient: Bool

    /// Creates the transport on `client` (`HTTPClient.shared` by default), which it never shuts down.
    ///
    /// For the transport's redirect rules and a decompression limit equal to the byte cap, create the client
    /// with ``clientConfiguration(for:)`` (or at least `redirectConfiguration: .disallow`): a client that follows
    /// redirects itself applies its own rules instead. The byte cap is enforced on the decompressed body either
    /// way.
    /// - Parameters:
    ///   - client: The client to send with (`HTTPClient.shared` unless given); the transport never shuts it down.
    ///   - configuration: The limits the transport enforces.
    public init(client: HTTPClient = .shared, configuration: AsyncHTTPClientTransportConfiguration = .standard) {
        self.configuration = configuration
        self.client = client
        self.ownsClient = false
    }

    /// Creates the transport and an `HTTPClient` of its own (configured by ``clientConfiguration(for:)``) on
    /// `eventLoopGroup`. Call ``shutdown()`` before the transport is released.
    /// - Parameters:
    ///   - configuration: The limits and pool settings.
    ///   - eventLoopGroup: The event loops the client runs on (`HTTPClient.defaultEventLoopGroup` is the
    ///     process-wide singleton).
    public init(configuration: AsyncHTTPClientTransportConfiguration, eventLoopGroup: any EventLoopGroup) {
        self.configuration = configuration
        self.client = HTTPClient(
            eventLoopGroup: eventLoopGroup, configuration: Self.clientConfiguration(for: configuration))
        self.ownsClient = true
    }

    /// Shuts down the client the transport created (does nothing for a client passed in, such as
    /// `HTTPClient.shared`). Idempotent.
    ///
    /// It does not wait for requests still running: AsyncHTTPClient cancels them, and each fails with a
    /// `TransportError` that says the client was shut down (`UNK_001`, not transient; it may have been sent), not
    /// with `CancellationError`, since its caller did not cancel it. Stop sending first (in a `ServiceGroup`, list
    /// the transport before the services that send through it).
    public func shutdown() async throws {
        guard ownsClient else { return }
        do {
            try await client.shutdown()
        } catch let error as HTTPClientError where error == .alreadyShutdown {
            return
        }
    }

    /// The `HTTPClient` settings the transport relies on: redirects disallowed (it follows them itself),
    /// decompression bounded by the byte cap, the connect timeout, the pool size, no silent connection
    /// retries unless configured, and the client's own tracing off (`tracing.tracer = nil`).
    ///
    /// AsyncHTTPClient otherwise captures `InstrumentationSystem.tracer` when the configuration is created and
    /// opens a client span of its own per request, injecting that span's context; under `TracingTransport`
    /// (ResilienceTracing), which opens the per-attempt client span and injects it, every attempt would then
    /// have two client spans and the server would see the inner one. Wrap the transport in `TracingTransport`
    /// for traces; a client of your own (including `HTTPClient.shared`) traces by its own configuration.
    /// - Parameter configuration: The transport's settings.
    public static func clientConfiguration(
        for configuration: AsyncHTTPClientTransportConfiguration
    ) -> HTTPClient.Configuration {
        var client = HTTPClient.Configuration()
        client.redirectConfiguration = .disallow
        client.timeout = HTTPClient.Configuration.Timeout(connect: TimeAmount(clamping: configuration.connectTimeout))
        client.decompression =
            configuration.decompressesResponses
            ? .enabled(limit: .size(max(0, configuration.maximumResponseSize))) : .disabled
        var pool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: TimeAmount(clamping: configuration.idleConnectionTimeout),
            concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, configuration.maximumConnectionsPerHost))
        pool.retryConnectionEstablishment = configuration.retriesConnectionEstablishment
        client.connectionPool = pool
        // No spans or trace headers from the client itself: `TracingTransport` (ResilienceTracing) opens one
        // client span per attempt and injects its context; the client's own span would be a second one.
        client.tracing.tracer = nil
        return client
    }

    /// Sends `request`, racing the whole exchange (redirects and body included) against the attempt deadline
    /// on `context.clock`. The request and every redirect hop are held to
    /// ``AsyncHTTPClientTransportConfiguration/plaintextPolicy`` when it is set, and to the policies of the
    /// `SecureTransport`s the call is sent through.
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        try await securing(request, context: context) { request, policies in
            try await TransportExchange.run(
                request, context: context, defaultTimeout: configuration.defaultAttemptTimeout
            ) { limit in
                try await self.exchange(request, within: limit, secureTransport: policies)
            }
        }
    }

    /// Runs `operation` with `request` after ``AsyncHTTPClientTransportConfiguration/plaintextPolicy`` (through
    /// `SecureTransport.enforcing(_:context:_:)`, the one place a policy is applied to a request) and the plaintext
    /// policies its redirect hops are held to, read here, where the task-local `SecureTransportPolicy.inEffect` is
    /// visible, and passed on explicitly.
    func securing<Result>(
        _ request: HTTPRequest, context: ResilienceContext,
        _ operation: (HTTPRequest, [SecureTransportPolicy]) async throws -> Result
    ) async throws -> Result {
        guard let policy = configuration.plaintextPolicy else {
            return try await operation(request, SecureTransportPolicy.inEffect)
        }
        return try await SecureTransport(wrapping: self, policy: policy).enforcing(request, context: context) {
            try await operation($0, SecureTransportPolicy.inEffect)
        }
    }

    // MARK: The exchange

    /// Sends `request`, following redirects under ``RedirectPolicy``, and reads the final body under the cap.
    private func exchange(
        _ request: HTTPRequest, within limit: Duration, secureTransport: [SecureTransportPolicy]
    ) async throws -> HTTPResponse {
        // AsyncHTTPClient's own deadline (real time) backs up the injected clock's; it covers the response head.
        let (response, final) = try await head(
            of: request, upload: nil, deadline: NIODeadline.now() + TimeAmount(clamping: limit),
            secureTransport: secureTransport)
        return try await collect(response, to: final)
    }

    /// Sends `request` (with `upload` as its body when given) and returns the head of the final response and the
    /// request it answers, following redirects under ``RedirectPolicy`` unless the body is a stream, which cannot
    /// be sent twice. Each hop is held to `secureTransport`, the plaintext policies outermost first.
    func head(
        of request: HTTPRequest, upload: HTTPClientRequest.Body?, deadline: NIODeadline,
        secureTransport: [SecureTransportPolicy]
    ) async throws -> (HTTPClientResponse, HTTPRequest) {
        var rules = RedirectPolicy(
            originalURL: request.url, method: request.method, maximumRedirects: configuration.maximumRedirects,
            allowsDowngrade: configuration.allowsRedirectDowngrade, secureTransport: secureTransport)
        var current = request
        var streamedBody = upload
        while true {
            let response: HTTPClientResponse
            do {
                response = try await execute(current, upload: streamedBody, deadline: deadline)
            } catch var failure as TransportError where rules.redirects > 0 {
                // A hop fails after the server answered the request with the redirect (a POST's 303 among them,
                // whose POST the server has already applied): a hop that never connected does not make it unsent.
                failure.classification.requestWasNotSent = false
                throw failure
            }
            guard streamedBody == nil, let target = Self.redirectTarget(of: response, from: current.url) else {
                return (response, current)
            }
            // The redirect's body is not read: dropping it hands a connection whose response has ended back to the
            // pool and cancels one still sending, so a body that stalls after the head cannot hold the hop.
            let status = Int(response.status.code)
            let method = RedirectPolicy.nextMethod(after: current.method, status: status)
            switch rules.evaluate(from: current.url, to: target, method: method) {
            case .refuse(let failure):
                throw failure
            case .follow(let next, let stripCredentials):
                current = RedirectPolicy.nextRequest(
                    after: current, status: status, target: next,
                    stripCredentials: stripCredentials,
                    credentialHeaders: configuration.credentialHeaders.union(rules.attachedCredentialHeaders))
                streamedBody = nil
            }
        }
    }

    private func execute(
        _ request: HTTPRequest, upload: HTTPClientRequest.Body?, deadline: NIODeadline
    ) async throws -> HTTPClientResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue)
        for field in request.headers { outgoing.headers.add(name: field.name, value: field.value) }
        if let upload {
            outgoing.body = upload
        } else if let body = request.body {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
        }
        do {
            return try await client.execute(outgoing, deadline: deadline)
        } catch {
            throw Self.translate(error, url: request.url, progress: nil)
        }
    }

    /// Reads the body chunk by chunk (AsyncHTTPClient asks the socket for more only as chunks are consumed),
    /// failing as soon as the count crosses the cap; leaving the loop cancels the request.
    private func collect(_ response: HTTPClientResponse, to request: HTTPRequest) async throws -> HTTPResponse {
        let cap = configuration.maximumResponseSize
        let url = request.url
        let declared = Self.declaredBodyLength(of: response, to: request)
        if let declared, declared > cap { throw TransportError.responseTooLarge(limit: cap, url: url) }
        var body = Data()
        // The declared length is the upstream's word: room for more than a bounded share of it is made as bytes
        // arrive, so a `Content-Length` far past memory under a huge cap does not allocate (or fail to) up front.
        if let declared { body.reserveCapacity(max(0, min(declared, Self.largestReservation))) }
        do {
            for try await chunk in response.body {
                guard body.count + chunk.readableBytes <= cap else {
                    throw TransportError.responseTooLarge(limit: cap, url: url)
                }
                chunk.withUnsafeReadableBytes { body.append(contentsOf: $0) }
            }
        } catch let failure as TransportError {
            throw failure
        } catch {
            let progress = Progress(received: body.count, declared: declared)
            throw Self.translate(error, url: url, progress: progress)
        }
        if let declared, body.count < declared {
            throw TransportError.truncated(received: body.count, expected: declared, url: url)
        }
        var headers = ResilienceCore.HTTPHeaders()
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        return HTTPResponse(status: Int(response.status.code), headers: headers, body: body, url: url)
    }

    /// The most bytes `send` reserves for a body before they arrive (1 MiB), whatever its `Content-Length` says.
    static let largestReservation = 1024 * 1024

    /// The body length the response's `Content-Length` promises, or nil when it promises none the transport can
    /// count: an encoded body (counted after decompression), or a response that has no body whatever its
    /// `Content-Length` says (to `HEAD`, a 1xx, 204 or 304: `TransportExchange.responseHasBody(status:method:)`).
    static func declaredBodyLength(of response: HTTPClientResponse, to request: HTTPRequest) -> Int? {
        let encoding = response.headers.first(name: "content-encoding")?.lowercased() ?? ""
        guard encoding.isEmpty || encoding == "identity",
            TransportExchange.responseHasBody(status: Int(response.status.code), method: request.method)
        else { return nil }
        return response.headers.first(name: "content-length").flatMap { Int($0) }
    }

    /// The absolute target of a 301, 302, 303, 307 or 308 with a `Location`, or nil.
    static func redirectTarget(of response: HTTPClientResponse, from url: URL) -> URL? {
        guard [301, 302, 303, 307, 308].contains(response.status.code),
            let location = response.headers.first(name: "location"), !location.isEmpty
        else { return nil }
        return URL(string: location, relativeTo: url)?.absoluteURL
    }

    // MARK: Errors

    /// How much of a body had arrived when a read failed.
    struct Progress {
        var received: Int
        var declared: Int?
    }

    /// An AsyncHTTPClient/NIO error → `CancellationError` or a `TransportError` with the stable code (an error
    /// the caller's upload sequence threw is returned as it is), using what the transport saw: a connection that closes before any response byte is an empty reply, one that
    /// closes before the declared length is a truncated body.
    static func translate(_ error: any Error, url: URL, progress: Progress?) -> any Error {
        if let upload = error as? UploadFailure { return upload.underlying }
        if CancellationDetection.isCancellation(error) { return CancellationError() }
        if let clientError = error as? HTTPClientError,
            clientError == .cancelled || clientError == .requestStreamCancelled
        {
            // AsyncHTTPClient cancels a request for its task's cancellation (the caller's, or the deadline race's)
            // and also when the client shuts down under it; only the first is the caller's cancellation.
            if Task.isCancelled { return CancellationError() }
            return TransportError(AsyncHTTPClientErrorClassifier.shutDownUnderRequest, url: url)
        }
        if let clientError = error as? HTTPClientError, clientError == .unsupportedScheme(url.scheme ?? "") {
            return TransportError(
                FailureClassification(
                    category: .clientError, code: .invalidFormat, isTransient: false,
                    message: "the scheme \(url.scheme ?? "") is not supported", requestWasNotSent: true),
                url: url)
        }
        let classification = AsyncHTTPClientErrorClassifier().classify(error)
        if let progress {
            let connectionEnded =
                classification.map {
                    $0.code == .connectionReset || $0.code == .truncatedResponse
                } ?? false
            if connectionEnded, let declared = progress.declared, progress.received < declared {
                return TransportError.truncated(received: progress.received, expected: declared, url: url)
            }
        } else if let clientError = error as? HTTPClientError, clientError == .remoteConnectionClosed {
            return TransportError(
                FailureClassification(
                    category: .transient, code: .emptyReply,
                    message: "the server closed the connection without a response"),
                url: url)
        }
        return TransportError(
            classification
                ?? FailureClassification(
                    category: .unknown, code: .unknown, isTransient: false, logLevel: .error, message: "\(error)"),
            url: url)
    }
}

extension TimeAmount {
    /// The whole nanoseconds of `duration`, saturating at `Int64.max` (or, for a negative one, `Int64.min`)
    /// nanoseconds: a limit or timeout past about 292 years never wraps around to a time on the other side of zero.
    init(clamping duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (total, carried) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        self = .nanoseconds(overflow || carried ? (duration < .zero ? .min : .max) : total)
    }
}
