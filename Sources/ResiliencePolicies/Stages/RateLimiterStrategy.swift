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

    /// Creates the stage.
    public init(limiter: any RateLimiter, waits: Bool = true) {
        self.limiter = limiter
        self.waits = waits
    }

    /// Acquires, runs and releases one call.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let permit: RateLimitPermit
        switch limiter.tryAcquire(now: context.clock.now()) {
        case .admitted(let admitted):
            permit = admitted
        case .delayed(let retryAfter):
            Self.emitLimited(context, retryAfter, waits ? "waiting" : "rejected")
            guard waits else { throw ResilienceError(.rateLimited, key: context.key, retryAfter: retryAfter) }
            permit = try await limiter.waitForPermit(context: context)
        case .rejected(let code, let retryAfter):
            let queues = waits && code == .bulkheadFull
            Self.emitLimited(context, retryAfter, queues ? "queued" : code.rawValue)
            guard queues else { throw ResilienceError(code, key: context.key, retryAfter: retryAfter) }
            permit = try await limiter.waitForPermit(context: context)
        }
        let output: Output
        do {
            output = try await next(context)
        } catch {
            limiter.release(permit, outcome: Self.outcome(of: error, context), now: context.clock.now())
            throw error
        }
        limiter.release(permit, outcome: .accepted, now: context.clock.now())
        return output
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
