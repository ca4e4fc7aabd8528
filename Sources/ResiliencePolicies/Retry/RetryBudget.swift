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
/// Thread-safe: a small lock around a value-type state machine; never suspends.
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
    ///
    /// - Parameters:
    ///   - configuration: The ratio of retries to requests, the per-second minimum and the sliding window. Default:
    ///     `.standard`.
    ///   - clock: The clock of the budget's sliding window. Default: `.continuous`.
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
    ///
    /// The budget spends on the highest priorities first: a retry of a request below
    /// ``RequestPriority/default`` (a sheddable one) may not use the last
    /// ``RetryBudgetConfiguration/reservedForPriority`` of the allowance, which stays for default and critical
    /// requests.
    ///
    /// - Parameters:
    ///   - now: The instant of the retry. Default: the budget's clock.
    ///   - priority: The priority of the request that would retry. Default: ``RequestPriority/default``.
    public func tryWithdraw(now: ResilienceInstant? = nil, priority: RequestPriority = .default) -> Bool {
        let instant = now ?? clock.now()
        return state.withLock { $0.tryWithdraw(now: instant, yieldsReserve: priority < .default) }
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

/// The settings of a ``RetryBudget``.
public struct RetryBudgetConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// Retries allowed per request in the window (0.1 = 10 %). A full outage amplifies the load of a key
    /// sending `r` requests per second by at most 1 + (ratio + minimumPerSecond ÷ r) × buckets ÷ (buckets − 1).
    public var ratio: Double = 0.1
    /// Retries per second always allowed, so a quiet key can still retry (Finagle: 10/s; here 1/s by default).
    public var minimumPerSecond: Double = 1
    /// The sliding window over which requests and retries are counted.
    public var window: Duration = .seconds(10)
    /// How many slices the window is divided into (precision of the slide).
    public var buckets: Int = 10
    /// The share of the allowance kept for requests of ``RequestPriority/default`` priority and above: a
    /// sheddable request's retry may not use it (0 ... 1; 0.2: sheddable retries stop at 80 % of the
    /// allowance, so under overload the last retries go to the requests that matter).
    public var reservedForPriority: Double = 0.2

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - ratio: Retries allowed per request in the window (0.1 = 10 %). A full outage amplifies the load of a key
    ///     sending `r` requests per second by at most 1 + (ratio + minimumPerSecond ÷ r) × buckets ÷ (buckets − 1).
    ///     Default: `0.1`.
    ///   - minimumPerSecond: Retries per second always allowed, so a quiet key can still retry (Finagle: 10/s; here 1/s
    ///     by default).
    ///   - window: The sliding window over which requests and retries are counted. Default: `.seconds(10)`.
    ///   - buckets: How many slices the window is divided into (precision of the slide). Default: `10`.
    ///   - reservedForPriority: The share of the allowance a sheddable request's retry may not use, kept for
    ///     default and critical requests. Default: `0.2`.
    public init(
        ratio: Double = 0.1, minimumPerSecond: Double = 1, window: Duration = .seconds(10), buckets: Int = 10,
        reservedForPriority: Double = 0.2
    ) {
        self.ratio = ratio
        self.minimumPerSecond = minimumPerSecond
        self.window = window
        self.buckets = buckets
        self.reservedForPriority = reservedForPriority
    }

    /// 10 % of requests plus 1 retry per second over 10 s (gRPC A6 / Finagle style).
    public static let standard = RetryBudgetConfiguration()

    /// ``PipelinePreset/standard``'s and ``PipelinePreset/background``'s budget: retries may add 10 % of the
    /// requests of the last 30 s (in 1 s slices) plus one retry per 30 s (Google SRE's 10 %; gRPC A6 throttles
    /// retries the same way).
    ///
    /// A full outage of length T then amplifies the load of a key sending r requests/s by at most
    /// 1 + (0.1 + (1/30) ÷ r) × (30 + T) ÷ T (the 30 s before the outage give it credit too) until the
    /// preset's breaker trips, which it does within about 5 s from 1 request/s. The floor of one retry per
    /// 30 s (not 1 per second) lets a fresh or quiet key retry a failure while keeping a key of 0.1
    /// requests/s below 1.5×; a key quieter than that (0.02 requests/s) can reach 2× in a long outage.
    public static let smoothed = RetryBudgetConfiguration(
        ratio: 0.1, minimumPerSecond: 1.0 / 30, window: .seconds(30), buckets: 30)

    /// ``PipelinePreset/interactive``'s budget, for an app's key sending a request every few seconds: retries
    /// may add 20 % of the requests of the last 30 s (in 1 s slices) plus one retry per 30 s (Finagle's and
    /// Envoy's 20 %).
    ///
    /// At 0.5 requests/s it allows 4 retries in any 30 s: a brownout failing up to about 25 % of calls keeps
    /// every request's second attempt (success 1 − p²), a heavier one gets 20 % more attempts. A full outage
    /// amplifies a key's load by at most 1 + (0.2 + (1/30) ÷ r) × (30 + T) ÷ T, and by less once the
    /// preset's breaker trips (from about 5 calls in 10 s).
    public static let interactive = RetryBudgetConfiguration(
        ratio: 0.2, minimumPerSecond: 1.0 / 30, window: .seconds(30), buckets: 30)

    /// `ratio: 10%, minimum: 1/s, window: 10 seconds`.
    public var description: String {
        "ratio: \(Int((ratio * 100).rounded()))%, minimum: \(minimumPerSecond)/s, window: \(window)"
    }
}

