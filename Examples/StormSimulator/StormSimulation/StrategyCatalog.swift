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

    /// `Pipeline.standard(clock:random:)`, as shipped.
    public static let standard = Strategy("Pipeline.standard", role: .shipped, color: Color.standard) {
        clock, random in Pipeline.standard(clock: clock, random: random)
    }

    /// `Pipeline.background(clock:random:)`, as shipped.
    public static let background = Strategy("Pipeline.background", role: .shipped, color: Color.background) {
        clock, random in Pipeline.background(clock: clock, random: random)
    }

    /// `Pipeline.interactive(clock:random:)`, as shipped, with app-facing traffic.
    public static let interactive = Strategy(
        "Pipeline.interactive", role: .shipped, color: Color.interactive, profile: .appFacing
    ) { clock, random in Pipeline.interactive(clock: clock, random: random) }

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

    /// The most a shipped preset may multiply the offered load during a full outage, for clients offering `rate`
    /// requests/s each: 1.10× where the pipeline sees ≥ 1 request/s (enough calls for its breaker to judge
    /// within seconds), 1.5× below, where only the retry budget bounds it.
    static func outageLoadGoal(ratePerClient rate: Double) -> Double { rate >= 1 ? 1.10 : 1.5 }
}
