import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus
import ResilienceAsyncHTTPClient
import ResilienceKit
import ResilienceLogging
import ResilienceMetrics

/// The service's settings: where it listens and where the six job boards live.
public struct JobBoardServiceConfiguration: Sendable {
    /// The address the HTTP server binds (loopback only by default).
    public var hostname: String
    /// The port; 0 picks a free one (reported by ``JobBoardService/makeApplication(onServerRunning:)``).
    public var port: Int
    /// The base URL of the boards served over HTTPS (their paths, such as `/v1/boards/acme/jobs`, are appended).
    public var boardsURL: URL
    /// The base URL of the host that serves its feed only in plaintext (`/feeds/initech.rss`); the
    /// composition root's secure-transport policy refuses it before a byte is sent.
    public var plaintextFeedsURL: URL
    /// The seed of the pipelines' jitter.
    public var seed: UInt64
    /// The most distinct source keys with a metrics label of their own.
    public var maximumMetricKeys: Int
    /// What each source stands for, by source id, shown on the status page and in `/jobs` (the fake upstreams
    /// of `--demo` describe the failure they play).
    public var sourceDescriptions: [String: String]
    /// How long a client connection may stay silent (no byte of a request arriving, or no next request on a
    /// kept-alive connection) before the server closes it. A request being answered is never cut short. Without
    /// this bound, clients that open connections and send half a request would hold a file descriptor each for
    /// ever, until the server can accept no one and open no connection upstream.
    public var idleTimeout: Duration

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - hostname: The address the HTTP server binds.
    ///   - port: The port; 0 picks a free one.
    ///   - boardsURL: The base URL of the boards served over HTTPS.
    ///   - plaintextFeedsURL: The base URL of the host that serves its feed only in plaintext.
    ///   - seed: The seed of the pipelines' jitter.
    ///   - maximumMetricKeys: The most distinct source keys with a metrics label of their own.
    ///   - sourceDescriptions: What each source stands for, by source id.
    ///   - idleTimeout: How long a client connection may stay silent before the server closes it.
    public init(
        hostname: String = "127.0.0.1", port: Int = 8080, boardsURL: URL, plaintextFeedsURL: URL, seed: UInt64 = 42,
        maximumMetricKeys: Int = 100, sourceDescriptions: [String: String] = [:], idleTimeout: Duration = .seconds(60)
    ) {
        self.hostname = hostname
        self.port = port
        self.boardsURL = boardsURL
        self.plaintextFeedsURL = plaintextFeedsURL
        self.seed = seed
        self.maximumMetricKeys = maximumMetricKeys
        self.sourceDescriptions = sourceDescriptions
        self.idleTimeout = idleTimeout
    }
}

/// Why a text cannot be a base URL of the service's upstreams (``JobBoardServiceConfiguration/upstreamURL(_:)``).
public struct UpstreamURLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the URL, for the person who gave it.
    public var description: String
}

extension JobBoardServiceConfiguration {
    /// `text` as a base URL the sources can fetch from (their paths, such as `/v1/boards/acme/jobs`, are appended
    /// to it).
    ///
    /// It must be an absolute `http` or `https` URL with a host, a port (when given) from 1 to 65535, and no query
    /// or fragment. Plaintext `http` is accepted only to a host the sources' secure-transport policy lets through
    /// (loopback: `localhost`, `127.0.0.1`, `[::1]`): the policy refuses every request to any other plaintext host.
    ///
    /// - Parameter text: The URL as given (on the command line, in a configuration file).
    /// - Returns: The URL.
    /// - Throws: ``UpstreamURLError`` saying what is wrong.
    public static func upstreamURL(_ text: String) throws(UpstreamURLError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            let host = url.host, !host.isEmpty
        else { throw UpstreamURLError(description: "\"\(text)\" is not an absolute http or https URL with a host") }
        if let port = url.port, !(1...65_535).contains(port) {
            throw UpstreamURLError(description: "the port \(port) in \"\(text)\" is not from 1 to 65535")
        }
        guard url.query == nil, url.fragment == nil else {
            throw UpstreamURLError(
                description: "\"\(text)\" has a query or a fragment: give the base URL alone (paths are appended)")
        }
        do {
            _ = try JobBoardScenario.secureTransport.secured(url)
        } catch {
            let allowed = JobBoardScenario.secureTransport.allowedInsecureHosts.sorted().joined(separator: ", ")
            throw UpstreamURLError(
                description: """
                    plaintext http to \(host) would be refused on every request (the sources reach only \(allowed) \
                    over http): use https
                    """)
        }
        return url
    }
}

