import Foundation
import HTTPTypes
import OpenAPIRuntime
import ResilienceCore
import ResilienceTransport

/// A swift-openapi-runtime `ClientTransport` over any ResilienceKit `HTTPTransport` (`URLSessionTransport`,
/// ResilienceAsyncHTTPClient's `AsyncHTTPClientTransport`, or a decorated one), so a generated client gets that
/// transport's byte cap, deadline enforcement, redirect rules and classified errors.
///
/// Under a ``ResilienceMiddleware`` each attempt's context (its deadline, clock and telemetry) reaches the
/// transport; without one, a context keyed by the operation ID is used.
///
/// ```swift
/// import OpenAPIAsyncHTTPClient     // swift-openapi-async-http-client: an OpenAPI ClientTransport of that name
/// import ResilienceAsyncHTTPClient  // Integrations/AsyncHTTPClientTransport: the ResilienceKit HTTPTransport
/// import ResilienceKit
/// import ResilienceOpenAPI
///
/// let registry = PipelineRegistry { _ in Pipeline.preset(.standard) }  // one cached pipeline per key
/// let client = Client(                                                  // the generated client
///     serverURL: try Servers.Server1.url(),
///     // ResilienceAsyncHTTPClient's, the HTTPTransport this adapter takes; the module name tells the two apart
///     transport: ResilienceClientTransport(ResilienceAsyncHTTPClient.AsyncHTTPClientTransport()),
///     middlewares: [ResilienceMiddleware { registry.pipeline(for: $0) }])
/// ```
public struct ResilienceClientTransport: ClientTransport {
    /// The transport requests go through.
    public var transport: any HTTPTransport
    /// The largest request body it buffers (default 16 MiB); `HTTPTransport` sends bodies as `Data`. A larger
    /// body fails the call before anything is sent, with ``requestBodyTooLarge(limit:url:)``'s error. A body
    /// that ends before its declared length fails the same way, with ``requestBodyEndedEarly(read:declared:url:)``'s
    /// error, and one whose reading the call's cancellation cut short throws `CancellationError`: the transport
    /// is never handed part of a body as the whole.
    public var maximumRequestBody: Int
    /// The classifier for the context it builds when no middleware provides one.
    public var classifier: any ErrorClassifier

    /// Creates the adapter.
    /// - Parameters:
    ///   - transport: The ResilienceKit transport to send with.
    ///   - maximumRequestBody: The largest request body it buffers.
    ///   - classifier: The classifier of the context it builds when no ``ResilienceMiddleware`` runs.
    public init(
        _ transport: any HTTPTransport, maximumRequestBody: Int = 16 * 1024 * 1024,
        classifier: any ErrorClassifier = CompositeErrorClassifier.standard
    ) {
        self.transport = transport
        self.maximumRequestBody = maximumRequestBody
        self.classifier = classifier
    }

    /// Sends one request through the transport. The response carries the transport's body, empty or not, except
    /// the answer to a HEAD, a 204 and a 304, which have none. A response that is no final HTTP response, or whose
    /// head swift-http-types cannot hold (a status outside 200...599, more than 65,534 header fields), fails the
    /// send with ``invalidResponse(_:status:url:)``'s error.
    ///
    /// The request body is collected first, within the context's deadline when it has one (under a
    /// ``ResilienceMiddleware``, the attempt's, even from a cooperative timeout stage): a body that stalls fails
    /// the send at that deadline with ``TransportError/timedOut(after:url:)``'s timeout, marked not sent, and the
    /// transport is never called. Without a deadline only the call's cancellation ends such a read.
    public func send(
        _ request: HTTPTypes.HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?) {
        guard let url = Self.url(of: request, baseURL: baseURL) else {
            throw TransportError(
                FailureClassification(
                    category: .clientError, code: .invalidFormat, isTransient: false,
                    message: "invalid URL \(baseURL.absoluteString + (request.path ?? "/"))", requestWasNotSent: true))
        }
        var headers = ResilienceCore.HTTPHeaders()
        for field in request.headerFields { headers.add(name: field.name.rawName, value: field.value) }
        let context =
            AttemptContext.current
            ?? ResilienceContext(key: operationID, operation: operationID, classifier: classifier)
        let data: Data? =
            if let body {
                try await Self.collect(body, limit: maximumRequestBody, url: url, within: context)
            } else {
                nil
            }
        let response = try await transport.send(
            ResilienceCore.HTTPRequest(
                method: ResilienceCore.HTTPMethod(rawValue: request.method.rawValue), url: url, headers: headers,
                body: data),
            context: context)
        let head = try Self.head(of: response, url: url)
        // Only the answer to a HEAD, a 204 and a 304 have no body; any other has one, if empty (a generated client
        // fails on a missing body where its document declares content, as for an empty `text/plain`).
        let hasBody = request.method != .head && response.status != 204 && response.status != 304
        return (head, hasBody ? HTTPBody(response.body) : nil)
    }