/// The pure state machine behind ``RetryBudget``: requests and retries counted in time slices.
struct RetryBudgetState: Sendable {
    let ratio: Double
    let minimumRetries: Double
    /// The share of the allowance a sheddable request's retry may not use.
    let reserved: Double
    let sliceNanoseconds: Int64
    /// Requests and retries per time slice, in one array (one allocation per budget, not two).
    private var slices: [(requests: Int, retries: Int)]
    private var currentSlice: Int64 = 0
    private(set) var requests = 0
    private(set) var retries = 0

    init(configuration: RetryBudgetConfiguration) {
        let bucketCount = min(max(configuration.buckets, 1), 1000)
        let window = max(DurationArithmetic.clamp(configuration.window), .milliseconds(1))
        let windowNanoseconds = max(Int64(DurationArithmetic.seconds(window) * 1e9), Int64(bucketCount))
        ratio = configuration.ratio.isFinite ? min(max(configuration.ratio, 0), 1_000) : 0
        let reserve = configuration.reservedForPriority
        reserved = reserve.isFinite ? min(max(reserve, 0), 1) : 0
        let perSecond = configuration.minimumPerSecond.isFinite ? max(configuration.minimumPerSecond, 0) : 0
        minimumRetries = min(perSecond * DurationArithmetic.seconds(window), 1e12)
        sliceNanoseconds = windowNanoseconds / Int64(bucketCount)
        slices = Array(repeating: (0, 0), count: bucketCount)
    }

    /// Retries currently allowed in the window.
    var allowance: Int {
        Int(min((ratio * Double(requests) + minimumRetries).rounded(.down), Double(Int32.max)))
    }

    /// Counts one first attempt.
    mutating func recordRequest(now: ResilienceInstant) {
        slide(to: now)
        requests += 1
        slices[index].requests += 1
    }

    /// Takes one retry from the budget if the window allows it; `yieldsReserve` (a sheddable request) leaves
    /// the reserved share of the allowance alone.
    mutating func tryWithdraw(now: ResilienceInstant, yieldsReserve: Bool = false) -> Bool {
        slide(to: now)
        let limit = yieldsReserve ? Int((Double(allowance) * (1 - reserved)).rounded(.down)) : allowance
        guard retries < limit else { return false }
        retries += 1
        slices[index].retries += 1
        return true
    }

    /// The slot of ``currentSlice`` in the slice arrays, kept with it so the hot path does not divide.
    private var index = 0
    /// Where ``currentSlice`` ends on the clock: until then `slide` has nothing to do (a comparison, no
    /// conversion).
    private var currentSliceEnd: Duration = .zero

    /// Expires the slices that left the window.
    mutating func slide(to now: ResilienceInstant) {
        guard now.offset >= currentSliceEnd else { return }
        let slice = max(DurationArithmetic.nanoseconds(now.offset), 0) / sliceNanoseconds
        let (end, overflow) = (slice + 1).multipliedReportingOverflow(by: sliceNanoseconds)
        currentSliceEnd = overflow ? .seconds(Int64.max) : .nanoseconds(end)
        guard slice > currentSlice else { return }
        let steps = min(slice - currentSlice, Int64(slices.count))
        for step in 1...steps {
            let expired = Int((currentSlice + step) % Int64(slices.count))
            requests -= slices[expired].requests
            retries -= slices[expired].retries
            slices[expired] = (0, 0)
        }
        currentSlice = slice
        index = Int(slice % Int64(slices.count))
    }
}
