/// The per-attempt timeout stage: each call through it gets at most ``timeout``.
///
/// By default cooperative (``TimeoutMode/cooperative``): it narrows ``ResilienceContext/deadline`` and, when
/// the operation fails after that instant, reports `ResilienceError(.attemptTimedOut)` (a transient timeout,
/// retried by the retry stage) instead of whatever the operation threw; never the caller's cancellation.
/// A success that arrives late is returned. Put it inside the retry stage so each attempt gets its own limit.
public struct TimeoutStrategy: ResilienceStrategy {
    /// The limit for one attempt.
    public var timeout: Duration
    /// Cooperative (default) or enforced.
    public var mode: TimeoutMode

    /// Creates the stage.
    public init(_ timeout: Duration, mode: TimeoutMode = .cooperative) {
        self.timeout = timeout
        self.mode = mode
    }

    /// Runs `next` within ``timeout``.
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await TimeLimit(limit: timeout, mode: mode, code: .attemptTimedOut).run(context, next: next)
    }

    /// `timeout(limit: 10 seconds, mode: cooperative)`.
    public var stageDescription: StageDescription {
        StageDescription(name: "timeout", settings: [.init("limit", "\(timeout)"), .init("mode", mode.rawValue)])
    }
}
