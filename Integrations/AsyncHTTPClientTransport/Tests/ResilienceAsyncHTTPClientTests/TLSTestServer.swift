import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A certificate authority and a certificate it signed for 127.0.0.1 and localhost, made by the `openssl`
/// command at test time in a temporary directory (nothing is committed).
struct TestCertificates: Sendable {
    let authority: NIOSSLCertificate
    let leaf: NIOSSLCertificate
    let key: NIOSSLPrivateKey

    /// Generated once per test process.
    static let shared: Result<TestCertificates, any Error> = Result { try generate() }

    static func generate() throws -> TestCertificates {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(
            toFile: path("leaf.ext"), atomically: true, encoding: .utf8)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(
            ["req", "-x509"] + curve + [
                "-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2",
                "-subj", "/CN=ResilienceKit Test CA",
            ])
        try openssl(
            ["req"] + curve + ["-keyout", path("leaf.key"), "-out", path("leaf.csr"), "-subj", "/CN=localhost"])
        try openssl([
            "x509", "-req", "-in", path("leaf.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
            "-CAcreateserial", "-out", path("leaf.pem"), "-days", "2", "-extfile", path("leaf.ext"),
        ])
        return TestCertificates(
            authority: try certificate(path("ca.pem")),
            leaf: try certificate(path("leaf.pem")),
            key: try NIOSSLPrivateKey(file: path("leaf.key"), format: .pem))
    }

    /// The first certificate of the PEM file at `path`.
    private static func certificate(_ path: String) throws -> NIOSSLCertificate {
        guard let first = try NIOSSLCertificate.fromPEMFile(path).first else {
            throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "no certificate in \(path)"])
        }
        return first
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "openssl \(arguments) failed"])
        }
    }
}

/// What the loopback TLS server does with a request, by path.
enum ServerBehaviour: Sendable {
    /// 200 with `body`.
    case ok(String)
    /// The head and `partial` bytes of a longer body, then `RST_STREAM(INTERNAL_ERROR)` (HTTP/2 only).
    case resetMidBody(partial: Int)
    /// `RST_STREAM(REFUSED_STREAM)` before any response (HTTP/2 only).
    case refuseStream
    /// `GOAWAY` with last stream id 0 (this request was not processed), then the connection closes (HTTP/2 only).
    case goAway
    /// The head declaring `declared` bytes and `partial` of them, then the TCP connection closes without TLS
    /// `close_notify` (HTTP/1.1 only).
    case cutTLS(declared: Int, partial: Int)
    /// A `text/event-stream` body: each string written and flushed as its own chunk, `gap` apart, then the end.
    case events([String], gap: TimeAmount)
    /// Reads the whole request body and answers 200 with its length and the number of chunks it came in.
    case echoLength
}

/// A loopback HTTPS server on SwiftNIO and NIOSSL, speaking HTTP/2 (ALPN `h2`) or HTTP/1.1, scripted by path;
/// each path's behaviour list is used in order (the last one repeats), so a retry can meet a different answer.
final class TLSTestServer: Sendable {
    /// The protocol the server speaks over TLS (offered by ALPN).
    enum WireProtocol: Sendable { case http2, http1 }

    let port: Int
    private let channel: any Channel
    private let script: NIOLockedValueBox<[String: [ServerBehaviour]]>
    private let counts: NIOLockedValueBox<[String: Int]>

    init(
        _ protocolVersion: WireProtocol, script: [String: [ServerBehaviour]], minimumTLSVersion: TLSVersion = .tlsv12
    ) async throws {
        let certificates = try TestCertificates.shared.get()
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificates.leaf)], privateKey: .privateKey(certificates.key))
        tls.minimumTLSVersion = minimumTLSVersion
        tls.applicationProtocols = protocolVersion == .http2 ? ["h2"] : ["http/1.1"]
        let context = try NIOSSLContext(configuration: tls)
        let script = NIOLockedValueBox(script)
        self.script = script
        let counts = NIOLockedValueBox<[String: Int]>([:])
        self.counts = counts
        let behaviour: @Sendable (String) -> ServerBehaviour = { path in
            let attempt = counts.withLockedValue { counts -> Int in
                counts[path, default: 0] += 1
                return counts[path]! - 1
            }
            return script.withLockedValue { script in
                guard let list = script[path], !list.isEmpty else { return .ok("no script for \(path)") }
                return list[min(attempt, list.count - 1)]
            }
        }
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.addHandler(ConnectionCutter())
                    try sync.addHandler(NIOSSLServerHandler(context: context))
                }.flatMap {
                    switch protocolVersion {
                    case .http2:
                        channel.configureHTTP2Pipeline(mode: .server) { stream in
                            stream.eventLoop.makeCompletedFuture {
                                try stream.pipeline.syncOperations.addHandler(
                                    HTTP2StreamResponder(behaviour: behaviour))
                            }
                        }.map { _ in }
                    case .http1:
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                            try channel.pipeline.syncOperations.addHandler(HTTP1Responder(behaviour: behaviour))
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    /// The https URL of `path` on this server.
    func url(_ path: String) -> URL { URL(string: "https://127.0.0.1:\(port)\(path)")! }

    /// How many requests reached `path`.
    func requestCount(_ path: String) -> Int { counts.withLockedValue { $0[path, default: 0] } }

    func stop() async { try? await channel.close() }
}

/// Asks the connection cutter (the handler next to the socket) to close the TCP connection at once, below TLS.
struct CutConnection: Sendable {}

/// Sits between the socket and TLS; on ``CutConnection`` it closes the socket without TLS's `close_notify`.
final class ConnectionCutter: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = ByteBuffer

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if event is CutConnection {
            context.close(promise: promise)
        } else {
            context.triggerUserOutboundEvent(event, promise: promise)
        }
    }
}

