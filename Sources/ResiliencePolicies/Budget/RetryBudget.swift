/// A token-style retry budget for one key (gRPC A6, Google SRE, Finagle): retries may add at most
/// ``RetryBudgetConfiguration/ratio`` of the recent requests, plus a small minimum rate, over a sliding
/// window on the injected clock.
///
/// The bound: retries counted in the window ≤ `ratio` × requests counted + `minimumPerSecond` × window, and
/// the window slides a slice at a time, so retries leave it after between (buckets − 1)/buckets of a window
/// and a whole one. A key sending `r` requests per second therefore amplifies a full outage's load by at
/// most 1 + (`ratio` + `minimumPerSecond` ÷ `r`) × buckets ÷ (buckets − 1): with the defaults 1.39× at 4
/// requests/s and 1.12× only from about 100 requests/s, instead of the 3× that three attempts per request
/// would cause. A circuit breaker in front keeps a quiet key's outage load down. Use one instance per key
/// (the registry builds one pipeline per key).
///
/// ```swift
/// let budget = RetryBudget(clock: clock)
/// budget.recordRequest()            // every first attempt
/// if budget.tryWithdraw() { … }      // every retry
/// ```
public final class RetryBudget: Sendable, CustomStringConvertible {
    /// The settings.
    public let configuration: RetryBudgetConfiguration
    private let clock: ResilienceClock
    private let state: LockedState<RetryBudgetState>

    /// Creates a budget reading time from `clock`.
    public init(_ configuration: RetryBudgetConfiguration = .standard, clock: ResilienceClock = .continuous) {
        self.configuration = configuration
        self.clock = clock
        state = LockedState(initialState: RetryBudgetState(configuration: configuration))
    }

    /// Counts one first attempt (a deposit).
    public func recordRequest(now: ResilienceInstant? = nil) {
        let instant = now ?? clock.now()
        state.withLock { $0.recordRequest(now: instant) }
    }

    /// Takes one retry from the budget; `false` when the budget is spent.
    public func tryWithdraw(now: ResilienceInstant? = nil) -> Bool {
        let instant = now ?? clock.now()
        return state.withLock { $0.tryWithdraw(now: instant) }
    }

    /// Requests, retries and retries allowed in the current window.
    public var usage: (requests: Int, retries: Int, allowance: Int) {
        let now = clock.now()
        return state.withLock { state in
            state.slide(to: now)
            return (state.requests, state.retries, state.allowance)
        }
    }

    /// `retry-budget(ratio: 10%, …)`.
    public var description: String { "retry-budget(\(configuration))" }
}
