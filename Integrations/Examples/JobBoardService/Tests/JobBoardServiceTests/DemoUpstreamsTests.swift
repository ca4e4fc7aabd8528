import AsyncHTTPClient
import Foundation
import Logging
import Testing

@testable import JobBoardService

/// The demo upstreams as a long-running service: the fake boards outlive the `FaultServer` bounds (its lifetime
/// and request limit) by starting over on the same listener. A loopback server in real time; generous bounds.
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
        // Three lifetimes later, the server has started over several times (or, stopping at its bounds, it stopped).
        let deadline = ContinuousClock.now + .seconds(30)
        var answered = 0
        while answered < 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .seconds(1))
            if await Self.status(url) == 200 { answered += 1 }
        }
        #expect(answered == 3, "the fake boards stopped answering \(url)")
        #expect(upstreams.requestCount(for: "/v1/boards/acme/jobs") >= 4)
    }

    /// The process's open file descriptors (Linux; 0 where `/proc` does not list them).
    static func openDescriptorCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    }

    @Test("Start-overs in the middle of traffic: every request is answered, each counted once, nothing is left open")
    func startOverUnderTraffic() async throws {
        let descriptorsBefore = Self.openDescriptorCount()
        let upstreams = try DemoUpstreams(
            seed: 1, chaos: 0, lifetime: .seconds(600), maximumRequests: 50, logger: Logger(label: "test"))
        let running = Task { try await upstreams.run() }
        defer {
            running.cancel()
            upstreams.stop()
        }
        let port = try #require(upstreams.boardsURL.port)
        // Four clients, one request per connection, for 5 s: the request limit is reached again and again.
        let load = LoadClient(port: port, paths: ["/v1/boards/acme/jobs", "/v0/postings/globex"], bound: 10)
        load.start(4)
        try await Task.sleep(for: .seconds(5))
        let requests = try await load.stop()
        let unanswered = requests.filter { $0.outcome != .answered(200) }
        #expect(requests.count > 200, "\(requests.count) requests: too few to cross the limit several times")
        #expect(unanswered.isEmpty, "\(LoadClient.summary(requests))")
        #expect(upstreams.requestCount == requests.count - unanswered.filter { $0.outcome == .refused }.count)
        running.cancel()
        _ = try? await running.value
        upstreams.stop()
        // Once stopped, its listener and every connection are closed (their threads notice within a moment).
        let deadline = ContinuousClock.now + .seconds(10)
        while Self.openDescriptorCount() > descriptorsBefore, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(Self.openDescriptorCount() <= descriptorsBefore, "descriptors: \(descriptorsBefore) before")
    }
}
