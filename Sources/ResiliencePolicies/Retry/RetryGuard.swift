/// The rules every retry policy in this module applies before looking at backoff.
enum RetryGuard {
    /// Why `attempt` must not be retried, or `nil` when it may be.
    ///
    /// Cancellation and circuit-open first, then non-transient failures, then the idempotency guard.
    static func stopReason(for attempt: RetryAttempt) -> RetryDecision.StopReason? {
        let failure = attempt.failure
        if failure.category == .cancelled { return .cancelled }
        if failure.category == .circuitOpen { return .circuitOpen }
        if !failure.isTransient { return .notRetryable }
        if !attempt.idempotency.isSafeToRepeat && !failure.requestWasNotSent { return .notIdempotent }
        return nil
    }
}
