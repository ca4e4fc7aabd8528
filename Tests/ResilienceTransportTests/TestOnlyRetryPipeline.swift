import Foundation
import ResilienceTesting
import ResilienceTransport

/// A test-only retry pipeline (the real ones live in ResiliencePolicies, built in parallel): up to
/// `maximumAttempts` attempts, each with its own deadline on the context's clock, retrying transient
/// failures that are safe to repeat, never cancellation. No backoff: tests run against FaultServer.
struct TestOnlyRetryPipeline: ResiliencePipeline {
    var maximumAttempts = 3
    var attemptTimeout: Duration? = nil
    let attempts = LockedBox(0)

    func execute<Output: Sendable>(
        _ context: ResilienceContext, _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var attempt = 1
        while true {
            var attemptContext = context
            attemptContext.attempt = attempt
            if let attemptTimeout {
                attemptContext.narrowDeadline(to: context.clock.now().advanced(by: attemptTimeout))
            }
            attempts.mutate { $0 += 1 }
            do {
                return try await operation(attemptContext)
            } catch {
                let classification = context.classify(error)
                let repeatable = context.idempotency.isSafeToRepeat || classification.requestWasNotSent
                guard attempt < maximumAttempts, classification.category != .cancelled, classification.isTransient,
                    repeatable, !Task.isCancelled
                else { throw error }
                attempt += 1
            }
        }
    }

    var stages: [StageDescription] { [] }
}
