/// How a timeout stage makes an operation stop.
public struct TimeoutMode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The identifier.
    public let rawValue: String
    /// Creates a mode.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The identifier.
    public var description: String { rawValue }

    /// The default: narrow ``ResilienceContext/deadline`` and trust the operation (transport, source) to
    /// honour it. No task, no allocation; a failure after the deadline is reported as a timeout.
    public static let cooperative = TimeoutMode(rawValue: "cooperative")
    /// Also race the operation against a sleep on the context's clock in a child task and cancel it when
    /// the time is up: for operations that ignore the deadline (but do respond to cancellation).
    /// Costs a task group per call.
    public static let enforced = TimeoutMode(rawValue: "enforced")
}
