import ResilienceCore

/// The checks every built-in source makes before and between network calls.
enum SourceDeadline {
    /// Throws `CancellationError` when the task is cancelled, and ``ResilienceError`` `deadlineExceeded`
    /// when `context.deadline` has passed.
    static func check(_ context: ResilienceContext) throws {
        try Task.checkCancellation()
        if let remaining = context.remaining(now: context.clock.now()), remaining <= .zero {
            throw ResilienceError(.deadlineExceeded, key: context.key)
        }
    }
}
