/// Receives ``ResilienceEvent``s.
///
/// ## Contract
/// - ``receive(_:)`` is called synchronously on the hot path, from any task: it must return quickly and
///   never block on I/O or wait for a slow consumer. Buffer, drop, or hand off; never suspend.
/// - It must be safe to call concurrently.
/// - Secrets never leave a sink: redact credentials (`Authorization`, `Cookie`, tokens, `api_key`-style query
///   parameters) before storing or exporting anything.
/// - ``isEnabled`` lets emitters skip building events; return `false` when the sink would discard them.
public protocol TelemetrySink: Sendable {
    /// Takes one event.
    func receive(_ event: ResilienceEvent)

    /// Whether the sink wants events at all.
    var isEnabled: Bool { get }
}

extension TelemetrySink {
    /// Enabled by default.
    public var isEnabled: Bool { true }
}