/// The job board as a server: the composition root over six sources, sending through AsyncHTTPClient
/// (`AsyncHTTPClientTransport`), its events logged through the app's `Logger` and counted by swift-metrics into
/// a Prometheus registry.
///
/// Routes: `GET /jobs` (JSON: jobs, per-source reports, the user-facing message), `GET /metrics` (Prometheus
/// text: the resilience events and, once `MetricsSystem` is bootstrapped on the same registry, Hummingbird's
/// request metrics), `GET /health` (the health rules; 503 when critical), `GET /` (an HTML status page). Every
/// route runs behind Hummingbird's tracing, metrics and request-logging middleware. `/jobs` and `/` fetch through
/// ``fetchJobs()``, so concurrent page loads share one fetch; `/health` and `/metrics` send nothing upstream.
public final class JobBoardService: Sendable {
    /// The settings.
    public let configuration: JobBoardServiceConfiguration
    /// The Prometheus registry `/metrics` serves; the resilience metrics sink writes to it.
    public let registry: PrometheusCollectorRegistry
    /// The swift-metrics sink receiving every resilience event.
    public let metrics: MetricsTelemetrySink
    /// The app's logger; events are logged through it.
    public let logger: Logger
    /// The transport the sources send through (before the composition root's secure-transport policy).
    public let transport: any HTTPTransport
    let scenario: JobBoardScenario

    /// Builds the composition root over the configured upstreams.
    ///
    /// - Parameters:
    ///   - configuration: Address, upstreams, seed and bounds.
    ///   - logger: The app's logger: the service's own lines and every resilience event go through it.
    ///   - registry: The Prometheus registry `/metrics` serves. Bootstrap `MetricsSystem` with a
    ///     `PrometheusMetricsFactory` on the same registry so that Hummingbird's metrics appear beside the
    ///     resilience ones.
    ///   - transport: The HTTP transport the sources use (by default an `AsyncHTTPClientTransport` on
    ///     `HTTPClient.shared`, which needs no shutdown). The root's secure-transport policy wraps it either way.
    public init(
        configuration: JobBoardServiceConfiguration, logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        transport: any HTTPTransport = AsyncHTTPClientTransport()
    ) {
        self.configuration = configuration
        self.logger = logger
        self.registry = registry
        let metrics = MetricsTelemetrySink(
            configuration: .init(maximumKeys: configuration.maximumMetricKeys),
            factory: PrometheusMetricsFactory(registry: registry))
        self.metrics = metrics
        self.transport = transport
        scenario = JobBoardScenario(
            upstreams: JobBoardUpstreams(
                boards: configuration.boardsURL, plaintextFeeds: configuration.plaintextFeedsURL),
            seed: configuration.seed, baseTransport: transport,
            telemetry: MultiplexingSink(LoggingTelemetrySink(logger: logger), metrics), presenter: Self.presenter)
    }

    /// The message wording for a web page and its JSON: the action that lets the reader try again is reloading
    /// the page (the status page links it), not an app's pull-to-refresh gesture.
    static let presenter = DefaultErrorPresenter(refreshAction: .reloadPage)

    /// The fetch in flight, which every page load arriving while it runs shares (key ``fetchKey``).
    let fetches = SingleFlight<String>()
    /// The key of the fetch in ``fetches``: every page load asks for the same sources.
    static let fetchKey = "jobs"

    /// Fetches every source once through the composition root (which presents the result) and describes it.
    ///
    /// Concurrent calls share one fetch (the library's `SingleFlight`): the first call starts it, calls arriving
    /// while it runs wait for the same result, and each gets it or the error it threw. So a burst of page loads,
    /// or a load balancer's probes, costs the upstreams one request per source, not one per caller. A cancelled
    /// call (a client that disconnected) stops waiting and throws `CancellationError` at once; the fetch goes on
    /// for the others and is cancelled only when every caller has gone. Nothing is kept after the fetch ends: the
    /// next call fetches anew. The fetch runs in a task of its own carrying the first caller's task-local values
    /// (its trace context among them), so its client spans are children of that caller's request span.
    ///
    /// - Returns: The jobs, one report per source, and the user-facing message.
    /// - Throws: The composition root's error, or `CancellationError` when this call was cancelled.
    public func fetchJobs() async throws -> JobsResponse {
        try await fetches.run(Self.fetchKey) { [self] in try await fetchOnce() }.output
    }

    /// One fetch of every source through the composition root, described.
    private func fetchOnce() async throws -> JobsResponse {
        let outcome = try await scenario.root.fetch(SourceQuery())
        let statistics = scenario.root.statistics()
        return JobsResponse(
            outcome: outcome, breakerStates: statistics.sources.compactMapValues(\.breakerState),
            descriptions: configuration.sourceDescriptions)
    }

