import Foundation
import HTTPTypes
import OpenAPIRuntime
import ResilienceCore
import ResilienceTransport

/// A swift-openapi-runtime `ClientMiddleware` that runs every operation of a generated client through a
/// resilience pipeline keyed by its `operationId` (or host), so the client gets retries, budgets, circuit
/// breakers, rate limits and `Retry-After` handling whatever its transport (URLSession, AsyncHTTPClient, or
/// ``ResilienceClientTransport`` over a ResilienceKit transport).
///
/// - Failure statuses (by default 408, 429 and 5xx but 501) fail the attempt inside the pipeline as a
///   classified ``RejectedResponse``, with the server's `Retry-After` as the retry hint; when the pipeline
///   gives up (its retries run out, the failure is not retryable, or a retry budget refuses the retry), the
///   last such response is returned to the client (or thrown, see
///   ``ResilienceMiddlewareConfiguration/returnsFinalFailureResponse``).
/// - The request body is read by the call's first attempt, inside the pipeline, so its deadline stages bound an
///   upload that stalls (the call fails with the stage's timeout error, reported like any attempt's failure). A
///   single-pass body is buffered (up to ``ResilienceMiddlewareConfiguration/maximumReplayableRequestBody``) so a
///   retry sends it again whole; a body that can be iterated several times is reused as is. A single-pass body
///   larger than the bound (of known or unknown length) is sent once, streamed, by one attempt, with retries
///   off: a failure of that call is final, and an attempt started after it (a retry of a stage's own failure, a
///   timeout's, or a hedge) ends with it without sending; one declared larger than the bound also makes the call
///   run as not idempotent, so no such attempt starts. A body is never buffered part for whole: one that ends
///   before its declared length fails the first attempt, before anything is sent, with
///   ``ResilienceClientTransport/requestBodyEndedEarly(read:declared:url:)``'s error, and one whose reading was
///   cut short by cancellation throws `CancellationError`.
/// - Responses stream through: the body the transport returns reaches the client unread. Only a failure
///   status's body is read, up to ``ResilienceMiddlewareConfiguration/maximumRetainedFailureBody``; one that
///   breaks before that bound or its end fails the attempt as a transport failure (its own classified error, or
///   a transient `FailureCode.truncatedResponse` ``TransportError``), never a silently shorter body; one whose
///   reading the call's cancellation cut short throws `CancellationError`.
/// - Idempotency follows the method (GET, PUT, DELETE … may be repeated; POST and PATCH only with an
///   `Idempotency-Key` header or when the failure proves nothing was sent), through the pipeline's retry guard.
///
/// ```swift
/// import OpenAPIURLSession  // swift-openapi-urlsession
/// import ResilienceKit      // has a URLSessionTransport of its own, hence the module-qualified name below
/// import ResilienceOpenAPI
///
/// let registry = PipelineRegistry { _ in Pipeline.preset(.standard) }  // one cached pipeline per key
/// let middleware = ResilienceMiddleware { key in registry.pipeline(for: key) }
/// let client = Client(                                                  // the generated client
///     serverURL: try Servers.Server1.url(), transport: OpenAPIURLSession.URLSessionTransport(),
///     middlewares: [middleware])
/// ```
public struct ResilienceMiddleware: ClientMiddleware {
    /// The settings.
    public var configuration: ResilienceMiddlewareConfiguration
    private let pipeline: @Sendable (String) -> any ResiliencePipeline

    /// Creates the middleware.
    /// - Parameters:
    ///   - configuration: Keying, failure statuses, buffering bounds, clock and telemetry.
    ///   - pipeline: The pipeline for a key; called per operation call, so return cached instances (a breaker
    ///     must keep its state).
    public init(
        configuration: ResilienceMiddlewareConfiguration = .init(),
        pipeline: @escaping @Sendable (_ key: String) -> any ResiliencePipeline
    ) {
        self.configuration = configuration
        self.pipeline = pipeline
    }

