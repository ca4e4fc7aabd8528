import ResiliencePolicies
import ResilienceTesting

/// Records events for assertions.
final class RecordingSink: TelemetrySink {
    let events = LockedBox<[ResilienceEvent]>([])
    func receive(_ event: ResilienceEvent) { events.mutate { $0.append(event) } }
    var kinds: [ResilienceEventKind] { events.value.map(\.kind) }
    func events(_ kind: ResilienceEventKind) -> [ResilienceEvent] { events.value.filter { $0.kind == kind } }
}

/// A transient failure that classifies itself.
struct TestFailure: ClassifiedError, Equatable {
    var classification: FailureClassification

    static let serverError = TestFailure(
        classification: FailureClassification(category: .serverError, code: "HTTP_503", httpStatus: 503))
    static let notFound = TestFailure(
        classification: FailureClassification(category: .notFound, code: "HTTP_404", httpStatus: 404))
    static let unreachable = TestFailure(
        classification: FailureClassification(
            category: .networkUnreachable, code: .noConnection, requestWasNotSent: true))

    static func rateLimited(after hint: Duration?) -> TestFailure {
        TestFailure(
            classification: FailureClassification(
                category: .rateLimited, code: .rateLimited, httpStatus: 429, retryAfter: hint))
    }

    static func == (lhs: TestFailure, rhs: TestFailure) -> Bool { lhs.classification == rhs.classification }
}

func failure(_ category: FailureCategory, status: Int? = nil, retryAfter: Duration? = nil) -> FailureClassification {
    FailureClassification(category: category, code: "TEST", httpStatus: status, retryAfter: retryAfter)
}

func makeContext(
    _ clock: ManualClock, sink: RecordingSink? = nil, idempotency: Idempotency = .idempotent
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
