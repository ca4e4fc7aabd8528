import ResilienceCore

/// Forwards every event to several sinks, in order; disabled sinks are skipped.
///
/// Each downstream sink must honour the ``TelemetrySink`` contract (return quickly, never block): the
/// multiplexer adds no buffering of its own, so one slow sink would slow the others down. Put slow consumers
/// behind a ``TelemetryRecorder`` and export its snapshots instead.
public struct MultiplexingSink: TelemetrySink {
    /// The sinks, in delivery order.
    public let sinks: [any TelemetrySink]

    /// Creates a multiplexer over `sinks`.
    ///
    /// - Parameter sinks: The sinks, in delivery order.
    public init(_ sinks: [any TelemetrySink]) {
        self.sinks = sinks
    }

    /// Creates a multiplexer over `sinks`.
    ///
    /// - Parameter sinks: The sinks, in delivery order.
    public init(_ sinks: any TelemetrySink...) {
        self.sinks = sinks
    }

    /// Forwards `event` to every enabled sink.
    public func receive(_ event: ResilienceEvent) {
        for sink in sinks where sink.isEnabled {
            sink.receive(event)
        }
    }

    /// True when at least one sink is enabled.
    public var isEnabled: Bool {
        sinks.contains { $0.isEnabled }
    }
}