    /// The health rules' verdict over the recorder's window.
    public func health() -> HealthResponse { HealthResponse(scenario.root.health()) }

    /// The routes, behind Hummingbird's middleware: `TracingMiddleware` outermost (a server span per request,
    /// continuing the caller's W3C trace, so everything below runs inside it), then `MetricsMiddleware`
    /// (request count, duration and errors through swift-metrics) and `LogRequestsMiddleware` (one line per
    /// request at `requestLogLevel`). Every route also answers `HEAD` (the `GET` answer's status and headers,
    /// without the body), as load balancers' and uptime monitors' health checks send it; `POST`, `PUT`, `DELETE`
    /// and `PATCH` get 405 Method Not Allowed with `Allow: GET, HEAD`, and `OPTIONS` 204 with the methods allowed.
    ///
    /// - Parameter requestLogLevel: The level of the request-log line.
    public func makeRouter(requestLogLevel: Logger.Level = .info) -> Router<BasicRequestContext> {
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.add(middleware: TracingMiddleware())
        router.add(middleware: MetricsMiddleware())
        router.add(middleware: LogRequestsMiddleware(requestLogLevel))
        let routes: [(path: RouterPath, respond: @Sendable (Request, BasicRequestContext) async throws -> Response)] = [
            (
                "jobs",
                { request, _ in
                    try await Self.cancelledOnClientClose(request) { try Self.json(try await self.fetchJobs()) }
                }
            ),
            (
                "metrics",
                { _, _ in
                    var buffer: [UInt8] = []
                    self.registry.emit(into: &buffer)
                    return Response(
                        status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: buffer)))
                }
            ),
            (
                "health",
                { _, _ in
                    let health = self.health()
                    return try Self.json(health, status: health.status == "critical" ? .serviceUnavailable : .ok)
                }
            ),
            (
                "/",
                { request, _ in
                    try await Self.cancelledOnClientClose(request) {
                        let page = StatusPage(jobs: try await self.fetchJobs(), health: self.health()).html
                        return Response(
                            status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
                    }
                }
            ),
        ]
        for route in routes {
            router.get(route.path, use: route.respond)
            // The route exists, so another method is 405 with the methods it allows (not 404), and OPTIONS lists them.
            for method in [HTTPRequest.Method.post, .put, .delete, .patch] {
                router.on(route.path, method: method) { _, _ in
                    Response(status: .methodNotAllowed, headers: [.allow: "GET, HEAD"])
                }
            }
            router.on(route.path, method: .options) { _, _ in
                Response(status: .noContent, headers: [.allow: "GET, HEAD, OPTIONS"])
            }
        }
        return router
    }

    /// The Hummingbird application serving ``makeRouter(requestLogLevel:)`` on the configured address, closing a
    /// client connection silent for ``JobBoardServiceConfiguration/idleTimeout``. A request whose head exceeds the
    /// HTTP/1 decoder's limits (80 KiB; 1,000 header fields) is answered `414 URI Too Long` (the request line) or
    /// `431 Request Header Fields Too Large` (the header fields), and its connection closed. It is a
    /// `Service`: run it in a `ServiceGroup` (after the services it sends through, so that it stops first).
    ///
    /// - Parameters:
    ///   - requestLogLevel: The level of the request-log line.
    ///   - onServerRunning: Called with the bound port once the server listens (useful with port 0).
    public func makeApplication(
        requestLogLevel: Logger.Level = .info, onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> Application<RouterResponder<BasicRequestContext>> {
        Application(
            router: makeRouter(requestLogLevel: requestLogLevel),
            server: HeadLimitChannel.server(configuration: .init(idleTimeout: TimeAmount(configuration.idleTimeout))),
            configuration: .init(
                address: .hostname(configuration.hostname, port: configuration.port),
                serverName: "job-board-service"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Answers `request` with `respond`, cancelling it when the client closes its connection first.
    ///
    /// Hummingbird does not cancel a route handler whose client has gone: without this, a page load whose client
    /// disconnected would keep its fetch (and its retries upstream) running until the sources' deadline. Watching
    /// the connection reads it to its end, so the connection is closed once the answer is sent (the answer says
    /// `Connection: close`); a request pipelined behind this one on the same connection is not answered.
    static func cancelledOnClientClose(
        _ request: Request, _ respond: @escaping @Sendable () async throws -> Response
    ) async throws -> Response {
        var response = try await request.body.consumeWithCancellationOnInboundClose { _ in try await respond() }
        response.headers[.connection] = "close"
        return response
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(data: try encoder.encode(value))))
    }
}
