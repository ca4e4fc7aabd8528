import ResilienceCore

/// Puts a slow sink (network exporter, file writer, OSLog bridge) behind a bounded buffer, so emitting never
/// waits for it.
///
/// ``receive(_:)`` appends to a bounded buffer and returns at once; when the buffer is full the oldest event
/// is dropped and counted in ``droppedCount``. A consumer task runs ``run()`` (typically for the life of the
/// app) and forwards events to the downstream sink in order.
///
/// ```swift
/// let buffered = BufferedSink(capacity: 4096, downstream: SlowNetworkSink())
/// Task.detached { await buffered.run() }
/// let sink = MultiplexingSink(recorder, buffered)
/// ```
public final class BufferedSink: TelemetrySink {
    /// The sink that receives events on the consumer task.
    public let downstream: any TelemetrySink
    /// The most events buffered.
    public let capacity: Int
    private let stream: AsyncStream<ResilienceEvent>
    private let continuation: AsyncStream<ResilienceEvent>.Continuation
    private let dropped = LockedState(initialState: 0)

    /// Creates a buffer of `capacity` events in front of `downstream`.
    ///
    /// - Parameters:
    ///   - capacity: The most events buffered. Default: `1024`.
    ///   - downstream: The sink that receives events on the consumer task.
    public init(capacity: Int = 1024, downstream: any TelemetrySink) {
        self.capacity = max(1, capacity)
        self.downstream = downstream
        (stream, continuation) = AsyncStream.makeStream(
            of: ResilienceEvent.self, bufferingPolicy: .bufferingNewest(self.capacity))
    }

    /// Buffers `event` without waiting; drops the oldest buffered event when full.
    public func receive(_ event: ResilienceEvent) {
        if case .dropped = continuation.yield(event) {
            dropped.withLock { $0 += 1 }
        }
    }

    /// Enabled when the downstream sink is.
    public var isEnabled: Bool { downstream.isEnabled }

    /// Events dropped because the buffer was full.
    public var droppedCount: Int { dropped.withLock { $0 } }

    /// Forwards buffered events to the downstream sink until ``finish()`` is called or the task is
    /// cancelled. Run it from exactly one task.
    public func run() async {
        for await event in stream {
            downstream.receive(event)
        }
    }

    /// Stops accepting events; ``run()`` returns after forwarding what is buffered.
    public func finish() {
        continuation.finish()
    }
}
