/// The retry stage's counters across the attempts of one execution.
@usableFromInline
struct RetryLoop: Sendable {
    @usableFromInline let start: ResilienceInstant
    @usableFromInline var countedAttempt = 1
    @usableFromInline var previousDelay: Duration?
    @usableFromInline var totalAttempts = 1

    @usableFromInline
    init(start: ResilienceInstant) {
        self.start = start
    }
}
