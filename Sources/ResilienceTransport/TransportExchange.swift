import Foundation
import ResilienceCore

/// What every transport does around one HTTP exchange, whatever client library sends it: the attempt
/// deadline raced on the context's clock, a typed timeout, and the server's quota reported.
///
/// ``URLSessionTransport`` and the AsyncHTTPClient transport both send through it; a transport of your own
/// can too, and then meets the deadline rules of `HTTPTransportConformance` by construction.
///
/// ```swift
/// func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
///     try await TransportExchange.run(request, context: context, defaultTimeout: .seconds(30)) { limit in
///         try await client.execute(request, timeout: limit)
///     }
/// }
/// ```
public enum TransportExchange {
    /// Runs `exchange` against the attempt deadline and returns its response.
    ///
    /// The exchange races the deadline through Core's `withDeadline(until:clock:operation:)`: when the deadline
    /// passes first it is cancelled and awaited, and a response it still returns is kept.
    ///
    /// - Throws: `CancellationError` when the task is cancelled; ``TransportError/timedOut(after:url:)``
    ///   (after emitting `timedOut` with the limit) when the exchange fails once the deadline has passed on
    ///   `context.clock`; otherwise whatever the exchange throws.
    /// - Parameters:
    ///   - request: The request, named in a timeout's error.
    ///   - context: The attempt's context: its `deadline` (measured on its `clock`), telemetry and quota
    ///     observer.
    ///   - defaultTimeout: The limit when the context has no deadline.
    ///   - exchange: Sends the request and reads the whole response; given the time left, for a client
    ///     library's own timeout. Cancelled when the deadline passes.
    public static func run(
        _ request: HTTPRequest, context: ResilienceContext, defaultTimeout: Duration,
        _ exchange: @escaping @Sendable (_ limit: Duration) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let clock = context.clock
        let now = clock.now()
        let deadline = context.deadline ?? now.advanced(by: defaultTimeout)
        let limit = now.duration(to: deadline)
        guard limit > .zero else { throw TransportError.timedOut(after: .zero, url: request.url) }
        let response: HTTPResponse
        do {
            response = try await withDeadline(until: deadline, clock: clock) { try await exchange(limit) }
        } catch is DeadlineExceededError {
            context.emit(.timedOut) { $0.duration = limit }
            throw TransportError.timedOut(after: limit, url: request.url)
        }
        context.reportQuota(from: response.headers, responseDate: response.headers["Date"].flatMap(HTTPDate.parse))
        return response
    }

    /// Whether a response with `status` to a `method` request carries a body (RFC 9110 §6.4.1): a response to
    /// `HEAD`, a 1xx, a 204 and a 304 have none, whatever their `Content-Length` says (it describes the body a
    /// `GET` would have had). A transport neither refuses such a response for its declared length nor waits for
    /// that many bytes.
    /// - Parameters:
    ///   - status: The response's status code.
    ///   - method: The method of the request it answers.
    public static func responseHasBody(status: Int, method: HTTPMethod) -> Bool {
        method != .head && status >= 200 && status != 204 && status != 304
    }
}
