import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import ResilienceAsyncHTTPClient
import ResilienceTransport
import Testing

/// A plaintext loopback HTTP/1.1 server whose `/stall` answers `302 Location: /next` with a `Content-Length` it never
/// sends (the head, then silence), and whose `/next` answers `200 done`.
private final class StallingRedirectServer: Sendable {
    let port: Int
    private let channel: any Channel

    init() async throws {
        channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(Handler())
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        port = channel.localAddress?.port ?? 0
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    func stop() async { try? await channel.close() }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        var path = ""

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): path = head.uri
            case .body: break
            case .end:
                var headers = NIOHTTP1.HTTPHeaders()
                if path == "/stall" {
                    headers.add(name: "location", value: "/next")
                    headers.add(name: "content-length", value: "100")
                    let head = HTTPResponseHead(version: .http1_1, status: .found, headers: headers)
                    context.writeAndFlush(wrapOutboundOut(.head(head)), promise: nil)
                } else {
                    headers.add(name: "content-length", value: "4")
                    let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
                    context.write(wrapOutboundOut(.head(head)), promise: nil)
                    context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: "done")))), promise: nil)
                    context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                }
            }
        }
    }
}

@Suite("AsyncHTTPClientTransport redirects whose body stalls")
struct StallingRedirectTests {
    @Test("A redirect whose body never arrives is followed at once, not waited on until the deadline")
    func stalledRedirectBodyIsNotAwaited() async throws {
        let server = try await StallingRedirectServer()
        let started = ContinuousClock.now
        let response = try await withTransport { transport in
            try await transport.send(
                HTTPRequest(url: server.url("/stall")), context: realContext(timeout: .seconds(20)))
        }
        let elapsed = ContinuousClock.now - started
        await server.stop()
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "done")
        #expect(elapsed < .seconds(10), "the redirect was followed after \(elapsed)")
    }

    @Test("A streamed request meets the same redirect and still gets the final head before its deadline")
    func stalledRedirectBodyWhileStreaming() async throws {
        let server = try await StallingRedirectServer()
        let status = try await withTransport { transport in
            let response = try await transport.stream(
                HTTPRequest(url: server.url("/stall")), context: realContext(timeout: .seconds(20)))
            var body = Data()
            for try await chunk in response.body { body.append(chunk) }
            #expect(String(decoding: body, as: UTF8.self) == "done")
            return response.status
        }
        await server.stop()
        #expect(status == 200)
    }
}
