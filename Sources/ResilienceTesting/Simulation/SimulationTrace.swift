import Synchronization

/// The events of one ``Simulation`` in the order they happened, with their virtual times.
///
/// Simulated servers record every request they receive; ``SimulationTelemetrySink`` records a pipeline's
/// telemetry; code under test can add its own with ``record(_:)``. The ``digest`` (FNV-1a over every
/// event) is kept even when the events themselves are not, so two runs can be compared cheaply: with the
/// same seed they must produce the same digest and, when recorded, the same ``text``.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public final class SimulationTrace: Sendable {
    private struct State {
        var lines: [String] = []
        var digest: UInt64 = 0xcbf2_9ce4_8422_2325
        var count = 0
    }

    private let clock: VirtualClock
    private let state = Mutex(State())
    /// Whether the trace keeps the events' text (the digest and count are kept either way).
    public let records: Bool

    /// Creates a trace stamped with `clock`'s time.
    /// - Parameters:
    ///   - clock: The clock whose time each event carries.
    ///   - records: Whether to keep the events' text.
    public init(clock: VirtualClock, records: Bool) {
        self.clock = clock
        self.records = records
    }

    /// Records one event, stamped with the current virtual time.
    public func record(_ event: @autoclosure () -> String) {
        let nanoseconds = clock.nanosecondsNow
        if records {
            let line = "\(nanoseconds) \(event())"
            state.withLock { state in
                state.digest = Self.fold(line, into: Self.fold(nanoseconds, into: state.digest))
                state.lines.append(line)
                state.count += 1
            }
        } else {
            state.withLock { state in
                state.digest = Self.fold(nanoseconds, into: state.digest)
                state.count += 1
            }
        }
    }

    /// Records one event given as numbers (cheap enough to keep in the digest of a large run).
    public func record(_ kind: UInt64, _ subject: UInt64, _ detail: UInt64) {
        let nanoseconds = clock.nanosecondsNow
        state.withLock { state in
            var digest = Self.fold(nanoseconds, into: state.digest)
            digest = Self.fold(UInt64(kind), into: digest)
            digest = Self.fold(subject, into: digest)
            state.digest = Self.fold(detail, into: digest)
            if records { state.lines.append("\(nanoseconds) #\(kind) \(subject) \(detail)") }
            state.count += 1
        }
    }

    /// The FNV-1a digest of every event so far.
    public var digest: UInt64 { state.withLock { $0.digest } }

    /// How many events were recorded.
    public var count: Int { state.withLock { $0.count } }

    /// The recorded events, one per line: `<nanoseconds> <event>` (empty unless ``records``).
    public var text: String { state.withLock { $0.lines.joined(separator: "\n") } }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(bitPattern: seconds &* 1_000_000_000 &+ attoseconds / 1_000_000_000)
    }

    private static func fold(_ value: UInt64, into digest: UInt64) -> UInt64 {
        var digest = digest
        var value = value
        for _ in 0..<8 {
            digest = (digest ^ (value & 0xff)) &* 0x100_0000_01b3
            value >>= 8
        }
        return digest
    }

    private static func fold(_ text: String, into digest: UInt64) -> UInt64 {
        var digest = digest
        for byte in text.utf8 { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return digest
    }
}

/// A `TelemetrySink` that writes a pipeline's events into a ``SimulationTrace``: kind, key, attempt and
/// detail, stamped with the simulation's time.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public struct SimulationTelemetrySink: TelemetrySink {
    /// The trace the events go to.
    public let trace: SimulationTrace

    /// Creates a sink writing into `trace`.
    ///
    /// - Parameter trace: The trace the events go to.
    public init(trace: SimulationTrace) { self.trace = trace }

    /// Always `true`.
    public var isEnabled: Bool { true }

    /// Records `event` in the trace.
    public func receive(_ event: ResilienceEvent) {
        trace.record("\(event.kind.rawValue) \(event.key) #\(event.attempt) \(event.detail ?? "")")
    }
}