/// Answers one HTTP/2 stream by its path's behaviour.
final class HTTP2StreamResponder: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    let behaviour: @Sendable (String) -> ServerBehaviour
    var path = ""
    var received = 0
    var chunks = 0

    init(behaviour: @escaping @Sendable (String) -> ServerBehaviour) { self.behaviour = behaviour }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            path = headers.headers.first(name: ":path") ?? ""
            if headers.endStream { respond(context: context) }
        case .data(let data):
            if case .byteBuffer(let buffer) = data.data, buffer.readableBytes > 0 {
                received += buffer.readableBytes
                chunks += 1
            }
            if data.endStream { respond(context: context) }
        default:
            break
        }
    }

    private func head(_ fields: [(String, String)], endStream: Bool = false) -> HTTP2Frame.FramePayload {
        .headers(.init(headers: HPACKHeaders([(":status", "200")] + fields), endStream: endStream))
    }

    private func data(_ text: String, endStream: Bool = false) -> HTTP2Frame.FramePayload {
        .data(.init(data: .byteBuffer(ByteBuffer(string: text)), endStream: endStream))
    }

    private func respond(context: ChannelHandlerContext) {
        switch behaviour(path) {
        case .ok(let body):
            context.write(wrapOutboundOut(head([("content-length", "\(body.utf8.count)")])), promise: nil)
            context.writeAndFlush(wrapOutboundOut(data(body, endStream: true)), promise: nil)
        case .echoLength:
            let body = "\(received) bytes in \(chunks) chunks"
            context.write(wrapOutboundOut(head([("content-length", "\(body.utf8.count)")])), promise: nil)
            context.writeAndFlush(wrapOutboundOut(data(body, endStream: true)), promise: nil)
        case .resetMidBody(let partial):
            context.write(wrapOutboundOut(head([("content-length", "\(partial * 10)")])), promise: nil)
            context.writeAndFlush(wrapOutboundOut(data(String(repeating: "x", count: partial))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.rstStream(.internalError)), promise: nil)
        case .refuseStream:
            context.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
        case .goAway:
            guard let connection = context.channel.parent else { return }
            let frame = HTTP2Frame(
                streamID: .rootStream, payload: .goAway(lastStreamID: .rootStream, errorCode: .noError, opaqueData: nil)
            )
            connection.writeAndFlush(frame).whenComplete { _ in connection.close(promise: nil) }
        case .events(let events, let gap):
            context.writeAndFlush(wrapOutboundOut(head([("content-type", "text/event-stream")])), promise: nil)
            writeEvents(events[...], gap: gap, context: context)
        case .cutTLS:
            context.writeAndFlush(wrapOutboundOut(.rstStream(.internalError)), promise: nil)
        }
    }

    private func writeEvents(_ events: ArraySlice<String>, gap: TimeAmount, context: ChannelHandlerContext) {
        guard let first = events.first else {
            context.writeAndFlush(wrapOutboundOut(data("", endStream: true)), promise: nil)
            return
        }
        context.writeAndFlush(wrapOutboundOut(data(first)), promise: nil)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.scheduleTask(in: gap) {
            let (responder, context) = loopBound.value
            responder.writeEvents(events.dropFirst(), gap: gap, context: context)
        }
    }
}

/// Answers HTTP/1.1 requests by their path's behaviour (the TLS cut mid-body).
final class HTTP1Responder: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let behaviour: @Sendable (String) -> ServerBehaviour
    var path = ""

    init(behaviour: @escaping @Sendable (String) -> ServerBehaviour) { self.behaviour = behaviour }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): path = head.uri
        case .body: break
        case .end: respond(context: context)
        }
    }

    private func respond(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        switch behaviour(path) {
        case .cutTLS(let declared, let partial):
            headers.add(name: "content-length", value: "\(declared)")
            context.write(wrapOutboundOut(.head(.init(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            let body = ByteBuffer(string: String(repeating: "y", count: partial))
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
            context.triggerUserOutboundEvent(CutConnection(), promise: nil)
        case .ok(let text):
            headers.add(name: "content-length", value: "\(text.utf8.count)")
            context.write(wrapOutboundOut(.head(.init(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        default:
            context.close(promise: nil)
        }
    }
}
