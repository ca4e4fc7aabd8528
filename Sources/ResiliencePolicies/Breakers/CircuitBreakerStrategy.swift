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
        successNeedsTime = needsTimeAfterSuccess(type(of: breaker))
    }

    /// Asks the breaker; returns the permit, or throws the rejection after emitting it.
    @inlinable @inline(__always)
    func admit(_ context: ResilienceContext, now: ResilienceInstant) throws -> BreakerPermit {
        switch breaker.admit(now: now) {
        case .rejected(let retryAfter, let state):
            throw Self.rejection(retryAfter: retryAfter, state: state, context)
        case .admitted(let permit, let transition):
            guard let transition else { return permit }
            Self.emit(transition, context)
            // A breaker that opened on this admission (its waiting calls went unanswered) admits nothing.
            guard transition.to == .open else { return permit }
            throw Self.rejection(retryAfter: transition.openFor ?? .zero, state: .open, context)
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
        StageDescription(
            name: StageDescription.circuitBreakerName, settings: [.init("policy", breaker.policyDescription)])
    }

    /// Records a failed (or cancelled) call.
    @usableFromInline
    func recordFailure(_ failure: inout StageFailure, permit: BreakerPermit, _ context: ResilienceContext) {
        let classification = failure.classification(in: context)
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

// The stage's steps (`StageDriver.swift`): `enter` asks the breaker and keeps the permit (or stops with the
// rejection), `exit` records the success, `recover` records the failure and rethrows it.
extension CircuitBreakerStrategy: SteppedStage {
    @inlinable var recordSize: Int { MemoryLayout<BreakerPermit>.stride }

    /// Asks the breaker; keeps the permit, or stops with the rejection.
    @inlinable @inline(__always)
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        do {
            frame.store(try admit(context, now: frame.start), at: offset)
            return nil
        } catch {
            return StageStop(.failed(error))
        }
    }

    /// Records the success.
    @inlinable @inline(__always)
    func exit(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) {
        let permit = frame.load(BreakerPermit.self, at: offset)
        let now = successInstant(admittedAt: frame.start, clock: frame.endInstant(context.clock))
        if let transition = breaker.record(.success, for: permit, now: now) { Self.emit(transition, context) }
    }

    /// Records the failure (or cancellation) and passes it on.
    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after failure: inout StageFailure, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        recordFailure(&failure, permit: frame.load(BreakerPermit.self, at: offset), context)
        throw failure.passOn()
    }
}

/// Whether recording a success with a breaker or limiter of type `policy` needs the clock's reading after the
/// call. It does not for the breakers and limiters of this module where the instant passed to
/// `record(.success, …)` or `release(_:outcome:now:)` with `.accepted` cannot change the result (the stage then
/// passes the instant the call was admitted at):
/// - ``ConsecutiveFailureBreaker``: a success only resets counters or closes a half-open breaker;
/// - ``RateLimitBreaker``: a success only resets the 429 counter and the multiplier;
/// - ``TokenBucketLimiter``: tokens are not returned, and an accepted release only resets the exhaustion
///   backoff;
/// - ``ServerQuotaLimiter``: a release only counts the call out of flight (the quota counts calls when they
///   are admitted).
///
/// All four are final classes, so the exact type decides: comparing metadata costs a few instructions, where
/// a cast to a protocol looks the conformance up at run time (about 2,600 instructions, twice per pipeline
/// built, which made up 5 % of the storm simulator's throughput run).
func needsTimeAfterSuccess(_ policy: Any.Type) -> Bool {
    policy != ConsecutiveFailureBreaker.self && policy != RateLimitBreaker.self && policy != TokenBucketLimiter.self
        && policy != ServerQuotaLimiter.self
}

extension ResilienceStrategy where Self == CircuitBreakerStrategy {
    /// A circuit-breaker stage around `breaker`.
    public static func circuitBreaker(_ breaker: any BreakerPolicy) -> CircuitBreakerStrategy {
        CircuitBreakerStrategy(breaker: breaker)
    }
}
