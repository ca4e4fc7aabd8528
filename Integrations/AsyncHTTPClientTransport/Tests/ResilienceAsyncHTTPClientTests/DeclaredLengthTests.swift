import AsyncHTTPClient
import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

@testable import ResilienceAsyncHTTPClient

/// Declared body lengths the transport must not take at their word, such as a response's `Content-Length` from a
/// hostile upstream. Over loopback sockets with generous real-time bounds.
@Suite("AsyncHTTPClientTransport and declared body lengths")
struct DeclaredLengthTests {
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
}
