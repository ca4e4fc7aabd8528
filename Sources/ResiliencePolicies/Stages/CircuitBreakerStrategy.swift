/// The circuit-breaker stage: asks the breaker, runs the call, records how it ended.
///
/// A rejection throws ``ResilienceError`` with code ``ResilienceError/Code/circuitOpen`` and the time left
/// as `retryAfter` (the retry stage never retries it). Cancellation is recorded as
/// ``BreakerOutcome/cancelled`` so a half-open probe is always released and never counted. Transitions
/// and rejections are emitted as `breakerTransition` / `breakerRejected` events after the breaker's lock
/// is released. The success path neither allocates nor suspends outside `next`.
public struct CircuitBreakerStrategy: ResilienceStrategy {
    /// The breaker that guards the call.
    public let breaker: any BreakerPolicy

    /// Creates the stage.
    public init(breaker: any BreakerPolicy) {
        self.breaker = breaker
    }

    /// Admits, runs and records one call.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let permit: BreakerPermit
        switch breaker.admit(now: context.clock.now()) {
        case .rejected(let retryAfter, let state):
            context.emit(.breakerRejected) { event in
                event.duration = retryAfter
                event.detail = state.rawValue
            }
            throw ResilienceError(.circuitOpen, key: context.key, retryAfter: retryAfter)
        case .admitted(let admitted, let transition):
            permit = admitted
            if let transition { Self.emit(transition, context) }
        }
        let output: Output
        do {
            output = try await next(context)
        } catch {
            let classification = context.classify(error)
            let outcome: BreakerOutcome =
                classification.category == .cancelled || Task.isCancelled ? .cancelled : .failure(classification)
            if let transition = breaker.record(outcome, for: permit, now: context.clock.now()) {
                Self.emit(transition, context)
            }
            throw error
        }
        if let transition = breaker.record(.success, for: permit, now: context.clock.now()) {
            Self.emit(transition, context)
        }
        return output
    }

    /// `circuit-breaker(policy: consecutive-failures(…))`.
    public var stageDescription: StageDescription {
        StageDescription(name: "circuit-breaker", settings: [.init("policy", breaker.policyDescription)])
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
