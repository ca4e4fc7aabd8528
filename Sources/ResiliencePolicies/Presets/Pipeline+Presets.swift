extension Pipeline {
    /// Builds `preset` in the default order: total deadline → retry (with budget) → circuit breaker →
    /// server-quota pacing → rate limiter → wait for connectivity → per-attempt timeout. Stages set to `nil`
    /// are left out (the connectivity stage also when no monitor is set). The server-quota and limiter stages
    /// report the calls they hold to the breaker (``CallHoldObserver``), whose silence rule counts a held call
    /// only from its release.
    ///
    /// The limiter is a new instance, so build one pipeline per key (the registry's factory does). The retry
    /// budget, breaker and server-quota limiter are new too, unless `scope` is given: then the pipeline uses the
    /// scope's, shared with every other pipeline built with that scope (the keys of one host). `clock` feeds the
    /// retry budget; `random` feeds jitter in the retry stage, the breaker and the limiter (seed it for
    /// reproducible schedules).
    ///
    /// - Parameters:
    ///   - preset: Which stages to build and their settings; a stage set to `nil` is left out.
    ///   - clock: The clock of the retry budget's window. Default: `.continuous`.
    ///   - random: Jitter for the retry stage, the breaker and the limiter; seed it for reproducible schedules.
    ///     Default: a new system-seeded source.
    ///   - scope: The retry budget, breaker and server-quota limiter to share with the other pipelines of the
    ///     same host (or group of keys); `nil` builds this pipeline's own from `preset`. The scope's parts are
    ///     used only for the stages `preset` has. Default: `nil`.
    public static func preset(
        _ preset: PipelinePreset, clock: ResilienceClock = .continuous,
        random: SharedRandomSource = SharedRandomSource(), scope: PresetScope? = nil
    ) -> Pipeline {
        let pipeline = built(preset, clock: clock, random: random, scope: scope)
        // The scope lives as long as a pipeline uses its parts (``PresetScopes`` holds it weakly).
        pipeline.box.keptAlive = scope
        return pipeline
    }

    /// The stages of ``preset(_:clock:random:scope:)``.
    private static func built(
        _ preset: PipelinePreset, clock: ResilienceClock, random: SharedRandomSource, scope: PresetScope?
    ) -> Pipeline {
        let budget = preset.retryBudget.map { settings in scope?.budget ?? RetryBudget(settings, clock: clock) }
        let makeBreaker = { (choice: BreakerChoice) in scope?.breaker ?? choice.makeBreaker(random: random) }
        let makeQuota = { (settings: ServerQuotaLimiter.Configuration) in
            scope?.serverQuota ?? ServerQuotaLimiter(settings)
        }
        let connectivity = preset.connectivity.flatMap { monitor in
            preset.connectivityWait.map { WaitForConnectivityStrategy(monitor: monitor, policy: $0) }
        }
        let breaker = preset.breaker.map(makeBreaker)
        // The stages inside the breaker tell it of the calls they hold, which its silence rule must not count.
        let holds = breaker as? any CallHoldObserver
        if let total = preset.totalDeadline, let policy = preset.retry, let breaker,
            let quota = preset.serverQuota, preset.limiter == nil, let attempt = preset.attemptTimeout,
            connectivity == nil
        {
            // The presets as shipped: a chain without optional wrappers, one async frame fewer per stage on
            // every call.
            return Pipeline {
                TotalDeadlineStrategy(total, mode: preset.timeoutMode)
                RetryStrategy(
                    policy: policy, budget: budget, random: random, maximumTotalAttempts: preset.maximumTotalAttempts)
                CircuitBreakerStrategy(breaker: breaker)
                ServerQuotaStrategy(limiter: makeQuota(quota), reportsHoldsTo: holds)
                TimeoutStrategy(attempt, mode: preset.timeoutMode)
            }
        }
        return Pipeline {
            if let total = preset.totalDeadline { TotalDeadlineStrategy(total, mode: preset.timeoutMode) }
            if let policy = preset.retry {
                RetryStrategy(
                    policy: policy, budget: budget, random: random, maximumTotalAttempts: preset.maximumTotalAttempts)
            }
            // Outside the breaker: a call held while the device is offline is not one the server left
            // unanswered, and must not open the breaker's silence rule.
            if let connectivity { connectivity }
            if let breaker { CircuitBreakerStrategy(breaker: breaker) }
            if let quota = preset.serverQuota { ServerQuotaStrategy(limiter: makeQuota(quota), reportsHoldsTo: holds) }
            if let limiter = preset.limiter {
                RateLimiterStrategy(
                    limiter: limiter.makeLimiter(random: random), waits: preset.limiterWaits, reportsHoldsTo: holds)
            }
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
    ///   - scope: The retry budget, breaker and server-quota limiter shared with the other pipelines of the
    ///     same host (see ``PresetScope``); `nil` builds this pipeline's own. Default: `nil`.
    ///   - customize: Adjusts a copy of the preset before the pipeline is built. Default: no change.
    public static func standard(
        clock: ResilienceClock = .continuous, random: SharedRandomSource = SharedRandomSource(),
        scope: PresetScope? = nil, _ customize: (inout PipelinePreset) -> Void = { _ in }
    ) -> Pipeline {
        customized(.standard, clock: clock, random: random, scope: scope, customize)
    }

    /// The ``PipelinePreset/interactive`` pipeline, adjusted by `customize`.
    ///
    /// - Parameters:
    ///   - clock: The clock of the retry budget's window. Default: `.continuous`.
    ///   - random: Jitter for the retry stage, the breaker and the limiter; seed it for reproducible schedules.
    ///     Default: a new system-seeded source.
    ///   - scope: The retry budget, breaker and server-quota limiter shared with the other pipelines of the
    ///     same host (see ``PresetScope``); `nil` builds this pipeline's own. Default: `nil`.
    ///   - customize: Adjusts a copy of the preset before the pipeline is built. Default: no change.
    public static func interactive(
        clock: ResilienceClock = .continuous, random: SharedRandomSource = SharedRandomSource(),
        scope: PresetScope? = nil, _ customize: (inout PipelinePreset) -> Void = { _ in }
    ) -> Pipeline {
        customized(.interactive, clock: clock, random: random, scope: scope, customize)
    }

    /// The ``PipelinePreset/background`` pipeline, adjusted by `customize`.
    ///
    /// - Parameters:
    ///   - clock: The clock of the retry budget's window. Default: `.continuous`.
    ///   - random: Jitter for the retry stage, the breaker and the limiter; seed it for reproducible schedules.
    ///     Default: a new system-seeded source.
    ///   - scope: The retry budget, breaker and server-quota limiter shared with the other pipelines of the
    ///     same host (see ``PresetScope``); `nil` builds this pipeline's own. Default: `nil`.
    ///   - customize: Adjusts a copy of the preset before the pipeline is built. Default: no change.
    public static func background(
        clock: ResilienceClock = .continuous, random: SharedRandomSource = SharedRandomSource(),
        scope: PresetScope? = nil, _ customize: (inout PipelinePreset) -> Void = { _ in }
    ) -> Pipeline {
        customized(.background, clock: clock, random: random, scope: scope, customize)
    }

    private static func customized(
        _ base: PipelinePreset, clock: ResilienceClock, random: SharedRandomSource, scope: PresetScope?,
        _ customize: (inout PipelinePreset) -> Void
    ) -> Pipeline {
        var settings = base
        customize(&settings)
        return preset(settings, clock: clock, random: random, scope: scope)
    }
}
