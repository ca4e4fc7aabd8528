/// The per-attempt timeout stage: each call through it gets at most ``DeadlineStrategy/timeout``.
///
/// By default cooperative (``TimeoutMode/cooperative``): it narrows ``ResilienceContext/deadline`` and, when
/// the operation fails after that instant, reports `ResilienceError(.attemptTimedOut)` (a transient timeout,
/// retried by the retry stage) instead of whatever the operation threw; never the caller's cancellation.
/// A success that arrives late is returned. Put it inside the retry stage so each attempt gets its own limit.
///
/// ```swift
/// TimeoutStrategy(.seconds(10))                     // cooperative
/// TimeoutStrategy(.seconds(10), mode: .enforced)    // also cancels an operation that overruns
/// ```
public typealias TimeoutStrategy = DeadlineStrategy<AttemptDeadline>

/// The total-deadline stage: the whole operation, every retry and wait included, gets at most
/// ``DeadlineStrategy/timeout``.
///
/// By default cooperative (``TimeoutMode/cooperative``): it narrows ``ResilienceContext/deadline`` and, when
/// the operation fails after that instant, reports `ResilienceError(.deadlineExceeded)` (not transient, so
/// never retried) instead of whatever the operation threw; never the caller's cancellation.
/// A success that arrives late is returned. Put it outermost; the retry stage never sleeps past it.
public typealias TotalDeadlineStrategy = DeadlineStrategy<OperationDeadline>

/// What a deadline stage limits: its name in ``StageDescription`` and the error code it reports when the
/// limit passes. ``AttemptDeadline`` and ``OperationDeadline`` are the two the library ships.
public protocol DeadlineScope: Sendable {
    /// The stage's name in `pipelineDescription` (`"timeout"`).
    static var stageName: String { get }
    /// The code of the `ResilienceError` reported when the limit passes.
    static var code: ResilienceError.Code { get }
}

/// One attempt: ``TimeoutStrategy``, `timeout(…)`, reporting `attemptTimedOut` (transient, retried).
public enum AttemptDeadline: DeadlineScope {
    /// `"timeout"`.
    public static var stageName: String { "timeout" }
    /// ``ResilienceError/Code/attemptTimedOut``.
    public static var code: ResilienceError.Code { .attemptTimedOut }
}

/// The whole operation: ``TotalDeadlineStrategy``, `total-deadline(…)`, reporting `deadlineExceeded` (never
/// retried).
public enum OperationDeadline: DeadlineScope {
    /// `"total-deadline"`.
    public static var stageName: String { "total-deadline" }
    /// ``ResilienceError/Code/deadlineExceeded``.
    public static var code: ResilienceError.Code { .deadlineExceeded }
}

/// A deadline stage: every call through it gets at most ``timeout``, measured from when it enters the stage.
/// Use it as ``TimeoutStrategy`` (per attempt) or ``TotalDeadlineStrategy`` (the whole operation); both run
/// through ``ResilienceDeadline``, the one deadline primitive.
public struct DeadlineStrategy<Scope: DeadlineScope>: ResilienceStrategy, DeadlineStage {
    /// The limit.
    public var timeout: Duration {
        get { deadline.limit }
        set { deadline.limit = newValue }
    }
    /// Cooperative (default) or enforced.
    public var mode: TimeoutMode {
        get { TimeoutMode(of: deadline) }
        set { deadline.isEnforced = newValue == .enforced }
    }
    @usableFromInline var deadline: ResilienceDeadline

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - timeout: The limit (for one attempt, or for the whole operation).
    ///   - mode: Cooperative (narrow the deadline, trust the operation) or enforced (also cancel it).
    public init(_ timeout: Duration, mode: TimeoutMode = .cooperative) {
        deadline = ResilienceDeadline(timeout, code: Scope.code, isEnforced: mode == .enforced)
    }

    /// Runs `next` within ``timeout``.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await runWithinDeadline(context, next)
    }

    /// `timeout(limit: 10 seconds, mode: cooperative)` or `total-deadline(…)`.
    public var stageDescription: StageDescription { describeDeadline(name: Scope.stageName) }
}

/// The steps of ``DeadlineStrategy``.
///
/// Cooperative, a deadline stage is two steps (see `StageDriver.swift`): `narrow` narrows the deadline to
/// `start + limit`, and `recover` reports a failure past that instant as the stage's timeout error. Enforced,
/// it races the operation against a timer through ``ResilienceDeadline/run(_:startingAt:_:)`` and cannot run
/// as synchronous steps.
@usableFromInline
protocol DeadlineStage: SteppedStage {
    /// The limit, its error code and whether it is enforced.
    var deadline: ResilienceDeadline { get }
}

extension DeadlineStage {
    /// Runs `next` within the deadline: through the steps when cooperative, racing a timer when enforced.
    @inlinable @inline(__always)
    func runWithinDeadline<Output: Sendable>(
        _ context: ResilienceContext, _ next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        if deadline.isEnforced { return try await deadline.run(context, next) }
        return try await StageDriver.run(self, context, next)
    }

    /// `name(limit: 10 seconds, mode: cooperative)`.
    func describeDeadline(name: String) -> StageDescription {
        StageDescription(
            name: name,
            settings: [.init("limit", "\(deadline.limit)"), .init("mode", TimeoutMode(of: deadline).rawValue)])
    }

    @inlinable var runsAsSteps: Bool { !deadline.isEnforced }
    @inlinable var narrowsContext: Bool { true }

    /// Takes nothing: the stage's work before `next` is narrowing the deadline.
    @inlinable @inline(__always)
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        nil
    }

    /// Narrows the deadline to `start + limit`.
    @inlinable @inline(__always)
    func narrow(_ context: inout ResilienceContext, from start: ResilienceInstant) {
        context.narrowDeadline(to: deadline.end(from: start))
    }

    /// Reports a failure past the deadline as the stage's timeout error (``ResilienceDeadline/translate``),
    /// with the failure's classification as the underlying one.
    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after failure: inout StageFailure, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        if let now = deadline.expiry(of: failure.error, context: context, deadline: deadline.end(from: frame.start)) {
            let underlying = failure.classification(in: context)
            failure.replace(with: deadline.timeoutError(after: underlying, context: context, at: now))
        }
        throw failure.passOn()
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

    /// The mode `deadline` runs in.
    init(of deadline: ResilienceDeadline) { self = deadline.isEnforced ? .enforced : .cooperative }

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
