import AsyncHTTPClient
import Foundation
import Hummingbird
import InMemoryLogging
import JobBoardService
import Logging
import NIOCore
import ResilienceAsyncHTTPClient
import Testing

/// End to end: the service on 127.0.0.1 (a free port), asked by a real HTTP client (AsyncHTTPClient), its
/// sources on the embedded loopback FaultServer, fetched through the AsyncHTTPClient transport. Real sockets and real time, generous bounds.
@Suite("JobBoardService end to end", .serialized)
struct JobBoardServiceTests {
    struct Reply {
        var status: Int
        var contentType: String
        var body: String
    }

    /// Runs the service on a free port, calls `body` with a function that GETs a path, then stops it.
    static func withService(
        logger: Logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
        _ body: (_ get: (String) async throws -> Reply) async throws -> Void
    ) async throws {
        let service = try JobBoardService(
            configuration: JobBoardServiceConfiguration(port: 0, chaos: 0, faultServerLifetime: .seconds(120)),
            logger: logger)
        #expect(service.transport is AsyncHTTPClientTransport)  // the sources send through AsyncHTTPClient
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = service.makeApplication { port in portContinuation.yield(port) }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await application.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            #expect(port > 0)
            do {
                try await body { path in
                    let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
                    let response = try await client.execute(request, timeout: .seconds(60))
                    let bytes = try await response.body.collect(upTo: 4 << 20)
                    return Reply(
                        status: Int(response.status.code),
                        contentType: response.headers.first(name: "content-type") ?? "",
                        body: String(buffer: bytes))
                }
            } catch {
                tasks.cancelAll()
                try await client.shutdown()
                try await service.shutdown()
                throw error
            }
            tasks.cancelAll()
        }
        try await client.shutdown()
        try await service.shutdown()
    }

    @Test("/jobs: JSON with the jobs, one report per source and the user-facing message")
    func jobs() async throws {
        try await Self.withService { get in
            let reply = try await get("/jobs")
            #expect(reply.status == 200)
            #expect(reply.contentType.hasPrefix("application/json"))
            let jobs = try JSONDecoder().decode(JobsResponse.self, from: Data(reply.body.utf8))
            #expect(jobs.total == 6)
            #expect(jobs.sources.count == 6)
            #expect(jobs.delivered >= 3 && jobs.delivered < 6)
            #expect(!jobs.jobs.isEmpty)
            let message = try #require(jobs.message)
            #expect(message.message.contains("of 6"))
            let initech = try #require(jobs.sources.first { $0.id == "initech-rss" })
            #expect(initech.status == "failed")
            #expect(initech.category == "insecure-transport")
            let greenhouse = try #require(jobs.sources.first { $0.id == "greenhouse-acme" })
            #expect(greenhouse.status == "succeeded" && greenhouse.items == 4)
        }
    }

    @Test("/metrics: Prometheus text from the swift-metrics sink, by key, category and outcome")
    func metrics() async throws {
        try await Self.withService { get in
            _ = try await get("/jobs")
            _ = try await get("/jobs")
            let reply = try await get("/metrics")
            #expect(reply.status == 200)
            #expect(reply.contentType.hasPrefix("text/plain"))
            #expect(reply.body.contains("# TYPE resilience_attempts_total counter"))
            #expect(
                reply.body.contains(
                    #"resilience_attempts_total{key="greenhouse-acme",category="none",outcome="success"} 2"#))
            #expect(
                reply.body.contains(#"resilience_events_total{key="initech-rss",kind="insecure-transport-blocked"}"#))
            #expect(reply.body.contains("resilience_attempt_duration_seconds_bucket"))
            #expect(reply.body.contains(#"resilience_breaker_state{key="workable-soylent",state="open"} 1"#))
            #expect(reply.body.contains(#"resilience_breaker_state{key="workable-soylent",state="closed"} 0"#))
        }
    }

    @Test("/health and the status page")
    func healthAndStatusPage() async throws {
        try await Self.withService { get in
            let health = try await get("/health")
            #expect(health.status == 200)
            #expect(health.body.contains(#""status""#))
            let page = try await get("/")
            #expect(page.status == 200)
            #expect(page.contentType.hasPrefix("text/html"))
            for id in [
                "greenhouse-acme", "lever-globex", "hooli-atom", "initech-rss", "umbrella-rss", "workable-soylent",
            ] {
                #expect(page.body.contains(id))
            }
            #expect(page.body.contains("Showing jobs from"))
            let missing = try await get("/nowhere")
            #expect(missing.status == 404)
        }
    }

    @Test("events are logged through the logger the app passed in, with semantic-convention metadata")
    func logging() async throws {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in handler }
        logger.logLevel = .info
        try await Self.withService(logger: logger) { get in
            _ = try await get("/jobs")
        }
        let blocked = try #require(
            handler.entries.first { $0.message.description == "resilience insecure-transport-blocked" })
        #expect(blocked.metadata["resilience.key"] == "initech-rss")
        #expect(blocked.metadata["server.address"] == "localhost")
    }
}
