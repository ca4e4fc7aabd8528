import ResilienceCore

/// Puts a slow sink (network exporter, file writer, OSLog bridge) behind a bounded buffer, so emitting never
/// waits for it.
///
/// ``receive(_:)`` appends to a bounded buffer and returns at once; when the buffer is full the oldest event
/// is dropped and counted in ``droppedCount``. A consumer task runs ``run()`` (typically for the life of the
/// app) and forwards events to the downstream sink in order. Once the buffer is closed (``finish()``, or the
/// consumer's task cancelled) later events are discarded, and counted in ``droppedCount`` too.
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
    /// Whether a ``run()`` is forwarding.
    private let consuming = LockedState(initialState: false)

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

    /// Buffers `event` without waiting; drops the oldest buffered event when full, and discards `event` once
    /// the buffer is closed (both counted in ``droppedCount``).
    public func receive(_ event: ResilienceEvent) {
        switch continuation.yield(event) {
        case .enqueued: break
        case .dropped, .terminated: dropped.withLock { $0 += 1 }
        @unknown default: dropped.withLock { $0 += 1 }
        }
    }

    /// Enabled when the downstream sink is.
    public var isEnabled: Bool { downstream.isEnabled }

    /// Events lost: dropped because the buffer was full, or received after it was closed (``finish()``, or
    /// ``run()``'s task cancelled).
    public var droppedCount: Int { dropped.withLock { $0 } }

    /// Forwards buffered events to the downstream sink until ``finish()`` is called or the task is
    /// cancelled.
    ///
    /// One task forwards, so events reach the downstream sink in order: a `run()` called while another is
    /// forwarding returns at once (a `ServiceGroup` running two services on one buffer then sees one of them end).
    public func run() async {
        let forwards = consuming.withLock { running in
            guard !running else { return false }
            running = true
            return true
        }
        guard forwards else { return }
        defer { consuming.withLock { $0 = false } }
        for await event in stream {
            downstream.receive(event)
        }
    }

    /// Stops accepting events (later ones are discarded and counted in ``droppedCount``); ``run()`` returns
    /// after forwarding what is buffered.
    public func finish() {
        continuation.finish()
    }
}
