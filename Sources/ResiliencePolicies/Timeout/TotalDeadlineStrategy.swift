/// The total-deadline stage: the whole operation, every retry and wait included, gets at most ``timeout``.
///
/// By default cooperative (``TimeoutMode/cooperative``): it narrows ``ResilienceContext/deadline`` and, when
/// the operation fails after that instant, reports `ResilienceError(.deadlineExceeded)` (not transient, so
/// never retried) instead of whatever the operation threw; never the caller's cancellation.
/// A success that arrives late is returned. Put it outermost; the retry stage never sleeps past it.
public struct TotalDeadlineStrategy: ResilienceStrategy {
    /// The limit for the whole operation.
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
        try await TimeLimit(limit: timeout, mode: mode, code: .deadlineExceeded).run(context, next: next)
    }

    /// `total-deadline(limit: 10 seconds, mode: cooperative)`.
    public var stageDescription: StageDescription {
        StageDescription(
            name: "total-deadline", settings: [.init("limit", "\(timeout)"), .init("mode", mode.rawValue)])
    }
}
