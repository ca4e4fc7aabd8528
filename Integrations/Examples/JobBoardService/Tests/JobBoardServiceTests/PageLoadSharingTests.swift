import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import ResilienceAsyncHTTPClient
import ResilienceTesting
import Testing

@testable import JobBoardService

/// Concurrent page loads share one fetch: on a live 127.0.0.1 socket, with the demo upstreams (a loopback
/// FaultServer) counting what reaches them. Every upstream request waits at a gate until the test has seen the
/// page loads arrive, so that they overlap however slow the machine is. Real sockets and real time, generous
/// bounds.
@Suite("Page loads share one fetch", .serialized)
struct PageLoadSharingTests {
    static let silent = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// The upstream paths of the six sources (`/feeds/initech.rss` is refused before a byte is sent).
    static let upstreamPaths = [
        "/v1/boards/acme/jobs", "/v0/postings/globex", "/careers/hooli.atom", "/feeds/initech.rss",
        "/feeds/umbrella.rss", "/spi/v3/soylent/jobs",
    ]

    /// Starts calm demo upstreams and a service whose upstream requests wait at `gate`, runs `body`, stops both.
    static func withGatedService(
        gate: CallGate, _ body: (JobBoardService, DemoUpstreams, GatedTransport) async throws -> Void
    ) async throws {
        let upstreams = try DemoUpstreams(chaos: 0, lifetime: .seconds(120), logger: silent)
        let transport = AsyncHTTPClientTransport(
            configuration: .standard, eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let gated = GatedTransport(base: transport, gate: gate)
        let service = JobBoardService(
            configuration: JobBoardServiceConfiguration(
                port: 0, boardsURL: upstreams.boardsURL, plaintextFeedsURL: upstreams.plaintextFeedsURL,
                sourceDescriptions: upstreams.sourceDescriptions),
            logger: silent, transport: gated)
        do {
            try await body(service, upstreams, gated)
        } catch {
            gate.open()
            upstreams.stop()
            try await transport.shutdown()
            throw error
        }
        gate.open()
        upstreams.stop()
        try await transport.shutdown()
    }

    /// Whether `loads` page loads are in: all waiting for one shared fetch, or each with a fetch of its own that
    /// has come to the transport.
    static func allIn(_ loads: Int, _ service: JobBoardService, _ gated: GatedTransport) -> Bool {
        service.fetches.callerCount(for: JobBoardService.fetchKey) == loads
            || gated.arrivals(for: "/v1/boards/acme/jobs") >= loads
    }

    /// Waits until `condition` holds, at most `bound`; returns whether it held.
    static func eventually(within bound: Duration = .seconds(20), _ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + bound
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    @Test("50 concurrent GET /, HEAD / and GET /jobs: one request per upstream path, and every answer complete")
    func concurrentPageLoadsShareOneFetch() async throws {
        let loads = 50
        // 30 page loads, 10 load-balancer probes, 10 API reads.
        let requests: [(method: String, path: String)] = (0..<loads).map { index in
            switch index % 5 {
            case 3: ("HEAD", "/")
            case 4: ("GET", "/jobs")
            default: ("GET", "/")
            }
        }
        let gate = CallGate()
        try await Self.withGatedService(gate: gate) { service, upstreams, gated in
            try await service.makeApplication().test(.live) { client in
                let port = try #require(client.port)
                var configuration = HTTPClient.Configuration()
                configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = loads
                let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
                let answers = Task {
                    try await withThrowingTaskGroup(of: (String, String, UInt, String).self) { group in
                        for (method, path) in requests {
                            group.addTask {
                                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
                                request.method = method == "HEAD" ? .HEAD : .GET
                                let response = try await http.execute(request, timeout: .seconds(60))
                                let body = try await response.body.collect(upTo: 4 << 20)
                                return (method, path, response.status.code, String(buffer: body))
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                }
                // Every page load is in before any upstream request goes out.
                #expect(try await Self.eventually { Self.allIn(loads, service, gated) })
                gate.open()
                let result = await answers.result
                try await http.shutdown()
                let responses = try result.get()
                #expect(responses.count == loads)
                for (method, path, status, body) in responses {
                    #expect(status == 200, "\(method) \(path)")
                    switch (method, path) {
                    case ("HEAD", _):
                        #expect(body.isEmpty)
                    case (_, "/jobs"):
                        let jobs = try JSONDecoder().decode(JobsResponse.self, from: Data(body.utf8))
                        #expect(jobs.total == 6 && jobs.delivered >= 3)
                    default:
                        #expect(body.contains("Showing jobs from") && body.contains("</html>"))
                        for id in ["greenhouse-acme", "lever-globex", "hooli-atom", "umbrella-rss", "workable-soylent"]
                        {
                            #expect(body.contains(id))
                        }
                    }
                }
                for path in Self.upstreamPaths {
                    #expect(upstreams.requestCount(for: path) <= 1, "\(path): \(upstreams.requestCount(for: path))")
                }
                #expect(upstreams.requestCount(for: "/v1/boards/acme/jobs") == 1)
                #expect(service.fetches.inFlightCount == 0)
            }
        }
    }

    @Test("A cancelled page load stops waiting; the fetch goes on for the others")
    func cancelledWaiterLeavesAlone() async throws {
        let gate = CallGate()
        try await Self.withGatedService(gate: gate) { service, upstreams, gated in
            let leaving = Task { try await service.fetchJobs() }
            let staying = Task { try await service.fetchJobs() }
            #expect(try await Self.eventually { Self.allIn(2, service, gated) && gate.waitingCount > 0 })
            leaving.cancel()
            await #expect(throws: CancellationError.self) { try await leaving.value }
            #expect(service.fetches.callerCount(for: JobBoardService.fetchKey) == 1)
            #expect(gate.cancellations == 0, "the fetch was cancelled with the first page load")
            gate.open()
            let jobs = try await staying.value
            #expect(jobs.total == 6 && jobs.delivered >= 3)
            #expect(upstreams.requestCount(for: "/v1/boards/acme/jobs") == 1)
        }
    }

    @Test("The last page load leaving cancels the fetch; the next one starts a fresh fetch")
    func lastWaiterLeavingCancelsTheFetch() async throws {
        let gate = CallGate()
        try await Self.withGatedService(gate: gate) { service, upstreams, _ in
            let alone = Task { try await service.fetchJobs() }
            #expect(try await Self.eventually { gate.waitingCount > 0 })
            alone.cancel()
            await #expect(throws: CancellationError.self) { try await alone.value }
            #expect(try await Self.eventually { service.fetches.inFlightCount == 0 && gate.waitingCount == 0 })
            #expect(gate.cancellations > 0, "the upstream requests of the abandoned fetch were not cancelled")
            #expect(upstreams.requestCount == 0)
            gate.open()
            let jobs = try await service.fetchJobs()
            #expect(jobs.total == 6 && jobs.delivered >= 3)
        }
    }

    @Test("A page load after the fetch has ended fetches anew (nothing is cached)")
    func laterPageLoadFetchesAgain() async throws {
        let gate = CallGate()
        gate.open()
        try await Self.withGatedService(gate: gate) { service, upstreams, _ in
            _ = try await service.fetchJobs()
            _ = try await service.fetchJobs()
            // (The Atom feed's `max-age=60` lets the HTTP cache answer it the second time.)
            #expect(upstreams.requestCount(for: "/v1/boards/acme/jobs") == 2)
            #expect(upstreams.requestCount(for: "/v0/postings/globex") == 2)
        }
    }
}
