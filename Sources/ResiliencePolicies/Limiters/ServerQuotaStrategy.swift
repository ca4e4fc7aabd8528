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
    public init(limiter: ServerQuotaLimiter, waits: Bool = true) {
        self.limiter = limiter
        self.stage = RateLimiterStrategy(limiter: limiter, waits: waits)
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
    public static func serverQuota(_ limiter: ServerQuotaLimiter, waits: Bool = true) -> ServerQuotaStrategy {
        ServerQuotaStrategy(limiter: limiter, waits: waits)
    }
}
