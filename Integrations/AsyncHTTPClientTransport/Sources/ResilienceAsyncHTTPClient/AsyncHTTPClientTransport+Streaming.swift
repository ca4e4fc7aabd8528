import AsyncHTTPClient
import Foundation
import NIOCore
import ResilienceCore
import ResilienceTransport

/// A response whose body is read as it arrives: the head (status, headers) and a ``ResponseBodyStream`` that
/// reads it chunk by chunk, each within the transport's idle timeout.
public struct StreamingHTTPResponse: Sendable {
    /// The status code.
    public let status: Int
    /// The header fields.
    public let headers: ResilienceCore.HTTPHeaders
    /// The URL of the response (the last one after redirects).
    public let url: URL
    /// The body, chunk by chunk, as the server sends it.
    public let body: ResponseBodyStream
}

/// The body of a ``StreamingHTTPResponse``: chunks of bytes as they arrive, with backpressure (the next chunk
/// is read from the socket only when asked for).
///
/// It is not bounded in total: a chunk is handed over as it arrives and not kept, so a long download or a
/// server-sent event stream runs for as long as its reader reads (``ServerSentEvents`` bounds each event by
/// ``AsyncHTTPClientTransportConfiguration/maximumResponseSize``). It throws
/// `TransportError.idleTimedOut(after:url:)` (`NET_002`, transient) when no byte arrives for
/// ``AsyncHTTPClientTransportConfiguration/streamIdleTimeout`` on the context's clock, a classified
/// `TransportError` when the connection fails mid-body (a TLS connection cut without `close_notify` or a body
/// shorter than its `Content-Length` is a transient truncation), and `CancellationError` when the reading task
/// is cancelled. An error is thrown once: the request is cancelled then and the stream ends (`next()` returns
/// nil). Leaving the loop early cancels the request. Iterate it once.
public struct ResponseBodyStream: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    let body: HTTPClientResponse.Body
    /// The most bytes a reader of the stream should buffer as one unit (an event): the transport's
    /// `maximumResponseSize`. The stream itself does not count its bytes against it.
    let unitLimit: Int
    let declaredLength: Int?
    let url: URL
    /// How long a chunk may take to arrive, or nil for no limit.
    let idleTimeout: Duration?
    /// The clock the idle timeout runs on (the context's).
    let clock: ResilienceClock

    /// An iterator over the chunks.
    public func makeAsyncIterator() -> Iterator {
        Iterator(
            base: ChunkSource(body.makeAsyncIterator()), declaredLength: declaredLength, url: url,
            idleTimeout: idleTimeout, clock: clock)
    }

    /// Reads the chunks, each within the idle timeout.
    public struct Iterator: AsyncIteratorProtocol {
        /// The body's chunks; nil once the stream has ended or failed (releasing it cancels the request).
        var base: ChunkSource?
        let declaredLength: Int?
        let url: URL
        let idleTimeout: Duration?
        let clock: ResilienceClock
        var received = 0

        /// The next chunk, or nil at the end of the body (and after an error was thrown).
        public mutating func next() async throws -> Data? {
            guard let base else { return nil }
            do {
                return try await read(from: base)
            } catch {
                self.base = nil
                throw error
            }
        }

        private mutating func read(from source: ChunkSource) async throws -> Data? {
            let chunk: ByteBuffer?
            do {
                if let idleTimeout {
                    chunk = try await withDeadline(after: idleTimeout, clock: clock) {
                        let chunk = try await source.next()
                        // A body cancelled by the race ends as if complete (nil): that end is the time running out.
                        try Task.checkCancellation()
                        return chunk
                    }
                } else {
                    chunk = try await source.next()
                }
            } catch is DeadlineExceededError {
                throw TransportError.idleTimedOut(after: idleTimeout ?? .zero, url: url)
            } catch {
                throw AsyncHTTPClientTransport.translate(
                    error, url: url,
                    progress: AsyncHTTPClientTransport.Progress(received: received, declared: declaredLength))
            }
            guard let chunk else {
                base = nil
                if let declaredLength, received < declaredLength {
                    throw TransportError.truncated(received: received, expected: declaredLength, url: url)
                }
                return nil
            }
            received += chunk.readableBytes
            return Data(chunk.readableBytesView)
        }
    }

    /// AsyncHTTPClient's body iterator, read inside the idle timeout's race (`withDeadline(after:clock:operation:)`
    /// runs the read in a child task). Unchecked: one read at a time, and the race awaits its child before it
    /// returns, so no two tasks ever touch the iterator at once.
    final class ChunkSource: @unchecked Sendable {
        private var iterator: HTTPClientResponse.Body.AsyncIterator

        init(_ iterator: HTTPClientResponse.Body.AsyncIterator) {
            self.iterator = iterator
        }

        func next() async throws -> ByteBuffer? {
            try await iterator.next()
        }
    }
}

