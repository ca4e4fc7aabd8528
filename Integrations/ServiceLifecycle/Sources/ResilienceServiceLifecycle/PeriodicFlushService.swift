import Logging
import ResilienceCore
import ServiceLifecycle

/// Calls a flush (an exporter writing the recorder's metrics or events somewhere) at a fixed interval, and
/// once more on graceful shutdown, as a swift-service-lifecycle `Service`.
///
/// On graceful shutdown the wait is cut short and the last flush runs, so the final interval's data is not
/// lost. The last flush is bounded by ``finalFlushTimeout``: when it runs out the flush is cancelled, so an
/// exporter whose destination stopped answering cannot hold up the service group's shutdown (which, without a
/// `maximumGracefulShutdownDuration`, would otherwise wait for ever). On cancellation it stops at once, without
/// a last flush.
///
/// ```swift
/// let exporter = PeriodicFlushService(every: .seconds(60), logger: logger) {
///     let lines = JSONLinesExporter().render(recorder.snapshot())
///     try? await archive.append(lines)
/// }
/// ```
public struct PeriodicFlushService: Service {
    /// The time between flushes.
    public let interval: Duration
    /// The longest the last flush, on graceful shutdown, may take; then it is cancelled (default 10 s, the same
    /// as ``SyncEngineService/Configuration/drainTimeout``, so the two last steps of a group's shutdown have
    /// the same bound).
    public let finalFlushTimeout: Duration
    private let clock: ResilienceClock
    private let logger: Logger?
    private let flush: @Sendable () async -> Void

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - interval: The time between flushes (at least 1 ms).
    ///   - clock: The clock the interval and the last flush's time limit are measured on.
    ///   - finalFlushTimeout: The longest the last flush may take (default 10 s); then the flush's task is
    ///     cancelled. The flush should honour cancellation: one that ignores it still holds up the return. Zero
    ///     or less skips the last flush.
    ///   - logger: Receives one line when the last flush ends (flushed, timed out, or cancelled), if given.
    ///   - flush: Exports what accumulated since the last call.
    public init(
        every interval: Duration, clock: ResilienceClock = .continuous, finalFlushTimeout: Duration = .seconds(10),
        logger: Logger? = nil, flush: @escaping @Sendable () async -> Void
    ) {
        self.interval = max(interval, .milliseconds(1))
        self.finalFlushTimeout = finalFlushTimeout
        self.clock = clock
        self.logger = logger
        self.flush = flush
    }

    /// Flushes every ``interval`` until graceful shutdown (then flushes once more, for at most
    /// ``finalFlushTimeout``) or cancellation.
    public func run() async {
        let clock = clock
        let interval = interval
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { try await clock.sleep(for: interval) }
            } catch {
                break
            }
            await flush()
        }
        guard !Task.isCancelled else { return }
        await finalFlush()
    }

    /// Runs the last flush bounded by ``finalFlushTimeout`` and logs how it ended.
    private func finalFlush() async {
        let flush = flush
        do {
            try await withDeadline(after: finalFlushTimeout, clock: clock) {
                await flush()
                // A flush the timer cancelled returns like one that finished: the check turns that into the time
                // running out.
                try Task.checkCancellation()
            }
            logger?.info("periodic flush service flushed on shutdown")
        } catch {
            if Task.isCancelled {
                // A second signal or the group's hard stop ended the flush, not the time limit.
                logger?.warning("periodic flush on shutdown cancelled; the last interval may not be exported")
            } else {
                logger?.warning(
                    "periodic flush on shutdown timed out; the last interval may not be exported",
                    metadata: ["resilience.flush.timeout": "\(finalFlushTimeout)"])
            }
        }
    }
}
