import ResilienceTelemetry
import ServiceLifecycle

/// Runs a ``BufferedSink``'s consumer as a swift-service-lifecycle `Service`, and flushes it on graceful
/// shutdown.
///
/// ``run()`` forwards buffered events to the downstream sink. On graceful shutdown the sink stops accepting
/// events (later ones are discarded and counted in `droppedCount`) and ``run()`` returns once everything
/// already buffered has been forwarded, so the downstream sink (a log file, a network exporter) sees every
/// event emitted before the shutdown began. On cancellation it stops at once.
///
/// ```swift
/// let buffered = BufferedSink(capacity: 4096, downstream: LoggingTelemetrySink(logger: logger))
/// let group = ServiceGroup(services: [BufferedSinkService(buffered), server], gracefulShutdownSignals: [.sigterm],
///                          logger: logger)
/// ```
public struct BufferedSinkService: Service {
    /// The buffered sink whose consumer this service runs.
    public let sink: BufferedSink

    /// Creates the service.
    ///
    /// - Parameter sink: The buffered sink whose consumer this service runs (run it from this service only).
    public init(_ sink: BufferedSink) {
        self.sink = sink
    }

    /// Forwards events until graceful shutdown (then flushes what is buffered) or cancellation.
    public func run() async {
        let sink = sink
        await withGracefulShutdownHandler {
            await sink.run()
        } onGracefulShutdown: {
            sink.finish()
        }
    }
}