extension AsyncHTTPClientTransport {
    /// Sends `request` and returns as soon as the response head arrives, with the body to read as it streams (a
    /// download, a server-sent event stream).
    ///
    /// The attempt deadline (`context.deadline`, else ``AsyncHTTPClientTransportConfiguration/defaultAttemptTimeout``)
    /// covers the response head, raced on `context.clock`; the body is read for as long as the caller reads it
    /// (cancel the reading task to stop), each chunk within
    /// ``AsyncHTTPClientTransportConfiguration/streamIdleTimeout`` on the same clock. The body is not bounded in
    /// total, whatever its `Content-Length`: ``AsyncHTTPClientTransportConfiguration/maximumResponseSize`` bounds
    /// what a reader buffers (a ``ServerSentEvents`` event). The request asks for the body unencoded
    /// (`Accept-Encoding: identity`) unless it names encodings itself, since AsyncHTTPClient's inflater counts a
    /// whole response against that limit: a body that arrives compressed all the same ends at it. Redirects are
    /// followed as ``send(_:context:)`` follows them. A `SecureTransport` does not wrap this method: the request
    /// and its redirect hops are held to ``AsyncHTTPClientTransportConfiguration/plaintextPolicy`` (a plaintext
    /// URL to a host it does not allow is upgraded to `https` or refused with `insecureTransport`, `NET_010`,
    /// before anything is sent).
    /// - Parameters:
    ///   - request: The request; its `body`, if any, is sent whole.
    ///   - context: The attempt's context: deadline, clock and telemetry.
    /// - Returns: The head and the streaming body.
    /// - Throws: A classified `TransportError`, `TransportError.timedOut` when the head does not arrive by the
    ///   deadline, or `CancellationError`.
    public func stream(_ request: HTTPRequest, context: ResilienceContext) async throws -> StreamingHTTPResponse {
        try await stream(request, upload: nil, context: context)
    }

    /// Sends `request` with `body` streamed as its body (chunk by chunk, as the sequence yields them) and returns
    /// as soon as the response head arrives, with the response body to read as it streams.
    ///
    /// A streamed body cannot be sent twice, so a redirect response is returned, not followed; retry such a
    /// request only when the sequence can be made again. The deadline, idle timeout and errors are those of
    /// ``stream(_:context:)``, and so is the plaintext policy; an error the sequence throws fails the request with
    /// that error.
    /// - Parameters:
    ///   - request: The method, URL and headers (its `body` is ignored).
    ///   - body: The bytes to send, chunk by chunk.
    ///   - length: The body's length in bytes when known (sent as `Content-Length`), else nil (chunked). A negative
    ///     one is the caller's invalid request: the call fails with a `clientError`/`PARSE_001` `TransportError`,
    ///     not transient and marked not sent, before a connection is made.
    ///   - context: The attempt's context: deadline, clock and telemetry.
    /// - Returns: The head and the streaming body.
    public func stream<Body: AsyncSequence & Sendable>(
        _ request: HTTPRequest, uploading body: Body, length: Int?, context: ResilienceContext
    ) async throws -> StreamingHTTPResponse where Body.Element == Data {
        if let length, length < 0 {
            throw TransportError(
                FailureClassification(
                    category: .clientError, code: .invalidFormat, isTransient: false, logLevel: .error,
                    message: "the upload's declared length \(length) is negative, so it was not sent",
                    requestWasNotSent: true),
                url: request.url)
        }
        let upload: HTTPClientRequest.Body = .stream(
            UploadSequence(base: body), length: length.map { .known(Int64($0)) } ?? .unknown)
        return try await stream(request, upload: upload, context: context)
    }

