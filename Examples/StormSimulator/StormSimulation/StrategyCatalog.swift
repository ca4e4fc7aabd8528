import ResilienceKit

/// Every row of the report. The shipped presets are built by exactly the call a user makes.
public enum StrategyCatalog {
    /// One colour per strategy, kept across every chart.
    enum Color {
        static let noRetry = "#7f7f7f"
        static let standard = "#1f77b4"
        static let interactive = "#2ca02c"
        static let background = "#9467bd"
        static let calibration = "#d62728"
        static let tuned = "#ff7f0e"
        static let budgetOnly = "#8c564b"
        static let fullJitter = "#17becf"
        static let exponential = "#bcbd22"
        static let noBackoff = "#e377c2"
    }

    /// No retry, no breaker: one attempt per request (server-facing traffic).
    public static let noRetry = Strategy("no retry", role: .baseline, color: Color.noRetry) { _, _ in
        Pipeline { TotalDeadlineStrategy(.seconds(60)) }
    }

    /// No retry with the app-facing traffic (the baseline `.interactive` is compared with).
    public static let noRetryApp = Strategy(
        "no retry (app-facing)", role: .baseline, color: Color.noRetry, profile: .appFacing
    ) { _, _ in Pipeline { TotalDeadlineStrategy(.seconds(60)) } }

    /// No retry with the app-facing traffic and `.interactive`'s 10 s for the whole request: what that deadline
    /// alone allows after a stall, before any retry or breaker (a server that finishes the work clients gave
    /// up on keeps later requests queued behind it).
    public static let noRetryAppDeadline = Strategy(
        "no retry, 10 s deadline (app-facing)", role: .baseline, color: Color.noRetry, profile: .appFacing
    ) { _, _ in Pipeline { TotalDeadlineStrategy(.seconds(10)) } }

    /// `PipelinePreset.standard` as shipped: each client calls the keys of one host, one pipeline per key
    /// (`Pipeline.preset(.standard, clock:random:scope:)`), all sharing the host's ``PresetScope``.
    public static let standard = Strategy(
        "Pipeline.standard", role: .shipped, color: Color.standard, preset: .standard)

    /// `PipelinePreset.background` as shipped, one pipeline per key sharing the host's ``PresetScope``.
    public static let background = Strategy(
        "Pipeline.background", role: .shipped, color: Color.background, preset: .background)

    /// `PipelinePreset.interactive` as shipped, one pipeline per key sharing the host's ``PresetScope``, with
    /// app-facing traffic.
    public static let interactive = Strategy(
        "Pipeline.interactive", role: .shipped, color: Color.interactive, profile: .appFacing, preset: .interactive)

    /// The shipped presets, in report order.
    public static let shipped = [standard, background, interactive]

    /// Retry with the standard policy and the retry budget only (no breaker, no limiter): checks the budget's
    /// documented bound.
    public static let budgetOnly = Strategy("retry + budget only", role: .tuned, color: Color.budgetOnly) {
        clock, random in
        Pipeline {
            TotalDeadlineStrategy(.seconds(60))
            RetryStrategy(
                policy: StandardRetryPolicy.standard, budget: RetryBudget(.standard, clock: clock), random: random)
        }
    }

    /// The name `--preset` selects `strategy` by, or `nil` for baselines and calibrations.
    static func presetName(of strategy: Strategy) -> String? {
        switch strategy.name {
        case standard.name: "standard"
        case interactive.name: "interactive"
        case background.name: "background"
        case budgetOnly.name: "budget-only"
        case "Pipeline.standard + HedgingStrategy(100 ms)": "hedged"
        default: nil
        }
    }

    /// The seconds after a server's recovery within which a shipped preset must succeed again for ≥ 95 % of
    /// each second's requests: the interactive preset serves a person waiting at a screen, the standard one
    /// a service, the background one work that can wait.
    static func recoveryGoal(of strategy: Strategy) -> Int {
        switch strategy.name {
        case interactive.name: 10
        case background.name: 60
        default: 20
        }
    }
}
