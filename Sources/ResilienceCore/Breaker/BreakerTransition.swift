/// A change of a breaker's state, returned by the breaker so the caller can emit telemetry outside the lock.
public struct BreakerTransition: Hashable, Sendable, CustomStringConvertible {
    /// The state before.
    public var from: BreakerState
    /// The state after.
    public var to: BreakerState
    /// How long the breaker will stay open, when `to` is ``BreakerState/open``.
    public var openFor: Duration?

    /// Creates a transition.
    public init(from: BreakerState, to: BreakerState, openFor: Duration? = nil) {
        self.from = from
        self.to = to
        self.openFor = openFor
    }

    /// `closed → open (30 s)`.
    public var description: String {
        var text = "\(from) → \(to)"
        if let openFor { text += " (\(openFor))" }
        return text
    }
}
