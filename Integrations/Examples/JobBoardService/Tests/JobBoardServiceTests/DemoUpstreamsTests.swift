import AsyncHTTPClient
import Foundation
import Logging
import Testing

@testable import JobBoardService

/// The demo upstreams as a long-running service: the fake boards outlive the `FaultServer` bounds (its lifetime
/// and request limit) by being renewed on the same port. A loopback server in real time; generous bounds.
@Suite("Demo upstreams", .serialized)
struct DemoUpstreamsTests {
    /// The status of `GET url`, or nil when the request failed (connection refused or reset).
    static func status(_ url: URL) async -> UInt? {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.headers.add(name: "Connection", value: "close")
        let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(5))
        _ = try? await response?.body.collect(upTo: 1 << 20)
        return response?.status.code
    }

    @Test("The fake boards keep answering on the same URL after the server's lifetime, while the service runs")
    func boardsOutliveServerLifetime() async throws {
        let upstreams = try DemoUpstreams(seed: 1, chaos: 0, lifetime: .seconds(1), logger: Logger(label: "test"))
        let url = upstreams.boardsURL.appending(path: "v1/boards/acme/jobs")
        #expect(await Self.status(url) == 200)
        let running = Task { try await upstreams.run() }
        defer {
            running.cancel()
            upstreams.stop()
        }
        // Three lifetimes later, several renewals have happened (or, without renewal, the server stopped).
        let deadline = ContinuousClock.now + .seconds(30)
        var answered = 0
        while answered < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .seconds(1))
            if await Self.status(url) == 200 { answered += 1 }
        }
        #expect(answered == 3, "the fake boards stopped answering \(url)")
        #expect(upstreams.requestCount(for: "/v1/boards/acme/jobs") >= 4)
    }
}
