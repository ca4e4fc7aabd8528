/// A period during which the simulated server fails a share of the requests that reach it.
public struct FaultWindow: Hashable, Sendable {
    /// When the fault starts, from the simulation's origin.
    public var start: Duration
    /// How long it lasts.
    public var duration: Duration
    /// The probability that a request arriving during the fault fails (1 for a full outage).
    public var failureProbability: Double
    /// How the requests fail.
    public var kind: FaultKind

    /// Creates a fault window.
    public init(start: Duration, duration: Duration, failureProbability: Double = 1, kind: FaultKind = .failFast) {
        self.start = start
        self.duration = duration
        self.failureProbability = failureProbability
        self.kind = kind
    }

    /// When the fault ends.
    public var end: Duration { start + duration }

    var startNanoseconds: Nanoseconds { start.nanoseconds }
    var endNanoseconds: Nanoseconds { end.nanoseconds }
}
