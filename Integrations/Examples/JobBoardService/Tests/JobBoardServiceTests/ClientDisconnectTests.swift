import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import ResilienceAsyncHTTPClient
import ResilienceTesting
import Testing

@testable import JobBoardService

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A client that closes its connection while its page loads: on a live 127.0.0.1 socket, the page's upstreams (a
/// loopback FaultServer) never answer. Real sockets and real time, generous bounds.
@Suite("A client disconnecting mid-page-load", .serialized)
struct ClientDisconnectTests {
    @Test("Closing the socket during GET / cancels the fetch: no retry reaches the upstreams, nothing runs on")
    func disconnectCancelsUpstreamRequests() async throws {
        let upstream = try FaultServer(
            configuration: {
                var c = FaultServerConfiguration(); c.lifetime = .seconds(120); return c
            }())
        defer { upstream.stop() }
        for path in PageLoadSharingTests.upstreamPaths { upstream.script(path, .hang) }
        let transport = AsyncHTTPClientTransport(
            configuration: .standard, eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let service = JobBoardService(
            configuration: JobBoardServiceConfiguration(
                port: 0, boardsURL: upstream.baseURL, plaintextFeedsURL: upstream.baseURL),
            logger: PageLoadSharingTests.silent, transport: transport)
        try await service.makeApplication().test(.live) { client in
            let port = try #require(client.port)
            let socket = try LoopbackSocket.open(port: port)
            let request = Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
            #expect(request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) } == request.count)
            // Every source's first attempt is at the upstream, which never answers.
            #expect(
                try await PageLoadSharingTests.eventually { upstream.requestCount(for: "/v1/boards/acme/jobs") == 1 })
            close(socket)
            // Each attempt times out after 2 s and is retried within the 5 s deadline: a fetch left running would
            // send a second attempt at about 2.2 s. A cancelled one ends, and its connections close, well before.
            let closedAt = ContinuousClock.now
            let ended = try await PageLoadSharingTests.eventually(within: .seconds(4)) {
                service.fetches.inFlightCount == 0
            }
            #expect(
                ended,
                """
                \(closedAt.duration(to: .now)) after the client had gone: \(service.fetches.inFlightCount) fetch(es) \
                running, \(upstream.openConnectionCount) upstream connection(s) open
                """)
            // The cancelled requests' connections are closed (the upstream notices within a second).
            #expect(try await PageLoadSharingTests.eventually { upstream.openConnectionCount == 0 })
            try await Task.sleep(for: .seconds(4) - closedAt.duration(to: .now))
            #expect(upstream.requestCount(for: "/v1/boards/acme/jobs") == 1, "retries reached the upstream")
        }
        try await transport.shutdown()
    }
}
