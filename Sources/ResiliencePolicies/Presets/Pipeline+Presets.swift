extension Pipeline {
    /// Builds `preset` in the default order: total deadline → retry (with budget) → circuit breaker →
    /// rate limiter → per-attempt timeout. Stages set to `nil` are left out.
    ///
    /// The budget, breaker and limiter are new instances, so build one pipeline per key (the registry's
    /// factory does). `clock` feeds the retry budget; `random` feeds jitter in the retry stage, the breaker and
    /// the limiter (seed it for reproducible schedules).
    public static func preset(
        _ preset: PipelinePreset, clock: ResilienceClock = .continuous,
        random: SharedRandomSource = SharedRandomSource()
    ) -> Pipeline {
        Pipeline {
            if let total = preset.totalDeadline { TotalDeadlineStrategy(total, mode: preset.timeoutMode) }
            if let policy = preset.retry {
                RetryStrategy(
                    policy: policy, budget: preset.retryBudget.map { RetryBudget($0, clock: clock) }, random: random,
                    maximumTotalAttempts: preset.maximumTotalAttempts)
            }
            if let breaker = preset.breaker { CircuitBreakerStrategy(breaker: breaker.makeBreaker(random: random)) }
            if let limiter = preset.limiter {
                RateLimiterStrategy(limiter: limiter.makeLimiter(random: random), waits: preset.limiterWaits)
            }
            if let attempt = preset.attemptTimeout { TimeoutStrategy(attempt, mode: preset.timeoutMode) }
        }
    }

    /// The ``PipelinePreset/standard`` pipeline, adjusted by `customize`.
    ///
    /// ```swift
    /// Pipeline.standard(clock: clock) { $0.retry = CategoryRetryPolicy.standard }
    /// ```
    public static func standard(
        clock: ResilienceClock = .continuous, random: SharedRandomSource = SharedRandomSource(),
        _ customize: (inout PipelinePreset) -> Void = { _ in }
    ) -> Pipeline {
        var settings = PipelinePreset.standard
        customize(&settings)
        return preset(settings, clock: clock, random: random)
    }

    /// The ``PipelinePreset/interactive`` pipeline, adjusted by `customize`.
    public static func interactive(
        clock: ResilienceClock = .continuous, random: SharedRandomSource = SharedRandomSource(),
        _ customize: (inout PipelinePreset) -> Void = { _ in }
    ) -> Pipeline {
        var settings = PipelinePreset.interactive
        customize(&settings)
        return preset(settings, clock: clock, random: random)
    }

    /// The ``PipelinePreset/background`` pipeline, adjusted by `customize`.
    public static func background(
        clock: ResilienceClock = .continuous, random: SharedRandomSource = SharedRandomSource(),
        _ customize: (inout PipelinePreset) -> Void = { _ in }
    ) -> Pipeline {
        var settings = PipelinePreset.background
        customize(&settings)
        return preset(settings, clock: clock, random: random)
    }
}
