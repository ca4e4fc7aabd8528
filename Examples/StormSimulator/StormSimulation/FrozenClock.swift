/// A clock that never moves, handed to policy types that want a fallback clock.
///
/// The simulator always passes `now` explicitly, so the policies never read this clock; it exists so that
/// nothing in a simulation can reach the system clock even by accident. Sleeping on it fails at once.
public struct FrozenClock: Clock, Sendable {
    /// An instant on the frozen clock.
    public struct Instant: InstantProtocol, Hashable, Sendable {
        /// Time since the origin.
        public var offset: Duration
        /// The instant `duration` later.
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        /// The duration to `other`.
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        /// Orders instants.
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    /// Creates the clock.
    public init() {}

    /// Always the origin.
    public var now: Instant { Instant(offset: .zero) }

    /// One nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Throws `CancellationError`: nothing may wait on a frozen clock.
    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        throw CancellationError()
    }
}
