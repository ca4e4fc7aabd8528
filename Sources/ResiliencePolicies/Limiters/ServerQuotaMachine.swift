/// The state machine behind ``ServerQuotaLimiter``: the last quota the server advertised, counted down by
/// the calls admitted since, until its window resets.
struct ServerQuotaMachine: Sendable {
    let configuration: ServerQuotaLimiter.Configuration
    /// Calls left in the advertised window.
    private(set) var remaining = 0
    /// When the advertised window resets; nil while no usable quota is known.
    private(set) var resetAt: ResilienceInstant?
    /// The earliest next admission while spreading calls evenly over the window.
    private var nextAdmission: ResilienceInstant?

    init(configuration: ServerQuotaLimiter.Configuration) {
        self.configuration = configuration
    }

    /// Replaces the known quota with `quota`, advertised at `now`. A quota without a reset time says nothing
    /// about when calls may resume, so it is ignored.
    mutating func observe(_ quota: ServerQuota, now: ResilienceInstant) {
        guard let resetAfter = quota.resetAfter else { return }
        remaining = quota.remaining
        resetAt = now.advanced(by: resetAfter)
        nextAdmission = nil
    }

    /// Admits a call, or says how long until the window resets (or the next evenly spread slot).
    mutating func acquire(now: ResilienceInstant) -> RateLimitDecision {
        guard let resetAt, now < resetAt else {
            self.resetAt = nil
            return .admitted(RateLimitPermit(admittedAt: now))
        }
        if remaining > 0 {
            if configuration.spreadsEvenly {
                if let nextAdmission, now < nextAdmission { return refusal(wait: now.duration(to: nextAdmission)) }
                nextAdmission = now.advanced(by: now.duration(to: resetAt) / remaining)
            }
            remaining -= 1
            return .admitted(RateLimitPermit(admittedAt: now))
        }
        return refusal(wait: now.duration(to: resetAt))
    }

    private func refusal(wait: Duration) -> RateLimitDecision {
        if let maximumWait = configuration.maximumWait, wait > maximumWait {
            return .rejected(.rateLimited, retryAfter: wait)
        }
        return .delayed(retryAfter: wait)
    }
}
