import Foundation
import ResilienceCore
import ResilienceTransport

/// Settings of a ``ResilienceMiddleware``: how operations are keyed, which statuses count as failures, and how
/// much of a body it may hold in memory to replay a request or report an error.
public struct ResilienceMiddlewareConfiguration: Sendable {
    /// Which pipeline an operation runs through.
    public enum Key: Sendable {
        /// The operation's `operationId` from the OpenAPI document (one breaker and budget per operation).
        case operationID
        /// The server's host (one breaker and budget per upstream).
        case host
        /// Your own key from the operation ID and the server URL.
        case custom(@Sendable (_ operationID: String, _ baseURL: URL) -> String)
    }

    /// How operations are keyed (default: by operation ID).
    public var key: Key = .operationID
    /// The largest request body buffered so it can be sent again on a retry (default 1 MiB). A body that can
    /// be iterated several times is never buffered; a single-pass body larger than this (known in advance or
    /// found while buffering) is sent once, streamed, without retries.
    public var maximumReplayableRequestBody: Int = 1024 * 1024
    /// How much of a failure response's body is kept (default 64 KiB), for the server's message and for the
    /// response returned when the pipeline gives up. A failure body that breaks before this many bytes (or its
    /// end) fails the attempt as a transport failure instead.
    public var maximumRetainedFailureBody: Int = 64 * 1024
    /// Statuses that fail the attempt inside the pipeline (so retries, breakers and Retry-After apply):
    /// by default 408, 429 and every 5xx except 501.
    public var failureStatuses: @Sendable (Int) -> Bool = { status in
        status == 408 || status == 429 || ((500...599).contains(status) && status != 501)
    }
    /// When the pipeline gives up on a failure status (retries exhausted, not retryable, a retry budget's
    /// refusal), return that last response to the generated client (true, the default: it decodes it as a
    /// documented or undocumented response) or throw (false: ``RejectedResponse``, or the budget's
    /// `ResilienceError`).
    public var returnsFinalFailureResponse: Bool = true
    /// Classifies failure statuses (and, through the context, every other error).
    public var statusClassifier: HTTPStatusClassifier = HTTPStatusClassifier()
    /// Classifies transport errors for the pipeline's stages. The default knows `URLError` and ResilienceKit's
    /// classified errors; an error it does not know is `unknown` and never retried, so a client whose transport
    /// throws other errors (AsyncHTTPClient's, SwiftNIO's) needs that transport's classifier added here.
    public var classifier: any ErrorClassifier = TransportErrorClassifier.standard
    /// The source of time for the pipeline's stages.
    public var clock: ResilienceClock = .continuous
    /// Where the pipeline's events go, if anywhere.
    public var telemetry: (any TelemetrySink)? = nil

    /// The defaults.
    public init() {}

    /// The key of one operation call.
    func key(operationID: String, baseURL: URL) -> String {
        switch key {
        case .operationID: operationID
        case .host: baseURL.host ?? baseURL.absoluteString
        case .custom(let make): make(operationID, baseURL)
        }
    }
}
