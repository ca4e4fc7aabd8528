/// The rate-limiter stage: takes a permit, runs the call, releases the permit with how the call ended.
///
/// The common path is the limiter's synchronous ``RateLimiter/tryAcquire(now:priority:)``, asked with the
/// call's ``ResilienceContext/priority`` (a bulkhead refuses sheddable calls first). When the limiter says
/// "later" (a token bucket's `delayed`, a bulkhead's queueable `bulkheadFull`) and `waits` is true, the
/// stage waits through ``RateLimiter/waitForPermit(context:)``, which honours the context's deadline;
/// otherwise it throws ``ResilienceError`` at once. Every delay or rejection is emitted as a
/// `rateLimited` event, and a wait that ends in a refusal (a full queue, a turn after the deadline) as a second
/// one with the refusal's code. The permit is released exactly once, whatever happens to the call.
public struct RateLimiterStrategy: ResilienceStrategy {
    /// The limiter.
    public let limiter: any RateLimiter
    /// Whether to wait (within the deadline) for a permit instead of rejecting at once.
    public let waits: Bool
    /// The breaker outside this stage that learns of the calls it holds while they wait for a permit (see
    /// ``CallHoldObserver``); `nil` tells no one.
    public let holdObserver: (any CallHoldObserver)?
    /// Whether releasing an accepted call needs the time after the call (decided once, from the limiter).
    @usableFromInline let releaseNeedsTime: Bool

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - limiter: The limiter (share one per key).
    ///   - waits: Whether to wait, within the deadline, for a permit instead of rejecting at once.
    ///   - holdObserver: The breaker this stage runs inside, told of each call held while it waits for a
    ///     permit, so its silence rule does not count that wait as the dependency's. Default: `nil`.
    public init(
        limiter: any RateLimiter, waits: Bool = true, reportsHoldsTo holdObserver: (any CallHoldObserver)? = nil
    ) {
        self.limiter = limiter
        self.waits = waits
        self.holdObserver = holdObserver
        releaseNeedsTime = needsTimeAfterSuccess(type(of: limiter))
    }

    /// Releases the permit of a call that returned; `admittedAt` is the instant the permit was granted at
    /// when nothing suspended since it was read.
    @inlinable @inline(__always)
    func releaseAccepted(
        _ permit: RateLimitPermit, admittedAt: ResilienceInstant?, _ context: ResilienceContext,
        now: @autoclosure () -> ResilienceInstant
    ) {
        limiter.release(permit, outcome: .accepted, now: releaseInstant(admittedAt, clock: now()))
    }

    /// The instant to release an accepted call's permit at: `admittedAt` (the instant it was admitted, if
    /// no wait came between) unless the limiter needs fresh time.
    @inlinable @inline(__always)
    func releaseInstant(
        _ admittedAt: ResilienceInstant?, clock: @autoclosure () -> ResilienceInstant
    )
        -> ResilienceInstant
    {
        if releaseNeedsTime { return clock() }
        return admittedAt ?? clock()
    }

    /// Releases the permit of a call that failed with `error`; a limiter that paces by the server's quota
    /// (a ``ServerQuotaObserver``) also learns the wait of a rate-limit answer (`429` with `Retry-After`): the
    /// server spoke for every call of the key, not only for the one it answered.
    @usableFromInline
    func releaseFailed(_ permit: RateLimitPermit, _ failure: inout StageFailure, _ context: ResilienceContext) {
        let classification = failure.classification(in: context)
        let now = context.clock.now()
        limiter.release(permit, outcome: Self.outcome(of: classification), now: now)
        guard classification.category == .rateLimited, !classification.requestWasNotSent,
            let wait = classification.retryAfter, wait > .zero, let observer = limiter as? any ServerQuotaObserver
        else { return }
        observer.observe(ServerQuota(remaining: 0, resetAfter: wait), now: now)
    }

    /// The slow path after `tryAcquire` said "later" or "no": waits through the limiter when allowed, or
    /// throws the rejection. Emits `rateLimited` either way.
    @usableFromInline
    func waitForPermit(
        after decision: RateLimitDecision, _ context: ResilienceContext
    ) async throws
        -> RateLimitPermit
    {
        switch decision {
        case .admitted(let permit):
            return permit
        case .delayed(let retryAfter):
            Self.emitLimited(context, retryAfter, waits ? ResilienceEvent.limiterWaiting : "rejected")
            guard waits else { throw ResilienceError(.rateLimited, key: context.key, retryAfter: retryAfter) }
            return try await Self.waitReportingRefusal(context, holdObserver: holdObserver) {
                try await limiter.waitForPermit(context: context)
            }
        case .rejected(let code, let retryAfter):
            let queues = waits && code == .bulkheadFull
            Self.emitLimited(context, retryAfter, queues ? ResilienceEvent.limiterQueued : code.rawValue)
            guard queues else { throw ResilienceError(code, key: context.key, retryAfter: retryAfter) }
            return try await Self.waitReportingRefusal(context, holdObserver: holdObserver) {
                try await limiter.waitForPermit(context: context)
            }
        }
    }

    /// `rate-limiter(policy: token-bucket(…), waits: true)`.
    public var stageDescription: StageDescription {
        StageDescription(
            name: "rate-limiter",
            settings: [.init("policy", limiter.policyDescription), .init("waits", String(waits))])
    }