    /// Runs the rest of the middleware chain and the transport as the pipeline's operation.
    public func intercept(
        _ request: HTTPTypes.HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPTypes.HTTPRequest, HTTPBody?, URL) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?) {
        let key = configuration.key(operationID: operationID, baseURL: baseURL)
        let url = ResilienceClientTransport.url(of: request, baseURL: baseURL)
        // Read by the first attempt, inside the pipeline, so its deadline stages bound a stalled upload.
        let requestBody = CallBody(body, limit: configuration.maximumReplayableRequestBody, url: url)
        // A body known to be sendable only once makes the call unrepeatable whatever its method or key: no retry
        // of a stage's own failure (a timeout's) and no hedge starts another attempt. (One found too large while
        // reading ends any later attempt with the first one's failure, made final.)
        let context = ResilienceContext(
            key: key, operation: operationID,
            idempotency: requestBody.isSinglePassBeforeReading ? .nonIdempotent : Self.idempotency(of: request),
            telemetry: configuration.telemetry, clock: configuration.clock, classifier: configuration.classifier)
        let configuration = configuration
        // The last attempt's failure response, for a stage that ends the call on it with its own error.
        let lastRejected = LockedState<RejectedResponse?>(initialState: nil)
        do {
            let exchange = try await pipeline(key).execute(context) { attemptContext in
                try Task.checkCancellation()
                let replay = try await requestBody.take(attemptContext)
                do {
                    let (response, responseBody) = try await AttemptContext.$current.withValue(attemptContext) {
                        try await next(request, replay.body, baseURL)
                    }
                    if configuration.failureStatuses(response.status.code) {
                        var rejected = RejectedResponse(
                            response: response,
                            body: try await Self.retained(
                                responseBody, limit: configuration.maximumRetainedFailureBody,
                                status: response.status.code, url: url, context: attemptContext),
                            url: url, classifier: configuration.statusClassifier)
                        rejected.hasBody = responseBody != nil
                        lastRejected.withLock { $0 = rejected }
                        throw rejected
                    }
                    if replay.isSinglePass { requestBody.sent() }
                    return Exchange(response: response, body: responseBody)
                } catch {
                    if !(error is RejectedResponse) { lastRejected.withLock { $0 = nil } }
                    // The client wraps transport errors; the stages classify what happened underneath.
                    let failure = (error as? ClientError)?.underlyingError ?? error
                    guard replay.isSinglePass else { throw failure }
                    requestBody.spend(failure)
                    guard !CancellationDetection.isCancellation(failure) else { throw failure }
                    throw Self.final(failure, classification: attemptContext.classify(failure))
                }
            }
            return (exchange.response, exchange.body)
        } catch let rejected as RejectedResponse where configuration.returnsFinalFailureResponse {
            return rejected.returned
        } catch let refusal as ResilienceError
            where refusal.code == .budgetExhausted && configuration.returnsFinalFailureResponse
        {
            // The retry budget refused to retry the last attempt's failure: that failure is the call's outcome.
            guard let rejected = lastRejected.withLock({ $0 }) else { throw refusal }
            return rejected.returned
        }
    }

    /// A failure of a call whose body cannot be sent again, marked not transient so no stage retries it.
    static func final(_ failure: any Error, classification: FailureClassification) -> any Error {
        let note = "the request body can be sent only once, so the call is not retried"
        if var rejected = failure as? RejectedResponse {
            rejected.classification.isTransient = false
            rejected.classification.message = [rejected.classification.message, note].compactMap { $0 }.joined(
                separator: "; ")
            return rejected
        }
        return NotReplayable(failure: failure, classification: classification, note: note)
    }

    /// The classification of `failure`, the end of the attempt that spent a single-pass body, when another
    /// attempt is started: a cancellation there was a stage's (a timeout cutting the attempt short), since the
    /// caller's would not start another attempt, so it is reported as the attempt timing out.
    static func classification(ofSpent failure: any Error, _ context: ResilienceContext) -> FailureClassification {
        guard CancellationDetection.isCancellation(failure) else { return context.classify(failure) }
        return FailureClassification(category: .timeout, code: .attemptTimedOut)
    }

    /// Idempotent methods may be repeated; an `Idempotency-Key` header makes POST and PATCH repeatable.
    static func idempotency(of request: HTTPTypes.HTTPRequest) -> Idempotency {
        if let name = HTTPField.Name("Idempotency-Key"), let key = request.headerFields[name], !key.isEmpty {
            return .keyed(key)
        }
        switch request.method {
        case .get, .head, .put, .delete, .options, .trace: return .idempotent
        default: return .nonIdempotent
        }
    }

    /// Up to `limit` bytes of a failure body; the rest is dropped unread. A body that breaks before `limit`
    /// bytes (or its end) fails the attempt rather than passing for a shorter body: with its own error when
    /// `context` classifies it (a reset, a timeout, a cancellation), else with a transient
    /// `FailureCode.truncatedResponse` ``TransportError`` saying how many bytes arrived (as does one that ends
    /// before its declared length); one whose reading the task's cancellation cut short throws `CancellationError`.
    /// The body is read within the attempt's deadline when `context` has one, as the request body is
    /// (`ResilienceClientTransport.reading(_:url:requestWasSent:within:_:)`), so one that stalls or trickles fails
    /// the attempt with a timeout (`FailureCode.timedOut`) when the attempt's time is up, under a cooperative
    /// timeout stage too.
    static func retained(
        _ body: HTTPBody?, limit: Int, status: Int, url: URL?, context: ResilienceContext
    ) async throws -> [UInt8] {
        guard let body else { return [] }
        return try await ResilienceClientTransport.reading(
            "the body of the HTTP \(status) response", url: url, requestWasSent: true, within: context
        ) {
            try await readRetained(body, limit: limit, status: status, url: url, context: context)
        }
    }

    /// `retained(_:limit:status:url:context:)` without the deadline: the reading itself.
    private static func readRetained(
        _ body: HTTPBody, limit: Int, status: Int, url: URL?, context: ResilienceContext
    ) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        let broke = { (reason: String) in
            TransportError(
                FailureClassification(
                    category: .transient, code: .truncatedResponse,
                    message: "the body of the HTTP \(status) response broke after \(bytes.count) bytes: \(reason)"),
                url: url)
        }
        do {
            for try await chunk in body {
                bytes.append(contentsOf: chunk.prefix(max(0, limit - bytes.count)))
                if bytes.count >= limit { return bytes }
            }
        } catch {
            if CancellationDetection.isCancellation(error) || context.classify(error).code != .unknown { throw error }
            throw broke("\(error)")
        }
        // A stream ends early when its reader is cancelled (as `AsyncStream` does): not the body's end.
        try Task.checkCancellation()
        if case .known(let length) = body.length, Int64(bytes.count) < length {
            throw broke("it ended before its declared \(length) bytes")
        }
        return bytes
    }
}

/// One attempt's response, carried out of the pipeline.
struct Exchange: Sendable {
    var response: HTTPTypes.HTTPResponse
    var body: HTTPBody?
}

/// The attempt's context, for ``ResilienceClientTransport`` (deadline, clock, telemetry) down the chain.
enum AttemptContext {
    @TaskLocal static var current: ResilienceContext?
}