    /// The most header fields an `HTTPFields` holds: it stops the process on the 65,535th.
    static let maximumHeaderFields = Int(UInt16.max) - 1

    /// `response`'s status and header fields as swift-http-types holds them (a field whose name is not an HTTP
    /// token is dropped), or ``invalidResponse(_:status:url:)``'s error for a head that is no final response or
    /// that it cannot hold:
    /// - a status outside 200...599: RFC 9110 (section 15) defines final statuses there (a 1xx is interim, never
    ///   the answer), calls any other number invalid and asks a client to treat it as a server error rather
    ///   than hand it on as an answer (a generated client would take a `0` or a `600` from a broken proxy for an
    ///   undocumented answer, and the middleware's breaker for a success); swift-http-types stops the process on
    ///   one outside 0...999;
    /// - more than 65,534 header fields (as many as an upstream cares to send when the transport does not bound
    ///   them), on which swift-http-types stops the process.
    static func head(of response: ResilienceCore.HTTPResponse, url: URL) throws -> HTTPTypes.HTTPResponse {
        guard (200...599).contains(response.status) else {
            throw invalidResponse(
                "the response's status \(response.status) is not a final HTTP status (200...599)",
                status: response.status, url: response.url ?? url)
        }
        var fields = HTTPFields()
        for field in response.headers {
            guard let name = HTTPField.Name(field.name) else { continue }
            guard fields.count < maximumHeaderFields else {
                throw invalidResponse(
                    "the response has more than \(maximumHeaderFields) header fields", status: response.status,
                    url: response.url ?? url)
            }
            fields.append(HTTPField(name: name, value: field.value))
        }
        return HTTPTypes.HTTPResponse(status: .init(code: response.status), headerFields: fields)
    }

    /// The error of a response the transport returned that a generated client cannot be handed: the server's
    /// invalid response (`invalidResponse`, ``FailureCode/invalidResponse``, `NET_003`), not transient, and sent.
    /// - Parameters:
    ///   - reason: What the response broke.
    ///   - status: The response's status.
    ///   - url: The response's URL.
    public static func invalidResponse(_ reason: String, status: Int, url: URL?) -> TransportError {
        TransportError(
            FailureClassification(
                category: .invalidResponse, code: .invalidResponse, httpStatus: status, isTransient: false,
                logLevel: .error, message: reason),
            url: url)
    }

    /// The URL `request` goes to: its path (and query) appended to `baseURL`, the server URL whose own path
    /// (`https://api.example.com/v1`) prefixes every operation's, as OpenAPI clients resolve it.
    static func url(of request: HTTPTypes.HTTPRequest, baseURL: URL) -> URL? {
        let path = request.path ?? "/"
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return URL(string: base + (path.hasPrefix("/") ? path : "/" + path))
    }

    /// The error of a request body larger than `limit` bytes: the caller's request (`clientError`,
    /// `FailureCode.invalidFormat`), not transient and never sent, so no retry repeats it.
    /// - Parameters:
    ///   - limit: The bound the body exceeded (``maximumRequestBody``).
    ///   - url: The request's URL.
    public static func requestBodyTooLarge(limit: Int, url: URL?) -> TransportError {
        TransportError(
            FailureClassification(
                category: .clientError, code: .invalidFormat, isTransient: false, logLevel: .error,
                message: "the request body is larger than \(limit) bytes (maximumRequestBody), so it was not sent",
                requestWasNotSent: true),
            url: url)
    }

