/// The settings of a ready-made pipeline in the default order: total deadline → retry (with budget) →
/// circuit breaker → rate limiter → per-attempt timeout.
///
/// Start from ``standard``, ``interactive`` or ``background`` and change one `var` to swap one stage's
/// policy; `nil` leaves a stage out. Build it with ``Pipeline/preset(_:clock:random:)`` or the
/// `Pipeline.standard(…)` family, which create fresh stateful parts (budget, breaker, limiter) per pipeline,
/// so build one pipeline per key.
///
/// ```swift
/// let pipeline = Pipeline.standard(clock: clock, random: random) { $0.breaker = .failureRatio(.standard) }
/// ```
public struct PipelinePreset: Sendable {
    /// The limit for the whole operation, retries and waits included; `nil` for none.
    public var totalDeadline: Duration? = .seconds(60)
    /// The retry policy; `nil` for no retry stage.
    public var retry: (any RetryPolicy)? = StandardRetryPolicy.standard
    /// The retry budget's settings (default ``RetryBudgetConfiguration/smoothed``: 10 % plus 1/s over 30 s;
    /// ``interactive`` uses ``RetryBudgetConfiguration/interactive``); `nil` for no budget.
    public var retryBudget: RetryBudgetConfiguration? = .smoothed
    /// The retry stage's hard limit on attempts, counted or not.
    public var maximumTotalAttempts = 20
    /// The circuit breaker; `nil` for no breaker stage.
    public var breaker: BreakerChoice? = .failureRatio(.outageOnly)
    /// The rate limiter or bulkhead; `nil` for no limiter stage.
    public var limiter: LimiterChoice? = .tokenBucket(.standard)
    /// Whether the limiter stage waits (within the deadline) for a permit instead of rejecting at once.
    public var limiterWaits = true
    /// The limit for one attempt; `nil` for none.
    public var attemptTimeout: Duration? = .seconds(30)
    /// How both time limits make the operation stop.
    public var timeoutMode: TimeoutMode = .cooperative
    /// How calls wait for the network path while the device is offline (``WaitForConnectivityStrategy``,
    /// between the limiter and the attempt timeout); `nil` never waits. Takes effect only with a
    /// ``connectivity`` monitor. Default: `nil` (``interactive``: ``ConnectivityWaitPolicy/standard``;
    /// ``background``: ``ConnectivityWaitPolicy/background``).
    public var connectivityWait: ConnectivityWaitPolicy?
    /// Where the network path comes from (`PathMonitorConnectivity` on Apple platforms,
    /// `NetlinkConnectivityMonitor` on Linux, both in ResilienceTransport); `nil` (the default): no
    /// wait-for-connectivity stage. Share one monitor per process.
    public var connectivity: (any ConnectivityMonitor)?

    /// Creates the standard preset; adjust the `var`s as needed.
    public init() {}

    /// General use (a 30 s request and 60 s resource limit, as URLSession's defaults suggest): 60 s total,
    /// standard retry (3 attempts, 1 s ×2, ±20 %) with a 10 % budget over 30 s, a breaker that opens only near total
    /// failure (≥ 90 % of ≥ 20 calls in 10 s fail; open 5 s doubling up to 60 s, or the server's
    /// `Retry-After`), a token bucket (10 burst, 10/s: headroom over a few requests per second, their retries
    /// and hedges), 30 s per attempt.
    public static var standard: PipelinePreset { PipelinePreset() }

    /// A person waiting at the screen: 10 s total, 2 attempts (250 ms ×2, at most 2 s) with a budget of 45 % of
    /// the last 2 minutes' requests plus one retry a minute (``RetryBudgetConfiguration/interactive``), a breaker
    /// that opens only near total failure, judges from 6 calls, does not count timeouts, stays open 4–5 s and
    /// closes on one successful probe (``FailureRatioBreaker/Configuration/outageOnlyInteractive``), a token
    /// bucket (10 burst, 10/s), and one 10 s limit per attempt: a timed-out attempt is not retried (the person's
    /// 10 s are spent), while fast failures are. Given a ``connectivity`` monitor, a call made offline waits
    /// for the network within its 10 s instead of failing.
    public static var interactive: PipelinePreset {
        var preset = PipelinePreset()
        preset.totalDeadline = .seconds(10)
        preset.retry = StandardRetryPolicy.interactive
        preset.retryBudget = .interactive
        preset.breaker = .failureRatio(.outageOnlyInteractive)
        preset.attemptTimeout = .seconds(10)
        preset.connectivityWait = .standard
        return preset
    }

    /// Background refresh: 300 s total, 6 attempts (2 s ×2, at most 300 s), a breaker that opens only near
    /// total failure (open 10 s doubling up to 120 s), a token bucket (10 burst, 10/s) that backs off while
    /// exhausted, 60 s per attempt. Given a ``connectivity`` monitor, calls wait for the network (and out
    /// Low Data Mode) for up to 5 minutes.
    public static var background: PipelinePreset {
        var preset = PipelinePreset()
        preset.totalDeadline = .seconds(300)
        preset.retry = StandardRetryPolicy.background
        preset.breaker = .failureRatio(.outageOnlyBackground)
        preset.limiter = .tokenBucket(.backingOff)
        preset.attemptTimeout = .seconds(60)
        preset.connectivityWait = .background
        return preset
    }
}
