/// The server-quota stage: a rate-limiter stage around a ``ServerQuotaLimiter`` that also makes the limiter
/// the context's ``ResilienceContext/quotaObserver``, so the quotas the transport reads from responses
/// inside it reach the limiter.
///
/// Place it inside the retry stage so each attempt is paced, and give each key its own limiter.
public struct ServerQuotaStrategy: ResilienceStrategy {
    /// The limiter that learns and enforces the quota.
    public let limiter: ServerQuotaLimiter
    /// The rate-limiter stage that takes permits from it.
    public let stage: RateLimiterStrategy

    /// Creates the stage.
    /// - Parameters:
    ///   - limiter: the quota limiter (one per key).
    ///   - waits: whether to wait (within the deadline) for the quota to reset instead of refusing at once.
    ///   - holdObserver: the breaker this stage runs inside, told of each call held until the quota resets, so
    ///     its silence rule does not count that wait as the dependency's (``CallHoldObserver``). Default: `nil`.
    public init(
        limiter: ServerQuotaLimiter, waits: Bool = true, reportsHoldsTo holdObserver: (any CallHoldObserver)? = nil
    ) {
        self.limiter = limiter
        self.stage = RateLimiterStrategy(limiter: limiter, waits: waits, reportsHoldsTo: holdObserver)
    }

    /// Takes a permit, then runs `next` with the limiter observing the quotas reported inside it.
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var observed = context
        observed.quotaObserver = limiter
        return try await stage.execute(observed, next: next)
    }

    /// `server-quota(policy: server-quota(…), waits: true)`.
    public var stageDescription: StageDescription {
        StageDescription(name: "server-quota", settings: stage.stageDescription.settings)
    }
}

extension ResilienceStrategy where Self == ServerQuotaStrategy {
    /// A server-quota stage around `limiter`.
    public static func serverQuota(
        _ limiter: ServerQuotaLimiter, waits: Bool = true, reportsHoldsTo holdObserver: (any CallHoldObserver)? = nil
    ) -> ServerQuotaStrategy {
        ServerQuotaStrategy(limiter: limiter, waits: waits, reportsHoldsTo: holdObserver)
    }
}

// The stage's steps (`StageDriver.swift`): the rate-limiter stage's, with the limiter made the quota observer
// of the context the inner stages and the operation get, so a preset's chain still runs as one set of steps.
extension ServerQuotaStrategy: SteppedStage {
    @inlinable var recordSize: Int { stage.recordSize }
    @inlinable var narrowsContext: Bool { true }

    /// Takes a permit at once, or stops to wait for one.
    @inlinable
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        stage.enter(context, &frame, at: offset)
    }

    /// Releases the permit as accepted.
    @inlinable
    func exit(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) {
        stage.exit(context, &frame, at: offset)
    }

    /// The inner stages see the limiter as the quota observer.
    @inlinable
    func narrow(_ context: inout ResilienceContext, from start: ResilienceInstant) {
        context.quotaObserver = limiter
    }

    /// Waits for a permit, then runs `next` with the limiter observing quotas; leaves `context` as it found it.
    @inlinable
    func resume<Output: Sendable>(
        after stop: StageStop, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let observer = context.quotaObserver
        context.quotaObserver = limiter
        defer { context.quotaObserver = observer }
        return try await stage.resume(after: stop, &context, frame, at: offset, next: next)
    }

    /// Releases the permit with how the call failed, and passes the failure on.
    @inlinable
    func recover<Output: Sendable>(
        after failure: inout StageFailure, _ context: inout ResilienceContext, _ frame: StageFrame, at offset: Int,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await stage.recover(after: &failure, &context, frame, at: offset, next: next)
    }
}
