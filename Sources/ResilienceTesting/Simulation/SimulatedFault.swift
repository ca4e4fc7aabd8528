/// A failure mode of a ``SimulatedServer`` during a window of virtual time.
public struct SimulatedFault: Hashable, Sendable, CustomStringConvertible {
    /// What goes wrong.
    public enum Kind: Hashable, Sendable {
        /// Every request fails at once: with this status, or with a refused connection when `nil`.
        case outage(status: Int?)
        /// The server stops serving but keeps accepting: requests queue until the window ends (the
        /// trigger of a metastable failure when clients time out and retry).
        case stall
        /// Each request fails independently with probability `failureProbability`, with `status`, after
        /// being served.
        case brownout(failureProbability: Double, status: Int)
        /// Each client (told apart by the `X-Client-ID` header) may send `requestsPerSecond`; beyond that it
        /// gets `429` with `Retry-After` (whole seconds, rounded up) and is blocked for `retryAfter`. A request
        /// arriving while its client is blocked counts as early (``SimulatedServer/Statistics/earlyRequests``).
        case rateLimit(requestsPerSecond: Int, retryAfter: Duration)
        /// With probability `probability` a request's service takes `extra` longer.
        case slowResponses(probability: Double, extra: LatencyDistribution)
    }

    /// The first instant of the window (offset from the simulation's start).
    public var start: Duration
    /// The first instant after the window.
    public var end: Duration
    /// The failure mode.
    public var kind: Kind

    /// Creates a fault from `start` (inclusive) to `end` (exclusive).
    /// - Parameters:
    ///   - kind: The failure mode.
    ///   - start: When it starts, from the simulation's start.
    ///   - end: When it ends; `.seconds(Int64.max)` for never.
    public init(_ kind: Kind, from start: Duration, until end: Duration) {
        self.kind = kind
        self.start = start
        self.end = end
    }

    /// Whether the window covers `offset`.
    public func covers(_ offset: Duration) -> Bool {
        let offset = offset.attosecondCount
        return start.attosecondCount <= offset && offset < end.attosecondCount
    }

    /// `kind start…end`.
    public var description: String { "\(kind) \(start)…\(end)" }
}
