import Foundation
import Hummingbird
import Logging
import NIOCore
import Prometheus
import ResilienceAsyncHTTPClient
import ResilienceKit
import ResilienceLogging
import ResilienceMetrics

/// The service's settings, with defaults for a local run.
public struct JobBoardServiceConfiguration: Sendable {
    /// The address the HTTP server binds (loopback only by default).
    public var host: String = "127.0.0.1"
    /// The port; 0 picks a free one (see ``JobBoardService/makeApplication(onServerRunning:)``).
    public var port: Int = 8080
    /// The seed for the embedded server's chaos and the pipelines' jitter.
    public var seed: UInt64 = 42
    /// The probability of a reset or 503 on the healthy boards (0 = calm).
    public var chaos: Double = 0.25
    /// How long the embedded FaultServer serves.
    public var faultServerLifetime: Duration = .seconds(86_400)
    /// The most distinct source keys with a metrics label of their own.
    public var maximumMetricKeys: Int = 100

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - host: The address the HTTP server binds.
    ///   - port: The port; 0 picks a free one.
    ///   - seed: The seed for chaos and jitter.
    ///   - chaos: The probability of a reset or 503 on the healthy boards.
    ///   - faultServerLifetime: How long the embedded FaultServer serves.
    ///   - maximumMetricKeys: The most distinct source keys with a metrics label of their own.
    public init(
        host: String = "127.0.0.1", port: Int = 8080, seed: UInt64 = 42, chaos: Double = 0.25,
        faultServerLifetime: Duration = .seconds(86_400), maximumMetricKeys: Int = 100
    ) {
        self.host = host
        self.port = port
        self.seed = seed
        self.chaos = chaos
        self.faultServerLifetime = faultServerLifetime
        self.maximumMetricKeys = maximumMetricKeys
    }
}

/// The job board as a server: the composition root over six sources on an embedded `FaultServer`, sending
/// through AsyncHTTPClient (`AsyncHTTPClientTransport`), its events logged through the app's `Logger` and
/// counted by swift-metrics into a Prometheus registry.
///
/// Routes: `GET /jobs` (JSON: jobs, per-source reports, the user-facing message), `GET /metrics` (Prometheus
/// text), `GET /health` (the health rules; 503 when critical), `GET /` (an HTML status page).
public final class JobBoardService: Sendable {
    /// The settings.
    public let configuration: JobBoardServiceConfiguration
    /// The Prometheus registry the metrics sink writes to (through swift-metrics).
    public let registry: PrometheusCollectorRegistry
    /// The swift-metrics sink receiving every event.
    public let metrics: MetricsTelemetrySink
    /// The app's logger; events are logged through it.
    public let logger: Logger
    /// The transport the sources send through (before the composition root's secure-transport policy).
    public let transport: any HTTPTransport
    private let ownedTransport: AsyncHTTPClientTransport?
    let scenario: JobBoardScenario

    /// Starts the embedded FaultServer and builds the composition root.
    ///
    /// - Parameters:
    ///   - configuration: Address, seed, chaos and bounds.
    ///   - logger: The app's logger: the service's own lines and every resilience event go through it.
    ///   - transport: The HTTP transport the sources use; by default an `AsyncHTTPClientTransport` of the
    ///     service's own (shut down by ``shutdown()``). The root's secure-transport policy wraps it either way.
    public init(
        configuration: JobBoardServiceConfiguration = JobBoardServiceConfiguration(), logger: Logger,
        transport: (any HTTPTransport)? = nil
    ) throws {
        self.configuration = configuration
        self.logger = logger
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        let metrics = MetricsTelemetrySink(
            configuration: .init(maximumKeys: configuration.maximumMetricKeys),
            factory: PrometheusMetricsFactory(registry: registry))
        self.metrics = metrics
        var options = DemoOptions()
        options.seed = configuration.seed
        options.chaos = configuration.chaos
        options.serverLifetime = configuration.faultServerLifetime
        let owned = transport == nil ? AsyncHTTPClientTransport() : nil
        ownedTransport = owned
        let transport = transport ?? owned!
        self.transport = transport
        scenario = try JobBoardScenario(
            options: options, baseTransport: transport,
            telemetry: MultiplexingSink(LoggingTelemetrySink(logger: logger), metrics))
    }

    /// The embedded FaultServer's base URL (loopback).
    public var faultServerURL: URL { scenario.server.baseURL }

    /// Fetches every source once through the composition root (which presents the result) and describes it.
    public func fetchJobs() async throws -> JobsResponse {
        let outcome = try await scenario.root.fetch(SourceQuery())
        let statistics = scenario.root.statistics()
        return JobsResponse(
            outcome: outcome,
            breakerStates: statistics.sources.compactMapValues(\.breakerState),
            roles: Dictionary(uniqueKeysWithValues: scenario.roles.map { ($0.id.rawValue, $0.simulates) }))
    }

    /// The health rules' verdict over the recorder's window.
    public func health() -> HealthResponse { HealthResponse(scenario.root.health()) }

    /// The routes.
    public func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("jobs") { _, _ -> Response in
            try Self.json(try await self.fetchJobs())
        }
        router.get("metrics") { _, _ -> Response in
            var buffer: [UInt8] = []
            self.registry.emit(into: &buffer)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: buffer)))
        }
        router.get("health") { _, _ -> Response in
            let health = self.health()
            return try Self.json(health, status: health.status == "critical" ? .serviceUnavailable : .ok)
        }
        router.get("/") { _, _ -> Response in
            let page = StatusPage(jobs: try await self.fetchJobs(), health: self.health()).html
            return Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
        }
        return router
    }

    /// The Hummingbird application serving ``makeRouter()`` on the configured address.
    ///
    /// - Parameter onServerRunning: Called with the bound port once the server listens (useful with port 0).
    public func makeApplication(
        onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: makeRouter(),
            configuration: .init(
                address: .hostname(configuration.host, port: configuration.port), serverName: "job-board-service"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Stops the embedded FaultServer and shuts down the transport the service created.
    public func shutdown() async throws {
        scenario.server.stop()
        try await ownedTransport?.shutdown()
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: status, headers: [.contentType: "application/json; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(data: try encoder.encode(value))))
    }
}
