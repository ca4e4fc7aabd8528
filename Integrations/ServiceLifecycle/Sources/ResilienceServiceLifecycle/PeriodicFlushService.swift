import ResilienceCore
import ServiceLifecycle

/// Calls a flush (an exporter writing the recorder's metrics or events somewhere) at a fixed interval, and
/// once more on graceful shutdown, as a swift-service-lifecycle `Service`.
///
/// On graceful shutdown the wait is cut short and the last flush runs, so the final interval's data is not
/// lost. On cancellation it stops at once, without a last flush.
///
/// ```swift
/// let exporter = PeriodicFlushService(every: .seconds(60)) {
///     let lines = JSONLinesExporter().render(recorder.snapshot())
///     try? await archive.append(lines)
/// }
/// ```
public struct PeriodicFlushService: Service {
    /// The time between flushes.
    public let interval: Duration
    private let clock: ResilienceClock
    private let flush: @Sendable () async -> Void

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - interval: The time between flushes (at least 1 ms).
    ///   - clock: The clock the interval is measured on.
    ///   - flush: Exports what accumulated since the last call.
    public init(
        every interval: Duration, clock: ResilienceClock = .continuous, flush: @escaping @Sendable () async -> Void
    ) {
        self.interval = max(interval, .milliseconds(1))
        self.clock = clock
        self.flush = flush
    }

    /// Flushes every ``interval`` until graceful shutdown (then flushes once more) or cancellation.
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
        if !Task.isCancelled { await flush() }
    }
}
