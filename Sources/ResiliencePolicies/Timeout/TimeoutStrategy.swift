/// The per-attempt timeout stage: each call through it gets at most ``timeout``.
///
/// By default cooperative (``TimeoutMode/cooperative``): it narrows ``ResilienceContext/deadline`` and, when
/// the operation fails after that instant, reports `ResilienceError(.attemptTimedOut)` (a transient timeout,
/// retried by the retry stage) instead of whatever the operation threw; never the caller's cancellation.
/// A success that arrives late is returned. Put it inside the retry stage so each attempt gets its own limit.
/// Both timeout stages run through ``ResilienceDeadline``, the one deadline primitive.
public struct TimeoutStrategy: ResilienceStrategy {
    /// The limit for one attempt.
    public var timeout: Duration {
        get { deadline.limit }
        set { deadline.limit = newValue }
    }
    /// Cooperative (default) or enforced.
    public var mode: TimeoutMode {
        get { deadline.isEnforced ? .enforced : .cooperative }
        set { deadline.isEnforced = newValue == .enforced }
    }
    @usableFromInline var deadline: ResilienceDeadline

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - timeout: The limit for one attempt.
    ///   - mode: Cooperative (narrow the deadline, trust the operation) or enforced (also cancel it).
    public init(_ timeout: Duration, mode: TimeoutMode = .cooperative) {
        deadline = ResilienceDeadline(timeout, code: .attemptTimedOut, isEnforced: mode == .enforced)
    }

    /// Runs `next` within ``timeout``.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await deadline.run(context, next)
    }

    /// `timeout(limit: 10 seconds, mode: cooperative)`.
    public var stageDescription: StageDescription {
        StageDescription(name: "timeout", settings: [.init("limit", "\(timeout)"), .init("mode", mode.rawValue)])
    }
}

/// The total-deadline stage: the whole operation, every retry and wait included, gets at most ``timeout``.
///
/// By default cooperative (``TimeoutMode/cooperative``): it narrows ``ResilienceContext/deadline`` and, when
/// the operation fails after that instant, reports `ResilienceError(.deadlineExceeded)` (not transient, so
/// never retried) instead of whatever the operation threw; never the caller's cancellation.
/// A success that arrives late is returned. Put it outermost; the retry stage never sleeps past it.
public struct TotalDeadlineStrategy: ResilienceStrategy {
    /// The limit for the whole operation.
    public var timeout: Duration {
        get { deadline.limit }
        set { deadline.limit = newValue }
    }
    /// Cooperative (default) or enforced.
    public var mode: TimeoutMode {
        get { deadline.isEnforced ? .enforced : .cooperative }
        set { deadline.isEnforced = newValue == .enforced }
    }
    @usableFromInline var deadline: ResilienceDeadline

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - timeout: The limit for the whole operation.
    ///   - mode: Cooperative (narrow the deadline, trust the operation) or enforced (also cancel it).
    public init(_ timeout: Duration, mode: TimeoutMode = .cooperative) {
        deadline = ResilienceDeadline(timeout, code: .deadlineExceeded, isEnforced: mode == .enforced)
    }

    /// Runs `next` within ``timeout``.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await deadline.run(context, next)
    }

    /// `total-deadline(limit: 10 seconds, mode: cooperative)`.
    public var stageDescription: StageDescription {
        StageDescription(
            name: "total-deadline", settings: [.init("limit", "\(timeout)"), .init("mode", mode.rawValue)])
    }
}

/// How a timeout stage makes an operation stop.
public struct TimeoutMode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    private enum Mode: String {
        case cooperative, enforced
    }

    private let mode: Mode

    /// The identifier (`"cooperative"`, `"enforced"`).
    public var rawValue: String { mode.rawValue }

    /// The mode named `rawValue`, or `nil` for a name this version does not know.
    ///
    /// - Parameter rawValue: `"cooperative"` or `"enforced"`.
    public init?(rawValue: String) {
        guard let mode = Mode(rawValue: rawValue) else { return nil }
        self.mode = mode
    }

    private init(_ mode: Mode) { self.mode = mode }

    /// The identifier.
    public var description: String { rawValue }

    /// The default: narrow ``ResilienceContext/deadline`` and trust the operation (transport, source) to
    /// honour it. No task, no allocation; a failure after the deadline is reported as a timeout.
    public static let cooperative = TimeoutMode(.cooperative)
    /// Also race the operation against a sleep on the context's clock in a child task and cancel it when
    /// the time is up: for operations that ignore the deadline (but do respond to cancellation).
    /// Costs a task group per call.
    public static let enforced = TimeoutMode(.enforced)
}