    /// How a failed call classified as `classification` counts for limiters that learn: overload answers are
    /// backend rejections; local rejections and cancellation are abandoned; anything else the backend handled is
    /// an accept.
    @usableFromInline
    static func outcome(of classification: FailureClassification) -> RateLimitOutcome {
        if Task.isCancelled || classification.category == .cancelled || classification.requestWasNotSent {
            return .abandoned
        }
        switch classification.category {
        case .rateLimited, .serverError, .timeout, .transient:
            return .rejectedByBackend
        case .networkUnreachable, .circuitOpen, .throttled, .insecureTransport, .unknown:
            return .abandoned
        default:
            return .accepted
        }
    }

    /// Waits for a permit through `wait`, telling `holdObserver` of the hold. A refusal that ends the wait (a full
    /// queue, a turn after the deadline, a waiter displaced or timed out) is emitted as a `rateLimited` event
    /// with its code: the event that announced the wait rejected nothing, and this one is the rejection.
    @usableFromInline
    static func waitReportingRefusal(
        _ context: ResilienceContext, holdObserver: (any CallHoldObserver)?,
        _ wait: () async throws -> RateLimitPermit
    ) async throws -> RateLimitPermit {
        do {
            return try await reportingHold(to: holdObserver, context, wait)
        } catch let refusal as ResilienceError {
            emitLimited(context, refusal.retryAfter, refusal.code.rawValue)
            throw refusal
        }
    }

    @usableFromInline
    static func emitLimited(_ context: ResilienceContext, _ retryAfter: Duration?, _ detail: String) {
        context.emit(.rateLimited) { event in
            event.duration = retryAfter
            event.detail = detail
        }
    }
}

/// A built-in stage that holds one limiter permit for the call: ``RateLimiterStrategy`` and
/// ``AdaptiveConcurrencyStage``. Its `enter` takes the permit at once or stops with the limiter's decision; the
/// steps here release it exactly once: as accepted in `exit`, with how the call failed in `recover`, and in
/// `resume` after waiting for it (`StageDriver.swift`).
@usableFromInline
protocol PermitStage: SteppedStage {
    /// The slow path after `enter` found no permit: waits for one when the stage waits, or throws the
    /// rejection. Emits `rateLimited` either way.
    func waitForPermit(
        after decision: RateLimitDecision, _ context: ResilienceContext
    ) async throws
        -> RateLimitPermit

    /// Releases the permit of a call that returned; `admittedAt` is the instant it was granted at when nothing
    /// suspended since that instant was read (`nil` after a wait), and `now` reads the instant the call
    /// returned at, if the release needs it.
    func releaseAccepted(
        _ permit: RateLimitPermit, admittedAt: ResilienceInstant?, _ context: ResilienceContext,
        now: @autoclosure () -> ResilienceInstant)

    /// Releases the permit of a call that failed with `failure`.
    func releaseFailed(_ permit: RateLimitPermit, _ failure: inout StageFailure, _ context: ResilienceContext)
}

extension PermitStage {
    @inlinable var recordSize: Int { MemoryLayout<RateLimitPermit>.stride }

    /// Releases the permit as accepted.
    @inlinable @inline(__always)
    func exit(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) {
        releaseAccepted(
            frame.load(RateLimitPermit.self, at: offset), admittedAt: frame.start, context,
            now: frame.endInstant(context.clock))
    }

    /// Waits for a permit (or throws the rejection), then runs `next` once under it and releases it once.
    @inlinable
    func resume<Output: Sendable>(
        after stop: StageStop, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard case .mustWait(let decision) = stop.reason else { throw stop.failure(key: context.key) }
        let permit = try await waitForPermit(after: decision, context)
        var succeeded = true
        // Releases after the output went straight into the caller's return slot.
        defer { if succeeded { releaseAccepted(permit, admittedAt: nil, context, now: context.clock.now()) } }
        do {
            return try await next(context)
        } catch {
            succeeded = false
            var failure = StageFailure(error)
            releaseFailed(permit, &failure, context)
            throw error
        }
    }

    /// Releases the permit with how the call failed, and passes the failure on.
    @inlinable @inline(__always)
    func recover<Output: Sendable>(
        after failure: inout StageFailure, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        releaseFailed(frame.load(RateLimitPermit.self, at: offset), &failure, context)
        throw failure.passOn()
    }
}

// The stage's steps (`StageDriver.swift`): `enter` takes a permit at once or stops to wait for one; the
// permit's release in `exit`, `recover` and `resume` is `PermitStage`'s.
extension RateLimiterStrategy: PermitStage {
    /// Takes a permit at once, or stops to wait for one.
    @inlinable @inline(__always)
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        let decision = limiter.tryAcquire(now: frame.start, priority: context.priority)
        guard case .admitted(let permit) = decision else { return StageStop(.mustWait(decision)) }
        frame.store(permit, at: offset)
        return nil
    }
}

extension ResilienceStrategy where Self == RateLimiterStrategy {
    /// A rate-limiter stage around `limiter`.
    public static func rateLimiter(
        _ limiter: any RateLimiter, waits: Bool = true, reportsHoldsTo holdObserver: (any CallHoldObserver)? = nil
    ) -> RateLimiterStrategy {
        RateLimiterStrategy(limiter: limiter, waits: waits, reportsHoldsTo: holdObserver)
    }
}