    private func stream(
        _ request: HTTPRequest, upload: HTTPClientRequest.Body?, context: ResilienceContext
    ) async throws -> StreamingHTTPResponse {
        try await securing(request, context: context) { request, policies in
            try await stream(request, upload: upload, context: context, secureTransport: policies)
        }
    }

    private func stream(
        _ request: HTTPRequest, upload: HTTPClientRequest.Body?, context: ResilienceContext,
        secureTransport: [SecureTransportPolicy]
    ) async throws -> StreamingHTTPResponse {
        try TransportExchange.validateHeaderFields(of: request)
        var unencoded = request
        if !request.headers.contains("Accept-Encoding") {
            // AsyncHTTPClient's inflater counts a whole response against one limit, so a compressed stream could
            // not be bounded per event: ask for the body as it is (the inflater then adds no "deflate, gzip").
            unencoded.headers.add(name: "Accept-Encoding", value: "identity")
        }
        let request = unencoded
        try Task.checkCancellation()
        let clock = context.clock
        let now = clock.now()
        let deadline = context.deadline ?? now.advanced(by: configuration.defaultAttemptTimeout)
        let limit = now.duration(to: deadline)
        guard limit > .zero else { throw TransportError.timedOut(after: .zero, url: request.url) }
        let backstop = NIODeadline.now() + TimeAmount(clamping: limit)
        let head: HeadAndRequest
        do {
            head = try await withDeadline(until: deadline, clock: clock) {
                let (response, final) = try await self.head(
                    of: request, upload: upload, deadline: backstop, secureTransport: secureTransport)
                return HeadAndRequest(response: response, request: final)
            }
        } catch is DeadlineExceededError {
            context.emit(.timedOut) { $0.duration = limit }
            throw TransportError.timedOut(after: limit, url: request.url)
        }
        let response = head.response
        let declared = AsyncHTTPClientTransport.declaredBodyLength(of: response, to: head.request)
        var headers = ResilienceCore.HTTPHeaders()
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        context.reportQuota(from: headers, responseDate: headers["Date"].flatMap(HTTPDate.parse))
        return StreamingHTTPResponse(
            status: Int(response.status.code), headers: headers, url: head.url,
            body: ResponseBodyStream(
                body: response.body, unitLimit: configuration.maximumResponseSize, declaredLength: declared,
                url: head.url, idleTimeout: configuration.streamIdleTimeout, clock: clock))
    }
}

/// The final response head and the request it answers, carried out of the deadline race.
private struct HeadAndRequest: Sendable {
    let response: HTTPClientResponse
    let request: HTTPRequest
    var url: URL { request.url }
}

/// An upload body as AsyncHTTPClient takes it: the caller's chunks of `Data` as `ByteBuffer`s.
private struct UploadSequence<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == Data {
    typealias Element = ByteBuffer
    let base: Base

    func makeAsyncIterator() -> Iterator { Iterator(base: base.makeAsyncIterator()) }

    struct Iterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator

        mutating func next() async throws -> ByteBuffer? {
            do {
                return try await base.next().map { ByteBuffer(bytes: $0) }
            } catch {
                throw UploadFailure(underlying: error)
            }
        }
    }
}

/// An error the caller's upload sequence threw, marked so that ``AsyncHTTPClientTransport/translate(_:url:progress:)``
/// hands it back as it is instead of classifying it as a transport failure.
struct UploadFailure: Error {
    let underlying: any Error
}
