/// The circuit-breaker stage: asks the breaker, runs the call, records how it ended.
///
/// A rejection throws ``ResilienceError`` with code ``ResilienceError/Code/circuitOpen`` and the time left
/// as `retryAfter` (the retry stage never retries it). Cancellation is recorded as
/// ``BreakerOutcome/cancelled`` so a half-open probe is always released and never counted. Transitions
/// and rejections are emitted as `breakerTransition` / `breakerRejected` events after the breaker's lock
/// is released. The success path neither allocates nor suspends outside `next`, copies no context, and
/// reads the clock at most once (not at all inside a stage that already read it, and only once more after
/// the call for breakers whose successes depend on time, such as a time-windowed failure-ratio breaker).
public struct CircuitBreakerStrategy: ResilienceStrategy {
    /// The breaker that guards the call.
    public let breaker: any BreakerPolicy
    /// Whether recording a success needs the time after the call (decided once, from the breaker).
    @usableFromInline let successNeedsTime: Bool

    /// Creates the stage.
    ///
    /// - Parameter breaker: The breaker that guards the call (share one per key).
    public init(breaker: any BreakerPolicy) {
        self.breaker = breaker
        successNeedsTime = (breaker as? any SuccessTimeAware)?.recordsSuccessWithoutTime != true
    }

    /// Admits, runs and records one call.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let now = context.clock.now()
        let permit = try admit(context, now: now)
        var succeeded = true
        // Records the success after the output went straight into the caller's return slot (a generic
        // local would cost an allocation on the task's stack when this code is not specialised).
        defer {
            if succeeded,
                let transition = breaker.record(
                    .success, for: permit, now: successInstant(admittedAt: now, clock: context.clock.now()))
            {
                Self.emit(transition, context)
            }
        }
        do {
            return try await next(context)
        } catch {
            succeeded = false
            recordFailure(error, permit: permit, context)
            throw error
        }
    }

    /// Asks the breaker; returns the permit, or throws the rejection after emitting it.
    @inlinable @inline(__always)
    func admit(_ context: ResilienceContext, now: ResilienceInstant) throws -> BreakerPermit {
        switch breaker.admit(now: now) {
        case .rejected(let retryAfter, let state):
            throw Self.rejection(retryAfter: retryAfter, state: state, context)
        case .admitted(let permit, let transition):
            if let transition { Self.emit(transition, context) }
            return permit
        }
    }

    /// The instant to record a success admitted at `admittedAt` with: that instant, unless the breaker's
    /// successes depend on time.
    @inlinable @inline(__always)
    func successInstant(
        admittedAt: ResilienceInstant, clock: @autoclosure () -> ResilienceInstant
    )
        -> ResilienceInstant
    {
        successNeedsTime ? clock() : admittedAt
    }

    /// `circuit-breaker(policy: consecutive-failures(…))`.
    public var stageDescription: StageDescription {
        StageDescription(name: "circuit-breaker", settings: [.init("policy", breaker.policyDescription)])
    }

    /// Records a failed (or cancelled) call.
    @usableFromInline
    func recordFailure(_ error: any Error, permit: BreakerPermit, _ context: ResilienceContext) {
        let classification = context.classify(error)
        let outcome: BreakerOutcome =
            classification.category == .cancelled || Task.isCancelled ? .cancelled : .failure(classification)
        if let transition = breaker.record(outcome, for: permit, now: context.clock.now()) {
            Self.emit(transition, context)
        }
    }

    /// Emits the rejection and returns the error to throw.
    @usableFromInline
    static func rejection(retryAfter: Duration, state: BreakerState, _ context: ResilienceContext) -> ResilienceError {
        context.emit(.breakerRejected) { event in
            event.duration = retryAfter
            event.detail = state.rawValue
        }
        return ResilienceError(.circuitOpen, key: context.key, retryAfter: retryAfter)
    }

    @usableFromInline
    static func emit(_ transition: BreakerTransition, _ context: ResilienceContext) {
        context.emit(.breakerTransition) { event in
            event.transition = transition
            event.duration = transition.openFor
        }
    }
}

extension ResilienceStrategy where Self == CircuitBreakerStrategy {
    /// A circuit-breaker stage around `breaker`.
    public static func circuitBreaker(_ breaker: any BreakerPolicy) -> CircuitBreakerStrategy {
        CircuitBreakerStrategy(breaker: breaker)
    }
}
