import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import ResilienceTesting
import ResilienceTransport
import Testing

@testable import ResilienceAsyncHTTPClient

/// Declared body lengths the transport must not take at their word: a response's `Content-Length` from a hostile
/// upstream, and an upload's length from the caller. Over loopback sockets with generous real-time bounds.
@Suite("AsyncHTTPClientTransport and declared body lengths")
struct DeclaredLengthTests {
    /// A loopback listener that accepts connections, counts them and never answers.
    final class SilentListener: Sendable {
        let channel: any Channel
        let accepted: NIOLockedValueBox<Int>

        init() async throws {
            let accepted = NIOLockedValueBox(0)
            self.accepted = accepted
            channel = try await ServerBootstrap(group: HTTPClient.defaultEventLoopGroup)
                .childChannelInitializer { child in
                    accepted.withLockedValue { $0 += 1 }
                    return child.eventLoop.makeSucceededVoidFuture()
                }
                .bind(host: "127.0.0.1", port: 0).get()
        }

        /// The connections accepted so far.
        var connections: Int { accepted.withLockedValue { $0 } }

        /// `path` on the listener.
        func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(channel.localAddress?.port ?? 0)\(path)")! }

        /// Stops listening.
        func close() async throws { try await channel.close() }
    }

    @Test(
        "A Content-Length far past memory under an unbounded cap is a truncated body, not an allocation of that size",
        arguments: [Int.max, 1 << 40])
    func hugeDeclaredLength(declared: Int) async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/huge", .truncated(body: Data("hello".utf8), declaredLength: declared))
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.maximumResponseSize = .max
        let error = await failure {
            _ = try await withTransport(configuration) { transport in
                try await transport.send(HTTPRequest(url: server.url("/huge")), context: realContext())
            }
        }
        let truncated = try #require(error as? TransportError, "\(String(describing: error))")
        #expect(truncated.code == .truncatedResponse)
        #expect(truncated.classification.message?.hasSuffix(" of \(declared) bytes") == true, "\(truncated)")
    }

    @Test("A streamed upload with a negative declared length is refused before a connection is made")
    func negativeUploadLength() async throws {
        let (error, connections) = try await uploadThreeBytes(declaring: -1)
        let refused = try #require(error as? TransportError, "\(String(describing: error))")
        #expect(refused.code == .invalidFormat)
        #expect(refused.classification.category == .clientError)
        #expect(refused.classification.isTransient == false)
        #expect(refused.classification.requestWasNotSent)
        #expect(refused.classification.message?.contains("length -1") == true, "\(refused)")
        #expect(connections == 0, "nothing reached the server")
    }

    @Test("A streamed upload shorter than its declared length is refused as invalid, and may have been sent")
    func uploadShorterThanDeclared() async throws {
        let (error, connections) = try await uploadThreeBytes(declaring: 10)
        let refused = try #require(error as? TransportError, "\(String(describing: error))")
        #expect(refused.code == .invalidFormat)
        #expect(refused.classification.isTransient == false)
        // The head and three bytes went out before the stream ended short: a retry must not take it as unsent.
        #expect(refused.classification.requestWasNotSent == false, "\(refused)")
        #expect(connections == 1)
    }

    /// Streams a three-byte upload declared `length` bytes long to a listener that never answers: what the
    /// transport threw, and how many connections reached the listener.
    func uploadThreeBytes(declaring length: Int) async throws -> (error: (any Error)?, connections: Int) {
        let listener = try await SilentListener()
        let upload = AsyncStream<Data> { continuation in
            continuation.yield(Data("abc".utf8))
            continuation.finish()
        }
        let error = await failure {
            _ = try await withTransport { transport in
                try await transport.stream(
                    HTTPRequest(method: .post, url: listener.url("/upload")), uploading: upload, length: length,
                    context: realContext())
            }
        }
        let connections = listener.connections
        try await listener.close()
        return (error, connections)
    }
}
