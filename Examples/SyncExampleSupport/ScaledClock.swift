import Foundation

/// A clock that runs `factor` times faster than real time, for demos: a 30 s cooldown passes in 0.3 s at
/// `factor` 100. Built on `ContinuousClock`; sleeping sleeps the scaled-down real time.
public struct ScaledClock: Clock {
    /// A point on a scaled clock: scaled time since the clock was created.
    public struct Instant: InstantProtocol, Sendable, CustomStringConvertible {
        /// Scaled time since the origin.
        public var offset: Duration
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The duration to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Orders instants.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        /// `+12.5 s`.
        public var description: String { "+\(offset)" }
    }

    /// How much faster than real time the clock runs.
    public let factor: Double
    private let origin = ContinuousClock.now

    /// Creates a clock running `factor` times faster than real time (at least 1).
    public init(factor: Double) { self.factor = max(1, factor) }

    /// The current scaled instant.
    public var now: Instant { Instant(offset: (ContinuousClock.now - origin) * factor) }

    /// One millisecond.
    public var minimumResolution: Duration { .milliseconds(1) }

    /// Sleeps until `deadline` in scaled time.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let remaining = now.duration(to: deadline)
        guard remaining > .zero else { return }
        try await Task.sleep(for: remaining / factor)
    }
}
