import AsyncHTTPClient
import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

@testable import ResilienceAsyncHTTPClient

/// What bounds a streamed body: the byte cap per event a consumer buffers, not per stream. Over the loopback
/// FaultServer with real sockets.
@Suite("Streamed body limits over FaultServer")
struct StreamedBodyLimitsTests {
    @Test("A server-sent event stream longer than the byte cap is read to its end: the cap bounds an event")
    func longEventStream() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        let event = "data: " + String(repeating: "x", count: 100) + "\n\n"
        let count = (11 * 1024 * 1024) / event.utf8.count + 1
        let body = Data(String(repeating: event, count: count).utf8)
        server.script("/events", .respond(status: 200, headers: ["Content-Type": "text/event-stream"], body: body))
        let (received, error) = try await withTransport { transport in
            var received = 0
            let error = await failure {
                let response = try await transport.stream(
                    HTTPRequest(url: server.url("/events")), context: realContext(timeout: .seconds(30)))
                for try await _ in ServerSentEvents(response.body) { received += 1 }
            }
            return (received, error)
        }
        #expect(error == nil, "\(String(describing: error))")
        #expect(received == count, "\(received) of \(count) events (\(body.count) bytes)")
    }

    @Test(
        "The documented exception: a compressed stream still ends at the cap, AsyncHTTPClient's inflater counts it whole"
    )
    func compressedStreamEndsAtCap() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/gzip", .chunkedBody(size: 2 * 1024 * 1024, gzip: true))
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.maximumResponseSize = 1024 * 1024
        let (received, error) = try await withTransport(configuration) { transport in
            var received = 0
            let error = await failure {
                let response = try await transport.stream(HTTPRequest(url: server.url("/gzip")), context: realContext())
                for try await chunk in response.body { received += chunk.count }
            }
            return (received, error)
        }
        #expect(classify(error)?.code == .responseTooLarge, "\(String(describing: error))")
        #expect(received <= 1024 * 1024)
    }
}
