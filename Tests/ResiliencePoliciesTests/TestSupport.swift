import ResiliencePolicies
import ResilienceTesting

func failure(_ category: FailureCategory, status: Int? = nil, retryAfter: Duration? = nil) -> FailureClassification {
    FailureClassification(category: category, code: "TEST", httpStatus: status, retryAfter: retryAfter)
}

func makeContext(
    _ clock: ManualClock, sink: RecordingTelemetrySink? = nil, idempotency: Idempotency = .idempotent
) -> ResilienceContext {
    ResilienceContext(key: "test", idempotency: idempotency, telemetry: sink, clock: .manual(clock))
}

/// Advances `clock` to each next deadline until `task` finishes (for schedules with several sleeps).
func drive<T: Sendable>(_ clock: ManualClock, _ task: Task<T, any Error>, sleeps: Int) async throws -> T {
    for _ in 0..<sleeps {
        await clock.waitForSleepers(count: 1)
        clock.advanceToNextDeadline()
    }
    return try await task.value
}

extension Duration {
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }
}