    /// The error of a request body whose stream ended after `read` bytes of the `declared` length it was given
    /// with: a broken body (`clientError`, `FailureCode.invalidFormat`), not transient and never sent, so neither
    /// half of it nor a retry reaches the server.
    /// - Parameters:
    ///   - read: The bytes the stream yielded before it ended.
    ///   - declared: The body's declared length.
    ///   - url: The request's URL.
    public static func requestBodyEndedEarly(read: Int, declared: Int64, url: URL?) -> TransportError {
        TransportError(
            FailureClassification(
                category: .clientError, code: .invalidFormat, isTransient: false, logLevel: .error,
                message: "the request body ended after \(read) of its declared \(declared) bytes, so it was not sent",
                requestWasNotSent: true),
            url: url)
    }

    /// The whole of `body` (see `collect(_:limit:url:)`), read within `context`'s deadline when it has one
    /// (``reading(_:url:requestWasSent:within:_:)``), so an upload that stalls is cut off when the attempt's time
    /// is up. It then fails as a stalled exchange does, with ``TransportError/timedOut(after:url:)``'s timeout (its
    /// message says the body was not read), marked not sent: the transport was never handed the request.
    static func collect(
        _ body: HTTPBody, limit: Int, url: URL, within context: ResilienceContext
    ) async throws -> Data {
        try await reading("the request body", url: url, requestWasSent: false, within: context) {
            try await collect(body, limit: limit, url: url)
        }
    }

    /// What `read` returns, raced against `context`'s deadline on its clock when the context has one (through
    /// Core's `withDeadline`), as the transport races its exchange; without a deadline only the call's
    /// cancellation ends it. When the time is up first it throws ``TransportError/timedOut(after:url:)``'s timeout
    /// (after emitting `timedOut` with the time the read had; a zero limit when the deadline had passed before the
    /// reading started), its message saying that `what` was not read, and `requestWasSent` telling whether the
    /// request had reached the transport.
    /// - Parameters:
    ///   - what: What is read, as the message names it (`"the request body"`).
    ///   - url: The request's URL, named in the error.
    ///   - requestWasSent: Whether the request was handed to the transport before the read.
    ///   - context: The attempt's context: its deadline, clock and telemetry.
    ///   - read: The reading to bound; it runs in a child task and is cancelled when the deadline passes.
    static func reading<Output: Sendable>(
        _ what: String, url: URL?, requestWasSent: Bool, within context: ResilienceContext,
        _ read: @Sendable () async throws -> Output
    ) async throws -> Output {
        guard let deadline = context.deadline else { return try await read() }
        let clock = context.clock
        let timeLeft = clock.now().duration(to: deadline)
        do {
            return try await withDeadline(until: deadline, clock: clock, operation: read)
        } catch let timeUp as DeadlineExceededError {
            // Without an operation error the deadline had passed before the reading started.
            let started = timeUp.operationError != nil
            if started { context.emit(.timedOut) { $0.duration = timeLeft } }
            var timedOut = TransportError.timedOut(after: started ? timeLeft : .zero, url: url)
            let within = started ? "within the attempt deadline (\(timeLeft))" : "before the attempt deadline passed"
            timedOut.classification.message =
                "\(what) was not read \(within)" + (requestWasSent ? "" : ", so it was not sent")
            timedOut.classification.requestWasNotSent = !requestWasSent
            throw timedOut
        }
    }

    /// The whole of `body`, or ``requestBodyTooLarge(limit:url:)``'s error once it proves larger than `limit`
    /// (by its declared length, or while reading it); see `checkComplete(_:read:url:)` for a body cut short.
    static func collect(_ body: HTTPBody, limit: Int, url: URL) async throws -> Data {
        if case .known(let length) = body.length, length > Int64(limit) {
            throw requestBodyTooLarge(limit: limit, url: url)
        }
        var bytes = Data()
        for try await chunk in body {
            guard chunk.count <= limit - bytes.count else { throw requestBodyTooLarge(limit: limit, url: url) }
            bytes.append(contentsOf: chunk)
        }
        try checkComplete(body, read: bytes.count, url: url)
        return bytes
    }

    /// Throws when a body read to its end (`read` bytes) may not be whole: `CancellationError` when the task is
    /// cancelled (a stream ends early when its reader is cancelled, as `AsyncStream` does), and
    /// ``requestBodyEndedEarly(read:declared:url:)``'s error when it yielded fewer bytes than it declared.
    static func checkComplete(_ body: HTTPBody, read: Int, url: URL?) throws {
        try Task.checkCancellation()
        if case .known(let length) = body.length, Int64(read) < length {
            throw requestBodyEndedEarly(read: read, declared: length, url: url)
        }
    }
}
