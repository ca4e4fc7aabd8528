/// The rate-limiter stage: takes a permit, runs the call, releases the permit with how the call ended.
///
/// The fast path is the limiter's synchronous ``RateLimiter/tryAcquire(now:)``. When the limiter says
/// "later" (a token bucket's `delayed`, a bulkhead's queueable `bulkheadFull`) and `waits` is true, the
/// stage waits through ``RateLimiter/waitForPermit(context:)``, which honours the context's deadline;
/// otherwise it throws ``ResilienceError`` at once. Every delay or rejection is emitted as a
/// `rateLimited` event. The permit is released exactly once, whatever happens to the call.
public struct RateLimiterStrategy: ResilienceStrategy {
    /// The limiter.
    public let limiter: any RateLimiter
    /// Whether to wait (within the deadline) for a permit instead of rejecting at once.
    public let waits: Bool
    /// Whether releasing an accepted call needs the time after the call (decided once, from the limiter).
    @usableFromInline let releaseNeedsTime: Bool

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - limiter: The limiter (share one per key).
    ///   - waits: Whether to wait, within the deadline, for a permit instead of rejecting at once.
    public init(limiter: any RateLimiter, waits: Bool = true) {
        self.limiter = limiter
        self.waits = waits
        releaseNeedsTime = (limiter as? any SuccessTimeAware)?.recordsSuccessWithoutTime != true
    }

    /// Acquires, runs and releases one call.
    ///
    /// The success path copies no context and reads the clock once (and once more after the call only for
    /// limiters that learn from time).
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let now = context.clock.now()
        let decision = limiter.tryAcquire(now: now)
        if case .admitted(let permit) = decision {
            return try await run(next, context, permit: permit, admittedAt: now)
        }
        return try await run(next, context, permit: try await waitForPermit(after: decision, context), admittedAt: nil)
    }

    /// Runs `next` under `permit` and releases it with how the call ended; `admittedAt` is the instant the
    /// permit was granted at when nothing suspended since it was read.
    @inlinable @inline(__always)
    func run<Output: Sendable>(
        _ next: (ResilienceContext) async throws -> Output, _ context: ResilienceContext,
        permit: RateLimitPermit, admittedAt: ResilienceInstant?
    ) async throws -> Output {
        var succeeded = true
        // Releases after the output went straight into the caller's return slot (see the breaker stage).
        defer {
            if succeeded {
                limiter.release(permit, outcome: .accepted, now: releaseInstant(admittedAt, clock: context.clock.now()))
            }
        }
        do {
            return try await next(context)
        } catch {
            succeeded = false
            releaseFailed(permit, error, context)
            throw error
        }
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

    /// Releases the permit of a call that failed with `error`.
    @usableFromInline
    func releaseFailed(_ permit: RateLimitPermit, _ error: any Error, _ context: ResilienceContext) {
        limiter.release(permit, outcome: Self.outcome(of: error, context), now: context.clock.now())
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
            Self.emitLimited(context, retryAfter, waits ? "waiting" : "rejected")
            guard waits else { throw ResilienceError(.rateLimited, key: context.key, retryAfter: retryAfter) }
            return try await limiter.waitForPermit(context: context)
        case .rejected(let code, let retryAfter):
            let queues = waits && code == .bulkheadFull
            Self.emitLimited(context, retryAfter, queues ? "queued" : code.rawValue)
            guard queues else { throw ResilienceError(code, key: context.key, retryAfter: retryAfter) }
            return try await limiter.waitForPermit(context: context)
        }
    }

    /// `rate-limiter(policy: token-bucket(…), waits: true)`.
    public var stageDescription: StageDescription {
        StageDescription(
            name: "rate-limiter",
            settings: [.init("policy", limiter.policyDescription), .init("waits", String(waits))])
    }

    /// How a failed call counts for limiters that learn: overload answers are backend rejections; local
    /// rejections and cancellation are abandoned; anything else the backend handled is an accept.
    @usableFromInline
    static func outcome(of error: any Error, _ context: ResilienceContext) -> RateLimitOutcome {
        let classification = context.classify(error)
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

    @usableFromInline
    static func emitLimited(_ context: ResilienceContext, _ retryAfter: Duration?, _ detail: String) {
        context.emit(.rateLimited) { event in
            event.duration = retryAfter
            event.detail = detail
        }
    }
}

extension ResilienceStrategy where Self == RateLimiterStrategy {
    /// A rate-limiter stage around `limiter`.
    public static func rateLimiter(_ limiter: any RateLimiter, waits: Bool = true) -> RateLimiterStrategy {
        RateLimiterStrategy(limiter: limiter, waits: waits)
    }
}
