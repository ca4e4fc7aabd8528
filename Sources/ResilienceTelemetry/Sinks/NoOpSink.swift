import ResilienceCore

/// A sink that discards everything and tells emitters not to build events at all.
public struct NoOpSink: TelemetrySink {
    /// Creates the sink.
    public init() {}

    /// Discards `event`.
    @inlinable
    public func receive(_ event: ResilienceEvent) {}

    /// Always `false`, so emitters skip building events.
    @inlinable
    public var isEnabled: Bool { false }
}

extension TelemetrySink where Self == NoOpSink {
    /// A sink that discards everything.
    public static var noOp: NoOpSink { NoOpSink() }
}
