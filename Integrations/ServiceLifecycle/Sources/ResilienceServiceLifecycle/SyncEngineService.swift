import Logging
import ResilienceCore
import ResilienceSync
import ServiceLifecycle

/// Runs a ``SyncEngine`` as a swift-service-lifecycle `Service`: its loop for the life of the service group,
/// and one last bounded pass on graceful shutdown.
///
/// - **Running.** ``run()`` runs the engine's loop (``SyncEngine/run()``): passes after enqueues and wake-ups,
///   after cooldowns, and after failed passes with a growing delay.
/// - **Graceful shutdown** (SIGTERM in a `ServiceGroup` configured for it) stops the loop, even while it waits
///   out a retry delay, and then runs one more pass (``Configuration/drainOnShutdown``) so that what was
///   enqueued is sent before the process exits. The pass is bounded by ``Configuration/drainTimeout``; when
///   it runs out the pass is cancelled. Nothing is lost either way: a mutation leaves the durable store only
///   after the server's answer, so whatever is left is sent by the next process.
/// - **Cancellation** (the group's hard stop) stops at once, without the last pass.
///
/// ```swift
/// let engine = SyncEngine(store: store, transport: transport, requestBuilder: EventsAPI(),
///                         pipeline: Pipeline { CircuitBreakerStrategy(breaker: breaker) }, breaker: breaker)
/// let group = ServiceGroup(
///     services: [SyncEngineService(engine: engine, logger: logger), httpServer],
///     gracefulShutdownSignals: [.sigterm], logger: logger)
/// try await group.run()
/// ```
public struct SyncEngineService: Service {
    /// What happens on graceful shutdown.
    public struct Configuration: Sendable {
        /// Whether to run one last pass after the loop stops (default `true`).
        public var drainOnShutdown: Bool
        /// The longest the last pass may take (default 10 s); then it is cancelled. Zero or less leaves no time
        /// for a last pass: it is skipped, as with ``drainOnShutdown`` off.
        public var drainTimeout: Duration

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - drainOnShutdown: Whether to run one last pass after the loop stops.
        ///   - drainTimeout: The longest the last pass may take; zero or less skips it.
        public init(drainOnShutdown: Bool = true, drainTimeout: Duration = .seconds(10)) {
            self.drainOnShutdown = drainOnShutdown
            self.drainTimeout = drainTimeout
        }

        /// A last pass of at most 10 s.
        public static var standard: Configuration { Configuration() }
    }

    /// The engine.
    public let engine: SyncEngine
    /// What happens on graceful shutdown.
    public let configuration: Configuration
    private let clock: ResilienceClock
    private let logger: Logger?

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - engine: The engine to run.
    ///   - configuration: Whether and how long to drain on graceful shutdown.
    ///   - clock: The clock the drain timeout is measured on (the engine's clock).
    ///   - logger: Receives one line when the loop stops and one when the last pass ends, if given: drained
    ///     or skipped for a drain timeout of zero or less (info); or failed (a server error, a store that failed), stopped by a rate limit or a lost network,
    ///     timed out, or cancelled (warning).
    public init(
        engine: SyncEngine, configuration: Configuration = .standard, clock: ResilienceClock = .continuous,
        logger: Logger? = nil
    ) {
        self.engine = engine
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
    }

    /// Runs the engine's loop until graceful shutdown or cancellation, then (on graceful shutdown) the last
    /// pass.
    public func run() async throws {
        let engine = engine
        await cancelWhenGracefulShutdown { await engine.run() }
        guard !Task.isCancelled else { return }
        logger?.info("sync engine stopped", metadata: ["resilience.sync.state": "\(engine.state)"])
        guard configuration.drainOnShutdown else { return }
        guard configuration.drainTimeout > .zero else {
            logger?.info(
                "sync engine drain skipped: the drain timeout leaves no time for a last pass; pending mutations stay in the store",
                metadata: ["resilience.sync.timeout": "\(configuration.drainTimeout)"])
            return
        }
        let report = await drain()
        if let report {
            log(report)
        } else if Task.isCancelled {
            // A second signal or the group's hard stop ended the pass, not the drain timeout.
            logger?.warning("sync engine drain cancelled; pending mutations stay in the store")
        } else {
            logger?.warning(
                "sync engine drain timed out; pending mutations stay in the store",
                metadata: ["resilience.sync.timeout": "\(configuration.drainTimeout)"])
        }
    }

    /// Logs how a last pass that ended in time went: drained (info), or ended by a failure, a rate limit or a
    /// lost network (warning, with the engine's state), so a store that failed is never reported as drained.
    private func log(_ report: SyncReport) {
        switch report.finalState {
        case .idle, .syncing:
            logger?.info(
                "sync engine drained",
                metadata: [
                    "resilience.sync.synced": "\(report.synced)", "resilience.sync.remaining": "\(report.remaining)",
                ])
        case .error(let message):
            logger?.warning(
                "sync engine drain failed: \(message); pending mutations stay in the store",
                metadata: [
                    "resilience.sync.synced": "\(report.synced)", "resilience.sync.state": "\(report.finalState)",
                ])
        case .rateLimited, .offline:
            logger?.warning(
                "sync engine drain stopped \(report.finalState.name); pending mutations stay in the store",
                metadata: [
                    "resilience.sync.synced": "\(report.synced)", "resilience.sync.state": "\(report.finalState)",
                ])
        }
    }

    /// Runs one pass bounded by ``Configuration/drainTimeout``: its report, or `nil` when the time ran out (the
    /// pass is then cancelled) or the calling task was cancelled.
    public func drain() async -> SyncReport? {
        let engine = engine
        let clock = clock
        let timeout = configuration.drainTimeout
        // A pass the timer cancelled may still return its (partial) report: the check after it turns that into
        // the time running out, so `nil` means the drain did not finish in time.
        return try? await withDeadline(after: timeout, clock: clock) {
            let report = await engine.performSync()
            try Task.checkCancellation()
            return report
        }
    }
}
