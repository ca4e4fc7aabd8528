import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import InMemoryLogging
import Logging
import Metrics
import NIOCore
import Prometheus
import ResilienceAsyncHTTPClient
import Testing

@testable import JobBoardService

/// The service through HummingbirdTesting: `.router` sends requests straight to the router (middleware
/// included), `.live` runs the server on a free 127.0.0.1 port. Its sources fetch, through the AsyncHTTPClient
/// transport, from the demo upstreams (a loopback FaultServer) started by the test. Real sockets and real time,
/// generous bounds.
@Suite("JobBoardService", .serialized)
struct JobBoardServiceTests {
    static let silent = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// The registry swift-metrics' global factory writes to in this test process (bootstrapped once: a
    /// process can bootstrap `MetricsSystem` only once).
    static let bootstrappedRegistry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()

    /// Starts calm demo upstreams and a transport with a client of its own, builds the service on them, runs
    /// `body`, and stops both.
    @discardableResult
    static func withService<T>(
        logger: Logger = silent, registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        idleTimeout: Duration = .seconds(60), _ body: (JobBoardService) async throws -> T
    ) async throws -> T {
        let upstreams = try DemoUpstreams(chaos: 0, lifetime: .seconds(120), logger: silent)
        let transport = AsyncHTTPClientTransport(
            configuration: .standard, eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let service = JobBoardService(
            configuration: JobBoardServiceConfiguration(
                port: 0, boardsURL: upstreams.boardsURL, plaintextFeedsURL: upstreams.plaintextFeedsURL,
                sourceDescriptions: upstreams.sourceDescriptions, idleTimeout: idleTimeout),
            logger: logger, registry: registry, transport: transport)
        do {
            let result = try await body(service)
            upstreams.stop()
            try await transport.shutdown()
            return result
        } catch {
            upstreams.stop()
            try await transport.shutdown()
            throw error
        }
    }

    @Test("GET /jobs: JSON with the jobs, one report per source and the user-facing message")
    func jobs() async throws {
        try await Self.withService { service in
            try await service.makeApplication().test(.router) { client in
                try await client.execute(uri: "/jobs", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                    let jobs = try JSONDecoder().decode(
                        JobsResponse.self, from: Data(String(buffer: response.body).utf8))
                    #expect(jobs.total == 6)
                    #expect(jobs.sources.count == 6)
                    #expect(jobs.delivered >= 3 && jobs.delivered < 6)
                    #expect(!jobs.jobs.isEmpty)
                    let message = try #require(jobs.message)
                    #expect(message.message.contains("of 6"))
                    let initech = try #require(jobs.sources.first { $0.id == "initech-rss" })
                    #expect(initech.status == "failed")
                    #expect(initech.category == "insecure-transport")
                    #expect(initech.simulates?.contains("plaintext") == true)
                    let greenhouse = try #require(jobs.sources.first { $0.id == "greenhouse-acme" })
                    #expect(greenhouse.status == "succeeded" && greenhouse.items == 4)
                }
            }
        }
    }

    @Test("GET /metrics: Prometheus text from the resilience sink, by key, category and outcome")
    func resilienceMetrics() async throws {
        try await Self.withService { service in
            try await service.makeApplication().test(.router) { client in
                try await client.execute(uri: "/jobs", method: .get)
                try await client.execute(uri: "/jobs", method: .get)
                try await client.execute(uri: "/metrics", method: .get) { response in
                    let body = String(buffer: response.body)
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
                    #expect(body.contains("# TYPE resilience_attempts_total counter"))
                    #expect(
                        body.contains(
                            #"resilience_attempts_total{key="greenhouse-acme",category="none",outcome="success"} 2"#))
                    #expect(
                        body.contains(#"resilience_events_total{key="initech-rss",kind="insecure-transport-blocked"}"#))
                    #expect(body.contains("resilience_attempt_duration_seconds_bucket"))
                    #expect(body.contains(#"resilience_breaker_state{key="workable-soylent",state="open"} 1"#))
                    #expect(body.contains(#"resilience_breaker_state{key="workable-soylent",state="closed"} 0"#))
                }
            }
        }
    }

    @Test("GET /health, the status page and an unknown path")
    func healthAndStatusPage() async throws {
        try await Self.withService { service in
            try await service.makeApplication().test(.router) { client in
                try await client.execute(uri: "/health", method: .get) { response in
                    #expect(response.status == .ok)
                    #expect(String(buffer: response.body).contains(#""status""#))
                }
                try await client.execute(uri: "/", method: .get) { response in
                    let page = String(buffer: response.body)
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
                    for id in [
                        "greenhouse-acme", "lever-globex", "hooli-atom", "initech-rss", "umbrella-rss",
                        "workable-soylent",
                    ] {
                        #expect(page.contains(id))
                    }
                    #expect(page.contains("Showing jobs from"))
                    #expect(page.contains(#"<a href="https://"#))  // the fixtures' postings link out over https
                }
                try await client.execute(uri: "/nowhere", method: .get) { response in
                    #expect(response.status == .notFound)
                }
            }
        }
    }

    @Test("HEAD on every route answers like GET without a body (load balancers and uptime checks send HEAD)")
    func head() async throws {
        try await Self.withService { service in
            try await service.makeApplication().test(.router) { client in
                try await client.execute(uri: "/health", method: .head) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType]?.hasPrefix("application/json") == true)
                    #expect(response.body.readableBytes == 0)
                }
                try await client.execute(uri: "/metrics", method: .head) { response in
                    #expect(response.status == .ok)
                    #expect(response.body.readableBytes == 0)
                }
                try await client.execute(uri: "/", method: .head) { response in
                    #expect(response.status == .ok)
                    #expect(response.headers[.contentType]?.hasPrefix("text/html") == true)
                    #expect(response.body.readableBytes == 0)
                }
                try await client.execute(uri: "/nowhere", method: .head) { response in
                    #expect(response.status == .notFound)
                }
            }
        }
    }

