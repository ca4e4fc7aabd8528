/// Sends one HTTP request and returns the response, whatever its status.
///
/// ## Contract
/// - Return every response that arrived, including 4xx and 5xx; throw only when no complete response
///   arrived (connection failure, timeout, size limit, cancellation …), with an error a classifier
///   recognises (ideally a ``ClassifiedError``).
/// - Honour `context.deadline`: finish or throw a timeout by then, whatever the platform's own timeouts do.
/// - Be cancellation-correct: cancelling the calling task ends the request promptly and throws a
///   cancellation error.
/// - Never buffer an unbounded body.
/// - Be safe to share across tasks (one transport, many concurrent requests).
///
/// Decorators (authentication, idempotency keys, secure transport, a resilience pipeline) wrap another
/// `HTTPTransport`.
public protocol HTTPTransport: Sendable {
    /// Sends `request` within `context`'s deadline.
    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse
}
