import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1.1 child channel, answering a request whose head is too large with the status that says
/// which part is: `414 URI Too Long` when the request line exceeds the decoder's limits, `431 Request Header
/// Fields Too Large` when the header fields do (one field, their total size or their number; the limits of
/// `HTTP1Channel.Configuration.httpDecoder`, 80 KiB and 1,000 fields by default). Either answer says
/// `Connection: close`, comes after the answers to the requests before it on the connection, and the connection
/// is closed once it is written; nothing after the oversized head is answered.
///
/// The HTTP/1 decoder reports both cases as one error (`HTTPParserError.headerOverflow`), which Hummingbird
/// answers with `400 Bad Request`. So a handler in front of the decoder follows where each request line ends,
/// and a handler behind it, which sees the decoded requests and the answers written, answers the error.
/// Behind a request with a body on the same connection the request line is not followed exactly; an oversized
/// head there is answered 431.
struct HeadLimitChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    /// The channel doing everything else: decoding, the idle timeout, handing requests to the responder.
    let http1: HTTP1Channel

    /// The server builder for `Application`: HTTP/1.1 with Hummingbird's `configuration`, through this channel.
    static func server(configuration: HTTP1Channel.Configuration) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in HeadLimitChannel(responder: responder, configuration: configuration) }
    }

    /// Creates the channel for `responder` with Hummingbird's HTTP/1.1 `configuration`.
    init(responder: @escaping HTTPChannelHandler.Responder, configuration: HTTP1Channel.Configuration) {
        http1 = HTTP1Channel(responder: responder, configuration: configuration)
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let position = NIOLoopBound(RequestPosition(), eventLoop: channel.eventLoop)
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(
                RequestLineTracker(position: position.value), position: .first)
        }
        .flatMap { http1.setup(channel: channel, logger: logger) }
        .flatMapThrowing { value in
            let decoder = try channel.pipeline.syncOperations.handler(
                type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try channel.pipeline.syncOperations.addHandler(
                OversizedHeadResponder(position: position.value, logger: logger), position: .after(decoder))
            return value
        }
    }

    func handle(value: Value, logger: Logger) async { await http1.handle(value: value, logger: logger) }
}

/// Where the decoder is in the connection's byte stream, shared by the two handlers of one connection (both run on
/// its event loop).
private final class RequestPosition {
    enum Part {
        /// Before the end of a request line (or before a request).
        case requestLine
        /// In the header fields of a request.
        case fields
        /// In a request's body: bytes are passed on in whole reads.
        case body
        /// Somewhere after a request with a body ended in the middle of a read: the next head is not followed.
        case unknown
    }

    var part = Part.requestLine
    /// Whether the request line being read has a byte other than CR and LF (blank lines before it are allowed).
    var requestLineHasContent = false
    /// Whether a read is being passed on whole (in a body).
    var passingWholeRead = false
    /// Whether the head overflowed: nothing more is read.
    var failed = false
}

/// In front of the decoder: passes each read on line by line (whole in a body), so that after each piece the
/// decoder has seen exactly the bytes up to a line's end, and notes when a request line ends.
private final class RequestLineTracker: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let position: RequestPosition

    init(position: RequestPosition) { self.position = position }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        while buffer.readableBytes > 0, !position.failed {
            if position.part == .body {
                position.passingWholeRead = true
                context.fireChannelRead(wrapInboundOut(buffer))
                position.passingWholeRead = false
                return
            }
            let lineFeed = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n"))
            let length = lineFeed.map { $0 - buffer.readerIndex + 1 } ?? buffer.readableBytes
            let piece = buffer.readSlice(length: length)!
            let inRequestLine = position.part == .requestLine
            if inRequestLine, piece.readableBytesView.contains(where: { $0 != 13 && $0 != 10 }) {
                position.requestLineHasContent = true
            }
            context.fireChannelRead(wrapInboundOut(piece))
            if lineFeed != nil, inRequestLine, position.part == .requestLine, position.requestLineHasContent {
                position.part = .fields
            }
        }
    }
}

/// Behind the decoder: counts the requests not yet answered and, when the decoder reports an oversized head,
/// answers it with 414 or 431 (after the answers before it), closes the connection and keeps the error from
/// Hummingbird's 400.
private final class OversizedHeadResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let position: RequestPosition
    private let logger: Logger
    /// Requests decoded whose answer has not been written to its end.
    private var unanswered = 0
    /// The answer to the oversized head, waiting for the answers before it.
    private var pending: HTTPResponseStatus?

    init(position: RequestPosition, logger: Logger) {
        self.position = position
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !position.failed else { return }
        switch unwrapInboundIn(data) {
        case .head:
            unanswered += 1
            position.part = .body
        case .body:
            break
        case .end:
            position.part = position.passingWholeRead ? .unknown : .requestLine
            position.requestLineHasContent = false
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let isEnd = if case .end = unwrapOutboundIn(data) { true } else { false }
        context.write(data, promise: promise)
        guard isEnd else { return }
        unanswered -= 1
        if unanswered == 0, let status = pending { answer(status, context: context) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // After the answer is decided, the decoder's further complaints about the same stream are not news.
        guard !position.failed else { return }
        guard case .headerOverflow = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        position.failed = true
        let status: HTTPResponseStatus = position.part == .requestLine ? .uriTooLong : .requestHeaderFieldsTooLarge
        logger.debug("request head too large: answering \(status.code) and closing the connection")
        if unanswered == 0 { answer(status, context: context) } else { pending = status }
    }

    private func answer(_ status: HTTPResponseStatus, context: ChannelHandlerContext) {
        pending = nil
        let head = HTTPResponseHead(
            version: .http1_1, status: status, headers: ["Connection": "close", "Content-Length": "0"])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        // Closing only the output sends the answer and then the end of the stream; what the client still sends is
        // read and dropped until it closes its side (or the idle timeout passes), so that its unread bytes do not
        // turn the close into a reset that could discard the answer before the client reads it.
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
        }
    }
}
