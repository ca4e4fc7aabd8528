import Foundation
import ResilienceCore

/// What every transport does around one HTTP exchange, whatever client library sends it: header fields that
/// cannot be sent refused before anything is sent, the attempt deadline raced on the context's clock, a typed
/// timeout, and the server's quota reported.
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
    /// - Throws: ``TransportError/invalidHeaderField(_:url:)`` when a header field cannot be sent
    ///   (``validateHeaderFields(of:)``), before the exchange starts; `CancellationError` when the task is
    ///   cancelled; ``TransportError/timedOut(after:url:)``
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
        try validateHeaderFields(of: request)
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

    /// Refuses a request whose header fields cannot be sent as they are, the same way whatever client library
    /// would send it: a name must be an HTTP token (RFC 9110 §5.6.2: at least one letter, digit or one of the
    /// fifteen marks `tchar` allows), and a value must hold no control character but the horizontal tab
    /// (RFC 9110 §5.5: CR, LF and NUL would end the field or the head early and let the rest read as fields of
    /// their own). Client libraries otherwise differ: AsyncHTTPClient refuses such a field, FoundationNetworking
    /// drops a value with CR, LF or NUL and sends the request without it, and sends other control characters
    /// and invalid names as they are. ``run(_:context:defaultTimeout:_:)`` checks first; call it yourself
    /// before a send that does not go through `run` (a streaming one).
    /// - Parameter request: The request about to be sent.
    /// - Throws: ``TransportError/invalidHeaderField(_:url:)`` naming the first field refused.
    public static func validateHeaderFields(of request: HTTPRequest) throws(TransportError) {
        for field in request.headers {
            if field.name.isEmpty || !field.name.utf8.allSatisfy(isTokenCharacter) {
                throw TransportError.invalidHeaderField(
                    "the header name \(describe(field.name)) is not an HTTP token", url: request.url)
            }
            if field.value.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) {
                throw TransportError.invalidHeaderField(
                    "the value of the header field \(field.name) holds a control character (CR, LF, NUL or another)",
                    url: request.url)
            }
        }
    }

    /// Whether `byte` may appear in an HTTP token (`tchar`, RFC 9110 §5.6.2).
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"),
            UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"),
            UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// A refused name as the message shows it: escaped and cut to 64 characters (it may hold anything).
    private static func describe(_ name: String) -> String {
        let escaped = name.debugDescription
        return escaped.count > 64 ? String(escaped.prefix(63)) + "…" : escaped
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
