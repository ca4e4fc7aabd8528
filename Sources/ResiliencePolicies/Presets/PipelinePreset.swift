/// The settings of a ready-made pipeline in the default order: total deadline → retry (with budget) →
/// circuit breaker → server-quota pacing → rate limiter (opt-in) → per-attempt timeout.
///
/// Start from ``standard``, ``interactive`` or ``background`` and change one `var` to swap one stage's
/// policy; `nil` leaves a stage out. Build it with ``Pipeline/preset(_:clock:random:scope:)`` or the
/// `Pipeline.standard(…)` family, which create fresh stateful parts (budget, breaker, limiter) per pipeline,
/// so build one pipeline per key; give the pipelines of one host's keys one ``PresetScope`` so that they share
/// a retry budget, a breaker and the server's quota.
///
/// ```swift
/// let pipeline = Pipeline.standard(clock: clock, random: random) { $0.breaker = .failureRatio(.standard) }
/// ```
public struct PipelinePreset: Sendable {
    /// The limit for the whole operation, retries and waits included; `nil` for none.
    public var totalDeadline: Duration? = .seconds(60)
    /// The retry policy; `nil` for no retry stage.
    public var retry: (any RetryPolicy)? = StandardRetryPolicy.standard
    /// The retry budget's settings (default ``RetryBudgetConfiguration/smoothed``: 10 % of the last 30 s's
    /// failed first attempts, and one retry in reserve for a scope too quiet to judge; ``interactive`` uses
    /// ``RetryBudgetConfiguration/interactive``: the same over 20 s); `nil` for no budget. Build
    /// the pipelines of one host's keys with one ``PresetScope`` to share it.
    public var retryBudget: RetryBudgetConfiguration? = .smoothed
    /// The retry stage's hard limit on attempts, counted or not.
    public var maximumTotalAttempts = 20
    /// The circuit breaker; `nil` for no breaker stage.
    public var breaker: BreakerChoice? = .failureRatio(.outageOnly)
    /// How calls are paced by the quota the server advertises (`RateLimit`, `RateLimit-Remaining` /
    /// `RateLimit-Reset`, `X-RateLimit-*` on any response): a ``ServerQuotaStrategy`` between the breaker and
    /// the limiter, so no call is sent before the advertised reset; `nil` for no such stage. Default:
    /// ``ServerQuotaLimiter/Configuration/standard`` (waits up to 60 s, within the deadline).
    public var serverQuota: ServerQuotaLimiter.Configuration? = .standard
    /// A client-side rate limiter or bulkhead; `nil` (the default in every preset) for no limiter stage.
    ///
    /// No preset caps its own rate: a cap of its own throttles a busy key that its server would serve
    /// (Polly's standard handler, resilience4j, gRPC and the AWS SDKs ship none by default); set one to
    /// protect a dependency you know the limit of.
    public var limiter: LimiterChoice?
    /// Whether the limiter stage waits (within the deadline) for a permit instead of rejecting at once.
    public var limiterWaits = true
    /// The limit for one attempt; `nil` for none.
    public var attemptTimeout: Duration? = .seconds(30)
    /// How both time limits make the operation stop.
    public var timeoutMode: TimeoutMode = .cooperative
    /// How calls wait for the network path while the device is offline (``WaitForConnectivityStrategy``,
    /// between the retry stage and the breaker, so a call held while offline is not one the server left
    /// unanswered); `nil` never waits. Takes effect only with a
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
    /// standard retry (3 attempts, 1 s ×2, full jitter) with a budget of 10 % of the last 30 s's failed first
    /// attempts (``RetryBudgetConfiguration/smoothed``), a breaker that opens only on total failure and counts
    /// timeouts (every call of a whole 10 s window failed, at least 40 of them, or 3 went 5 s unanswered; open 500 ms
    /// ±20 % without growing, or the server's `Retry-After`; one successful probe closes it), server-quota pacing,
    /// no client-side rate cap, 30 s per attempt.
    public static var standard: PipelinePreset { PipelinePreset() }

    /// A person waiting at the screen: 10 s total, 2 attempts (250 ms ×2, at most 2 s) with a budget of 10 % of
    /// the last 20 s's failed first attempts, where a refused retry may wait up to 2 s for a later call to succeed
    /// (``RetryBudgetConfiguration/interactive``), a breaker
    /// that opens only on total failure (every call of a whole 10 s window, at least 40) or when 3 calls went 5 s
    /// unanswered, counts timeouts (a hung server trips it), stays open 500 ms ±20 % without growing and closes
    /// on one successful probe (``FailureRatioBreaker/Configuration/outageOnlyInteractive``),
    /// server-quota pacing, no client-side rate cap, and one 10 s limit per attempt: a timed-out attempt is not
    /// retried (the person's 10 s are spent), while fast failures are. Given a ``connectivity`` monitor, a
    /// call made offline waits for the network within its 10 s instead of failing.
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

    /// Background refresh: 300 s total, 6 attempts (1 s ×2, at most 300 s, full jitter) with the standard 10 % budget,
    /// the standard breaker (total failure over a whole 10 s window of at least 40 calls, timeouts count, open 500 ms
    /// ±20 %), server-quota pacing, no client-side rate cap, 60 s per attempt. Given a ``connectivity`` monitor,
    /// calls wait for the network (and out Low Data Mode) for up to 5 minutes.
    public static var background: PipelinePreset {
        var preset = PipelinePreset()
        preset.totalDeadline = .seconds(300)
        preset.retry = StandardRetryPolicy.background
        preset.breaker = .failureRatio(.outageOnlyBackground)
        preset.attemptTimeout = .seconds(60)
        preset.connectivityWait = .background
        return preset
    }
}
