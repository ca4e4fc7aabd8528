/// One stage around an async operation: retry, breaker, limiter, timeout, fallback, hedging, telemetry.
///
/// ## Contract
/// - Call `next` zero or more times (a breaker that rejects calls it zero times; retry and hedging more than
///   once), each time with a context derived from the one given (e.g. a new `attempt`, a narrower
///   `deadline`).
/// - Never swallow cancellation: if the task is cancelled, rethrow `CancellationError` (or the operation's
///   cancellation error) and do not count it as a failure.
/// - Do the success path without allocating and without suspending except inside `next`.
/// - Emit events through ``ResilienceContext/emit(_:_:)``; never block on a sink.
/// - Describe yourself in ``stageDescription`` (name and settings) for debugging.
public protocol ResilienceStrategy: Sendable {
    /// Runs `next` under this stage's policy.
    func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output

    /// This stage's name and settings.
    var stageDescription: StageDescription { get }
}
