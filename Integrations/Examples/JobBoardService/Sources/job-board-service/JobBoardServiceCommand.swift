import ArgumentParser
import Foundation
import Hummingbird
import JobBoardService
import Logging
import Metrics
import NIOPosix
import Prometheus
import ResilienceAsyncHTTPClient
import ResilienceTracing
import ServiceLifecycle

/// `job-board-service`: the job board as a Hummingbird 2 server (GET /, /jobs, /metrics, /health).
///
/// With `--demo` it also runs fake upstreams (a loopback FaultServer playing six failing job boards) as a
/// service of its own; otherwise it fetches from `--boards-url` and `--plaintext-feeds-url`.
@main
struct JobBoardServiceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "job-board-service",
        abstract: "The job board's composition root behind a Hummingbird 2 server.",
        discussion: """
            Routes: GET / (status page), /jobs (JSON), /metrics (Prometheus text), /health. SIGTERM or SIGINT \
            shuts it down gracefully: the server finishes its requests, then the HTTP client and the demo \
            upstreams stop, and the process exits 0. Requests still running after --shutdown-timeout are cut off \
            and the process exits 1.
            """)

    @Option(help: "The address to bind.")
    var hostname = "127.0.0.1"

    @Option(help: "The port to bind (0 picks a free one).")
    var port = 8080

    @Flag(help: "Run fake upstreams (a loopback FaultServer playing six failing job boards) and fetch from them.")
    var demo = false

    @Option(
        help: """
            The base URL of the job boards served over HTTPS (required without --demo): https, or http to \
            loopback (localhost, 127.0.0.1, [::1]); a port from 1 to 65535; no query or fragment.
            """)
    var boardsURL: String?

    @Option(
        help: """
            The base URL of the host of the Initech feed (required without --demo): https, or http to loopback \
            (localhost, 127.0.0.1, [::1]; plaintext to any other host is refused on every request); a port from 1 to 65535; no query or fragment.
            """)
    var plaintextFeedsURL: String?

    @Option(help: "The seed of the pipelines' jitter and of the demo upstreams' chaos.")
    var seed: UInt64 = 42

    @Option(
        help: "With --demo only: the probability (0 to 0.9) of a reset or a 503 on the healthy boards (default: 0.25).")
    var chaos: Double?

    @Option(
        help: """
            The longest a graceful shutdown (SIGTERM, SIGINT) waits for the requests in flight, in seconds (1 to \
            3600); then they are cut off and the process exits with status 1.
            """)
    var shutdownTimeout = 20

    @Option(help: "The log level (trace, debug, info, notice, warning, error, critical).")
    var logLevel: Logger.Level = .info

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        if let chaos {
            guard demo else { throw ValidationError("--chaos sets the demo upstreams' failures: give it with --demo") }
            guard (0...0.9).contains(chaos) else { throw ValidationError("--chaos must be from 0 to 0.9") }
        }
        guard (1...3_600).contains(shutdownTimeout) else {
            throw ValidationError("--shutdown-timeout must be from 1 to 3600 seconds")
        }
        if demo {
            guard boardsURL == nil, plaintextFeedsURL == nil else {
                throw ValidationError("--demo runs its own upstreams: leave out --boards-url and --plaintext-feeds-url")
            }
        } else {
            guard let boardsURL, let plaintextFeedsURL else {
                throw ValidationError("give --boards-url and --plaintext-feeds-url, or --demo for fake upstreams")
            }
            _ = try Self.upstreamURL(boardsURL, option: "--boards-url")
            _ = try Self.upstreamURL(plaintextFeedsURL, option: "--plaintext-feeds-url")
        }
    }

    func run() async throws {
        var logger = Logger(label: "job-board-service")
        logger.logLevel = logLevel

        // One Prometheus registry for the whole process: swift-metrics' global factory (Hummingbird's
        // MetricsMiddleware, AsyncHTTPClient …) and the resilience sink both write to it; /metrics serves it.
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        // Tracing: TracingMiddleware and TracingTransport use InstrumentationSystem's tracer, a no-op until the
        // application bootstraps one here, before anything is built (swift-otel's, for an OTLP collector).

        // Services start in this order and stop in reverse order on SIGTERM/SIGINT: the HTTP server stops
        // first (finishing the requests in flight, which still need the client and the upstreams), then the
        // HTTP client, then the demo upstreams.
        var services: [any Service] = []
        let configuration: JobBoardServiceConfiguration
        if demo {
            let upstreams = try DemoUpstreams(seed: seed, chaos: chaos ?? 0.25, logger: logger)
            services.append(upstreams)
            configuration = JobBoardServiceConfiguration(
                hostname: hostname, port: port, boardsURL: upstreams.boardsURL,
                plaintextFeedsURL: upstreams.plaintextFeedsURL, seed: seed,
                sourceDescriptions: upstreams.sourceDescriptions)
        } else {
            configuration = JobBoardServiceConfiguration(
                hostname: hostname, port: port,
                boardsURL: try Self.upstreamURL(boardsURL ?? "", option: "--boards-url"),
                plaintextFeedsURL: try Self.upstreamURL(plaintextFeedsURL ?? "", option: "--plaintext-feeds-url"),
                seed: seed)
        }
        // An HTTP client of the transport's own (its redirect rules, bounded decompression, no tracing of its
        // own), shut down by the transport's service once the server has stopped.
        let transport = AsyncHTTPClientTransport(
            configuration: .interactive, eventLoopGroup: MultiThreadedEventLoopGroup.singleton)
        services.append(transport)

        // One client span per attempt (a child of TracingMiddleware's server span), its W3C context injected
        // into the request; the transport's own client does not trace, so there is no second span.
        let service = JobBoardService(
            configuration: configuration, logger: logger, registry: registry,
            transport: TracingTransport(wrapping: transport))
        let application = service.makeApplication { [logger] port in
            logger.info("serving the job board on \(Self.serverURL(hostname: configuration.hostname, port: port))")
        }
        let server = CancellationRecorder(service: application)
        services.append(server)

        // A graceful shutdown waits for the requests in flight, at most --shutdown-timeout: a client that never
        // reads its answers (or any request that never ends) would otherwise keep the process alive for ever.
        // Then the remaining services are cancelled, the requests still in flight are cut off, and the process
        // exits with status 1, so that a supervisor can tell a forced stop from a clean one (status 0).
        var groupConfiguration = ServiceGroupConfiguration(
            services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        groupConfiguration.maximumGracefulShutdownDuration = .seconds(shutdownTimeout)
        try await ServiceGroup(configuration: groupConfiguration).run()
        if server.wasCancelled {
            logger.error(
                "shutdown outlasted --shutdown-timeout (\(shutdownTimeout) s): the requests in flight were cut off")
            throw ExitCode.failure
        }
    }

    /// The URL of the server bound to `hostname` and `port`, an IPv6 address in brackets (`http://[::1]:8080/`).
    static func serverURL(hostname: String, port: Int) -> String {
        let host = hostname.contains(":") && !hostname.hasPrefix("[") ? "[\(hostname)]" : hostname
        return "http://\(host):\(port)/"
    }

    /// `text` as an upstream base URL (``JobBoardServiceConfiguration/upstreamURL(_:)``), or a validation error
    /// naming `option` and what is wrong.
    static func upstreamURL(_ text: String, option: String) throws -> URL {
        do {
            return try JobBoardServiceConfiguration.upstreamURL(text)
        } catch {
            throw ValidationError("\(option): \(error)")
        }
    }
}

/// Runs a service and records whether the service group cancelled it. A group cancels its services when a
/// graceful shutdown outlasts its `maximumGracefulShutdownDuration` (or another service failed); for the HTTP
/// server that means the requests still in flight were cut off.
struct CancellationRecorder: Service {
    /// The service run.
    let service: any Service
    private let cancelled = Flag()

    /// Creates a recorder running `service`.
    init(service: any Service) { self.service = service }

    /// Whether the last run ended with its task cancelled.
    var wasCancelled: Bool { cancelled.value }

    /// Runs the service, noting whether its task was cancelled by the time it returned.
    func run() async throws {
        defer { if Task.isCancelled { cancelled.set() } }
        try await service.run()
    }

    /// A flag set from the service's task and read once the group has returned.
    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var isSet = false

        var value: Bool { lock.withLock { isSet } }
        func set() { lock.withLock { isSet = true } }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
