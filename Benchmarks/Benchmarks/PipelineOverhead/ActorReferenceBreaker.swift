/// The circuit breaker written the way seed 000 §1.1 sketches it: an actor with `canAttempt`,
/// `recordSuccess` and `recordFailure`. Only here as the reference the lock-based breakers are measured
/// against; every call is an actor hop.
actor ActorReferenceBreaker {
    enum State { case closed, open, halfOpen }

    private var state: State = .closed
    private var failures = 0
    private var openedAt: ContinuousClock.Instant?
    private let failureThreshold: Int
    private let openDuration: Duration
    private let clock = ContinuousClock()

    init(failureThreshold: Int = 5, openDuration: Duration = .seconds(60)) {
        self.failureThreshold = failureThreshold
        self.openDuration = openDuration
    }

    func canAttempt() -> Bool {
        switch state {
        case .closed, .halfOpen:
            return true
        case .open:
            guard let openedAt, openedAt.duration(to: clock.now) >= openDuration else { return false }
            state = .halfOpen
            return true
        }
    }

    func recordSuccess() {
        failures = 0
        state = .closed
    }

    func recordFailure() {
        failures += 1
        if failures >= failureThreshold {
            state = .open
            openedAt = clock.now
        }
    }
}