    @Test("Another method on a route: 405 with Allow (OPTIONS: 204 with Allow), not 404 as if it did not exist")
    func otherMethods() async throws {
        try await Self.withService { service in
            try await service.makeApplication().test(.router) { client in
                for uri in ["/", "/jobs", "/metrics", "/health"] {
                    for method in [HTTPRequest.Method.post, .put, .delete, .patch] {
                        try await client.execute(uri: uri, method: method) { response in
                            #expect(response.status == .methodNotAllowed, "\(method) \(uri)")
                            #expect(response.headers[.allow] == "GET, HEAD", "\(method) \(uri)")
                        }
                    }
                    try await client.execute(uri: uri, method: .options) { response in
                        #expect(response.status == .noContent, "OPTIONS \(uri)")
                        #expect(response.headers[.allow] == "GET, HEAD, OPTIONS", "OPTIONS \(uri)")
                    }
                }
                try await client.execute(uri: "/nowhere", method: .post) { response in
                    #expect(response.status == .notFound)
                }
            }
        }
    }

    @Test("A client that sends half a request and goes silent is disconnected after the idle timeout")
    func silentClientIsDisconnected() async throws {
        try await Self.withService(idleTimeout: .seconds(1)) { service in
            try await service.makeApplication().test(.live) { client in
                // A well-behaved request on the same server is answered.
                try await client.execute(uri: "/health", method: .get) { response in
                    #expect(response.status == .ok)
                }
                let port = try #require(client.port)
                let closed = try await Task.detached {
                    try SilentClient.sendHalfARequestAndWaitForClose(port: port, bound: .seconds(20))
                }.value
                #expect(closed, "the connection was still open after 20 s")
            }
        }
    }

    @Test("Requests and resilience events are logged through the app's logger, with their metadata")
    func logging() async throws {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in handler }
        logger.logLevel = .info
        try await Self.withService(logger: logger) { service in
            try await service.makeApplication().test(.router) { client in
                try await client.execute(uri: "/jobs", method: .get)
            }
        }
        let blocked = try #require(
            handler.entries.first { $0.message.description == "resilience insecure-transport-blocked" })
        #expect(blocked.metadata["resilience.key"] == "initech-rss")
        #expect(blocked.metadata["server.address"]?.description == DemoBoards.plaintextHost)
        // LogRequestsMiddleware's line for the request.
        #expect(handler.entries.contains { $0.metadata["hb.request.path"]?.description == "/jobs" })
    }

    @Test("Live on a socket: Hummingbird's request metrics land in the same registry as the resilience metrics")
    func liveWithRequestMetrics() async throws {
        let registry = Self.bootstrappedRegistry
        try await Self.withService(registry: registry) { service in
            try await service.makeApplication().test(.live) { client in
                try await client.execute(uri: "/jobs", method: .get) { response in
                    #expect(response.status == .ok)
                    // A page route watches its connection for the client's close, so it closes it after answering.
                    #expect(response.headers[.connection] == "close")
                }
                // The test client does not reconnect after `Connection: close`; AsyncHTTPClient does.
                // MetricsMiddleware records a request after its last byte is written, so a scrape sent the moment
                // the response arrived can come before the record: scrape until it is there, or 10 s have passed.
                let port = try #require(client.port)
                let deadline = ContinuousClock.now + .seconds(10)
                var body = ""
                repeat {
                    if !body.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
                    let metrics = try await HTTPClient.shared.execute(
                        HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(30))
                    #expect(metrics.status == .ok)
                    body = String(buffer: try await metrics.body.collect(upTo: 4 << 20))
                } while !body.contains(#"hb_requests{http_route="/jobs""#) && ContinuousClock.now < deadline
                #expect(body.contains("resilience_attempts_total"))
                // MetricsMiddleware's request counter and duration histogram, labelled by route.
                #expect(body.contains(#"hb_requests{http_route="/jobs""#), "\(body.prefix(3000))")
                #expect(body.contains("http_server_request_duration"), "\(body.prefix(3000))")
            }
        }
    }
}
