extension Pipeline {
    /// Builds `preset` in the default order: total deadline → retry (with budget) → circuit breaker →
    /// server-quota pacing → rate limiter → wait for connectivity → per-attempt timeout. Stages set to `nil`
    /// are left out (the connectivity stage also when no monitor is set).
    ///
    /// The budget, breaker, quota limiter and limiter are new instances, so build one pipeline per key (the
    /// registry's factory does). `clock` feeds the retry budget; `random` feeds jitter in the retry stage, the
    /// breaker and the limiter (seed it for reproducible schedules).
    ///
    /// - Parameters:
    ///   - preset: Which stages to build and their settings; a stage set to `nil` is left out.
    ///   - clock: The clock of the retry budget's window. Default: `.continuous`.
    ///   - random: Jitter for the retry stage, the breaker and the limiter; seed it for reproducible schedules.
    ///     Default: a new system-seeded source.
    public static func preset(
        _ preset: PipelinePreset, clock: ResilienceClock = .continuous,
        random: SharedRandomSource = SharedRandomSource()
    ) -> Pipeline {
        let connectivity = preset.connectivity.flatMap { monitor in
            preset.connectivityWait.map { WaitForConnectivityStrategy(monitor: monitor, policy: $0) }
        }
        if let total = preset.totalDeadline, let policy = preset.retry, let breaker = preset.breaker,
            let quota = preset.serverQuota, preset.limiter == nil, let attempt = preset.attemptTimeout,
            connectivity == nil
        {
            // The presets as shipped: a chain without optional wrappers, one async frame fewer per stage on
            // every call.
            return Pipeline {
                TotalDeadlineStrategy(total, mode: preset.timeoutMode)
                RetryStrategy(
                    policy: policy, budget: preset.retryBudget.map { RetryBudget($0, clock: clock) }, random: random,
                    maximumTotalAttempts: preset.maximumTotalAttempts)
                CircuitBreakerStrategy(breaker: breaker.makeBreaker(random: random))
                ServerQuotaStrategy(limiter: ServerQuotaLimiter(quota))
                TimeoutStrategy(attempt, mode: preset.timeoutMode)
            }
        }
        return Pipeline {
            if let total = preset.totalDeadline { TotalDeadlineStrategy(total, mode: preset.timeoutMode) }
            if let policy = preset.retry {
                RetryStrategy(
                    policy: policy, budget: preset.retryBudget.map { RetryBudget($0, clock: clock) }, random: random,
                    maximumTotalAttempts: preset.maximumTotalAttempts)
            }
            if let breaker = preset.breaker { CircuitBreakerStrategy(breaker: breaker.makeBreaker(random: random)) }
            if let quota = preset.serverQuota { ServerQuotaStrategy(limiter: ServerQuotaLimiter(quota)) }
            if let limiter = preset.limiter {
                RateLimiterStrategy(limiter: limiter.makeLimiter(random: random), waits: preset.limiterWaits)
            }
            if let connectivity { connectivity }
            if let attempt = preset.attemptTimeout { TimeoutStrategy(attempt, mode: preset.timeoutMode) }
        }
    }

    /// The ``PipelinePreset/standard`` pipeline, adjusted by `customize`.
    ///
    /// ```swift
    /// Pipeline.standard(clock: clock) { $0.retry = CategoryRetryPolicy.standard }
    /// ```
    ///
    /// - Parameters:
    ///   - clock: The clock of the retry budget's window. Default: `.continuous`.
    ///   - random: Jitter for the retry stage, the breaker and the limiter; seed it for reproducible schedules.
    ///     Default: a new system-seeded source.
    ///   - customize: Adjusts a copy of the preset before the pipeline is built. Default: no change.
    public static func standard(
        clock: ResilienceClock = .continuous, random: SharedRandomSource = SharedRandomSource(),
        _ customize: (inout PipelinePreset) -> Void = { _ in }
    ) -> Pipeline {
        customized(.standard, clock: clock, random: random, customize)
    }

    /// The ``PipelinePreset/interactive`` pipeline, adjusted by `customize`.
    ///
    /// - Parameters:
    ///   - clock: The clock of the retry budget's window. Default: `.continuous`.
    ///   - random: Jitter for the retry stage, the breaker and the limiter; seed it for reproducible schedules.
    ///     Default: a new system-seeded source.
    ///   - customize: Adjusts a copy of the preset before the pipeline is built. Default: no change.
    public static func interactive(
        clock: ResilienceClock = .continuous, random: SharedRandomSource = SharedRandomSource(),
        _ customize: (inout PipelinePreset) -> Void = { _ in }
    ) -> Pipeline {
        customized(.interactive, clock: clock, random: random, customize)
    }

    /// The ``PipelinePreset/background`` pipeline, adjusted by `customize`.
    ///
    /// - Parameters:
    ///   - clock: The clock of the retry budget's window. Default: `.continuous`.
    ///   - random: Jitter for the retry stage, the breaker and the limiter; seed it for reproducible schedules.
    ///     Default: a new system-seeded source.
    ///   - customize: Adjusts a copy of the preset before the pipeline is built. Default: no change.
    public static func background(
        clock: ResilienceClock = .continuous, random: SharedRandomSource = SharedRandomSource(),
        _ customize: (inout PipelinePreset) -> Void = { _ in }
    ) -> Pipeline {
        customized(.background, clock: clock, random: random, customize)
    }

    private static func customized(
        _ base: PipelinePreset, clock: ResilienceClock, random: SharedRandomSource,
        _ customize: (inout PipelinePreset) -> Void
    ) -> Pipeline {
        var settings = base
        customize(&settings)
        return preset(settings, clock: clock, random: random)
    }
}
