/// A retry budget for one key or scope (gRPC A6, Google SRE, Finagle): retries may add at most
/// ``RetryBudgetConfiguration/ratio`` of what funds them, counted over a sliding window on the injected clock.
///
/// What funds the retries is ``RetryBudgetConfiguration/funding``:
/// - ``RetryBudgetConfiguration/Funding/requests``: every first attempt. Retries counted in the window ≤
///   `ratio` × requests counted + `minimumPerSecond` × window. The healthy seconds before an outage leave that
///   credit in the window, so an outage of T seconds at `r` requests per second amplifies the load by at most
///   1 + (`ratio` + `minimumPerSecond` ÷ `r`) × (buckets ÷ (buckets − 1) + window ÷ T): 1.56× for a 20 s outage
///   at 4 requests/s with ``RetryBudgetConfiguration/standard``, and the whole attempt limit in a 2 s one.
/// - ``RetryBudgetConfiguration/Funding/failedFirstAttempts``: every first attempt that failed and that the
///   retry policy would retry. Retries counted in the window ≤ `ratio` × those failures, so retries never fund retries
///   and a healthy spell leaves no credit: an outage of any length gets at most `ratio` extra attempts per request
///   (1.10× at 10 %). A scope whose window holds too few first attempts to earn one retry (`ratio` × requests < 1) uses
///   a floor instead: `minimumPerSecond` × window retries, earned back at `ratio` per first attempt, so a fresh or
///   quiet key retries its first failure and then one in 1 ÷ `ratio`. A retry refused at its failure may still go after
///   its backoff if a first attempt that started after the failure has succeeded meanwhile
///   (``tryWithdraw(afterFailureAt:now:priority:)``): the server answers, so this is a brownout, not an outage, and the
///   retry draws on `ratio` × the window's requests instead. Jitter may draw that backoff short; a refused retry then
///   asks again at the backoff's delay before jitter (the evidence, and the window's share of the requests that came
///   meanwhile, have had the whole backoff to come), and at ``RetryBudgetConfiguration/evidenceWait`` after its
///   failure, but only while the scope shows traffic of its own: first attempts that started while one of its refused
///   retries waited. A caller alone in its scope, whose next request waits for
///   this one, never sees any, so its refused retries give up at their jittered delay and keep the spread jitter
///   gives.
///
/// Use one instance per key or per ``PresetScope`` (the registry builds one pipeline per key).
/// Thread-safe: a small lock around a value-type state machine; never suspends.
///
/// ```swift
/// let budget = RetryBudget(clock: clock)
/// budget.recordRequest()            // every first attempt
/// budget.recordFailure()            // a first attempt that failed and would be retried
/// budget.recordSuccess(startedAt: s) // a first attempt that succeeded
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
    ///   - configuration: What funds retries, the ratio, the floor and the sliding window. Default: `.standard`.
    ///   - clock: The clock of the budget's sliding window. Default: `.continuous`.
    public init(_ configuration: RetryBudgetConfiguration = .standard, clock: ResilienceClock = .continuous) {
        self.configuration = configuration
        self.clock = clock
        state = LockedState(initialState: RetryBudgetState(configuration: configuration))
    }

    /// Counts one first attempt (a deposit with ``RetryBudgetConfiguration/Funding/requests`` funding; with
    /// ``RetryBudgetConfiguration/Funding/failedFirstAttempts`` it earns back the floor and tells whether the
    /// window holds enough traffic to judge by).
    public func recordRequest(now: ResilienceInstant? = nil) {
        let instant = now ?? clock.now()
        state.withLock { $0.recordRequest(now: instant) }
    }

    /// Counts one first attempt that failed in a way the retry policy retries (the deposit of
    /// ``RetryBudgetConfiguration/Funding/failedFirstAttempts`` funding). ``RetryStrategy`` calls it once per
    /// execution, before it asks for the first retry; count neither retries' failures nor failures that are
    /// never retried.
    public func recordFailure(now: ResilienceInstant? = nil) {
        let instant = now ?? clock.now()
        state.withLock { $0.recordFailure(now: instant) }
    }

    /// Counts a first attempt that succeeded and started at `start`: with
    /// ``RetryBudgetConfiguration/Funding/failedFirstAttempts``, the evidence that the server answers, which
    /// ``tryWithdraw(afterFailureAt:now:priority:)`` asks for. With ``RetryBudgetConfiguration/Funding/requests``
    /// it does nothing (and takes no lock).
    public func recordSuccess(startedAt start: ResilienceInstant) {
        guard configuration.funding == .failedFirstAttempts else { return }
        state.withLock { $0.recordSuccess(startedAt: start) }
    }

    /// Takes one retry for a request whose first attempt failed at `failure`, asked once its backoff is over:
    /// granted when ``tryWithdraw(now:priority:)`` would grant it, and with
    /// ``RetryBudgetConfiguration/Funding/failedFirstAttempts`` also when a first attempt that started after
    /// `failure` has succeeded (a brownout, not an outage) and the window's retries are fewer than `ratio` × its
    /// requests. ``RetryStrategy`` asks it after sleeping out a retry that ``tryWithdraw(now:priority:)`` refused.
    ///
    /// - Parameters:
    ///   - failure: When the request's first attempt failed.
    ///   - now: The instant of the retry. Default: the budget's clock.
    ///   - priority: The priority of the request that would retry. Default: ``RequestPriority/default``.
    public func tryWithdraw(
        afterFailureAt failure: ResilienceInstant, now: ResilienceInstant? = nil, priority: RequestPriority = .default
    ) -> Bool {
        let instant = now ?? clock.now()
        return state.withLock {
            $0.tryWithdraw(afterFailureAt: failure, now: instant, yieldsReserve: priority < .default)
        }
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

    /// Marks the start of a wait by a retry this budget refused: first attempts that start until the matching
    /// ``endHold()`` show traffic that does not wait on the scope's refused retries
    /// (``hasTrafficBesideHeldRetries(now:)``). ``RetryStrategy`` calls it around the backoff a refused retry waits
    /// out.
    func beginHold() { state.withLock { $0.held += 1 } }

    /// Marks the end of a wait that ``beginHold()`` started.
    func endHold() { state.withLock { $0.held = max($0.held - 1, 0) } }

    /// Whether first attempts started in the window while a retry of this scope waited after a refusal: the
    /// scope has traffic that does not wait on its refused retries, so a later first attempt may yet show that
    /// the server answers, and a refused retry may wait for it up to its backoff's delay before jitter.
    func hasTrafficBesideHeldRetries(now: ResilienceInstant) -> Bool {
        guard configuration.funding == .failedFirstAttempts else { return false }
        return state.withLock { state in
            state.slide(to: now)
            return state.startsWhileHeld > 0
        }
    }

    /// Requests, retries and retries allowed in the current window (with
    /// ``RetryBudgetConfiguration/Funding/failedFirstAttempts``, a quiet scope's allowance is its retries in
    /// the window plus the whole retries left in its floor).
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
    /// What earns a ``RetryBudget`` its retries: ``requests`` or ``failedFirstAttempts``.
    ///
    /// An open set (a struct, not an enum): a later version may add a way of funding retries without breaking
    /// code that switches over these.
    public struct Funding: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Kind: Hashable {
            case requests, failedFirstAttempts
        }

        fileprivate let kind: Kind

        fileprivate init(_ kind: Kind) { self.kind = kind }

        /// Every first attempt (gRPC A6, Finagle, Envoy): retries in the window ≤ ratio × requests + floor. A
        /// busy key keeps ratio × requests of credit from its healthy seconds, which a short outage spends at once.
        public static let requests = Funding(.requests)
        /// Every first attempt that failed and that the retry policy would retry: retries in the window ≤ ratio ×
        /// those failures, so an outage of any length gets at most `ratio` extra attempts per request. A scope too
        /// quiet to earn one retry (ratio × requests in the window < 1) uses the floor, earned back at `ratio` per
        /// first attempt. A retry refused at its failure may go after its backoff, within ratio × the window's
        /// requests, once a first attempt that started after the failure has succeeded (a brownout).
        public static let failedFirstAttempts = Funding(.failedFirstAttempts)

        /// `requests` or `failed first attempts`.
        public var description: String {
            switch kind {
            case .requests: "requests"
            case .failedFirstAttempts: "failed first attempts"
            }
        }
    }

    /// Retries allowed per unit of ``funding`` in the window (0.1 = 10 %), clamped to `0...1000`; a ratio that is
    /// not finite allows none.
    public var ratio: Double = 0.1
    /// The floor. With ``Funding/requests``: retries per second always allowed, so a quiet key can still retry
    /// (Finagle: 10/s; here 1/s by default). With ``Funding/failedFirstAttempts``: `minimumPerSecond` × ``window``
    /// is how many retries a scope too quiet to judge may hold in reserve (one for the presets), earned back at
    /// ``ratio`` per first attempt.
    public var minimumPerSecond: Double = 1
    /// The sliding window over which requests, failures and retries are counted.
    public var window: Duration = .seconds(10)
    /// How many slices the window is divided into (precision of the slide).
    public var buckets: Int = 10
    /// The share of the allowance kept for requests of ``RequestPriority/default`` priority and above: a
    /// sheddable request's retry may not use it (0 ... 1; 0.2: sheddable retries stop at 80 % of the
    /// allowance, so under overload the last retries go to the requests that matter).
    public var reservedForPriority: Double = 0.2
    /// What earns retries: every first attempt, or every first attempt that failed. Default: ``Funding/requests``.
    public var funding: Funding = .requests
    /// With ``Funding/failedFirstAttempts``: how long after its request's first attempt failed a refused retry
    /// may wait for a later first attempt to succeed (``RetryBudget/tryWithdraw(afterFailureAt:now:priority:)``),
    /// while the scope has traffic beside its refused retries (first attempts that started while one of them waited).
    /// It waits at least its backoff's delay before jitter. Default: `.zero` (the backoff's delay alone).
    public var evidenceWait: Duration = .zero

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - ratio: Retries allowed per unit of `funding` in the window (0.1 = 10 %), clamped to `0...1000`; one that
    ///     is not finite allows none. Default: `0.1`.
    ///   - minimumPerSecond: The floor: retries per second always allowed (``Funding/requests``), or, times the
    ///     window, the retries a quiet scope may hold in reserve (``Funding/failedFirstAttempts``). Default: `1`.
    ///   - window: The sliding window over which requests, failures and retries are counted. Default:
    ///     `.seconds(10)`.
    ///   - buckets: How many slices the window is divided into (precision of the slide). Default: `10`.
    ///   - reservedForPriority: The share of the allowance a sheddable request's retry may not use, kept for
    ///     default and critical requests. Default: `0.2`.
    ///   - funding: What earns retries. Default: ``Funding/requests``.
    ///   - evidenceWait: How long after its failure a refused retry may wait for a later first attempt to succeed
    ///     (failure funding only). Default: `.zero`.
    public init(
        ratio: Double = 0.1, minimumPerSecond: Double = 1, window: Duration = .seconds(10), buckets: Int = 10,
        reservedForPriority: Double = 0.2, funding: Funding = .requests, evidenceWait: Duration = .zero
    ) {
        self.ratio = ratio
        self.minimumPerSecond = minimumPerSecond
        self.window = window
        self.buckets = buckets
        self.reservedForPriority = reservedForPriority
        self.funding = funding
        self.evidenceWait = evidenceWait
    }

    /// 10 % of requests plus 1 retry per second over 10 s (gRPC A6 / Finagle style, funded by requests).
    public static let standard = RetryBudgetConfiguration()

    /// ``PipelinePreset/standard``'s and ``PipelinePreset/background``'s budget: retries may add 10 % of the
    /// failed first attempts of the last 30 s (in 1 s slices); a scope with fewer than 10 first attempts in
    /// that window may hold one retry in reserve instead, earned back at 0.1 per first attempt.
    ///
    /// A full outage of any length T then amplifies the load of a scope sending r requests/s by at most 1.10×
    /// where it sees 10 or more requests in 30 s (r ≥ 1/3), and by 1.10 + (1 − e^(−rT)) ÷ (rT) below, where
    /// the floor retries a quiet scope's first failure (`Docs/Pipeline-Presets.md`). In a brownout, where other
    /// first attempts succeed during a failure's backoff, retries may add 10 % of the requests (the Google SRE
    /// book's 10 %); a healthy spell leaves no credit for an outage to spend.
    public static let smoothed = RetryBudgetConfiguration(
        ratio: 0.1, minimumPerSecond: 1.0 / 30, window: .seconds(30), buckets: 30, funding: .failedFirstAttempts)

    /// ``PipelinePreset/interactive``'s budget, for a person waiting at the screen: ``smoothed``'s rule (retries
    /// may add 10 % of the failed first attempts; a refused retry goes within 10 % of the requests once a later
    /// first attempt has succeeded) over a 20 s window in 1 s slices, a floor of one retry, and refused retries
    /// that may wait up to 2 s after their failure for that evidence while the scope has other traffic.
    ///
    /// The window is what sets the rate from which failures, not the floor, decide: a scope is judged by its
    /// failures once its window holds 1 ÷ ratio = 10 requests. At 1 request/s, where the outage goal tightens
    /// to 1.10×, a 20 s window holds 20 on average and fewer than 10 in 0.5 % of windows (a 10 s window: in
    /// 46 %, so the floor retried there about half the time). Below about 0.5 request/s, an app's key retries its
    /// first failure from the floor and then one in ten requests: a full outage of T seconds at r requests/s
    /// adds at most 0.1 + 1 ÷ (rT) per request. Above it, an outage of any length adds at most 10 %, short ones
    /// included (a budget funded by requests spends the credit of the healthy seconds before a 2 s outage at
    /// once: 1.87× at 4 and 50 requests/s). The 2 s wait is the interactive policy's longest backoff: at 1
    /// request/s a brownout's failure sees a later call succeed within it about four times in five, against one
    /// in five within its 250 ms backoff.
    public static let interactive = RetryBudgetConfiguration(
        ratio: 0.1, minimumPerSecond: 0.05, window: .seconds(20), buckets: 20, funding: .failedFirstAttempts,
        evidenceWait: .seconds(2))

    /// The ratio the budget applies: ``ratio`` clamped to `0...1000`, and `0` when it is not finite.
    var appliedRatio: Double { ratio.isFinite ? min(max(ratio, 0), 1_000) : 0 }

    /// `ratio: 10%, minimum: 1/s, window: 10 seconds`, then `funding: failed first attempts` when it is not
    /// ``Funding/requests`` and `evidence wait: 2.0 seconds` when there is one. The ratio shown is the one applied
    /// (clamped).
    public var description: String {
        let percent = Int((appliedRatio * 100).rounded())
        var settings = "ratio: \(percent)%, minimum: \(minimumPerSecond)/s, window: \(window)"
        if funding != .requests { settings += ", funding: \(funding)" }
        if evidenceWait > .zero { settings += ", evidence wait: \(evidenceWait)" }
        return settings
    }
}

/// The pure state machine behind ``RetryBudget``: requests, failed first attempts and retries counted in time
/// slices, and the floor a quiet scope draws on when failures fund the retries.
struct RetryBudgetState: Sendable {
    let ratio: Double
    /// The floor, in retries: `minimumPerSecond` × window.
    let minimumRetries: Double
    /// Whether failed first attempts, not requests, fund the retries.
    let fundedByFailures: Bool
    /// The share of the allowance a sheddable request's retry may not use.
    let reserved: Double
    let sliceNanoseconds: Int64
    /// Requests, failed first attempts, retries and first attempts started while a refused retry waited, per
    /// time slice, in one array (one allocation per budget).
    private var slices: [(requests: Int, failures: Int, retries: Int, startsWhileHeld: Int)]
    private var currentSlice: Int64 = 0
    private(set) var requests = 0
    private(set) var failures = 0
    private(set) var retries = 0
    /// First attempts in the window that started while a refused retry of the scope waited.
    private(set) var startsWhileHeld = 0
    /// Refused retries waiting now (between `beginHold` and `endHold`).
    var held = 0
    /// With failure funding, the floor a quiet scope draws on is `floorBase` + `ratio` × `floorEarned` retries,
    /// at most `minimumRetries`: it starts full (a fresh scope retries its first failure) and earns back `ratio`
    /// per first attempt. Counting the first attempts, rather than adding `ratio` to a sum, keeps ten tenths one.
    private var floorBase: Double
    private var floorEarned = 0

    init(configuration: RetryBudgetConfiguration) {
        let bucketCount = min(max(configuration.buckets, 1), 1000)
        let window = max(DurationArithmetic.clamp(configuration.window), .milliseconds(1))
        let windowNanoseconds = max(Int64(DurationArithmetic.seconds(window) * 1e9), Int64(bucketCount))
        ratio = configuration.appliedRatio
        let reserve = configuration.reservedForPriority
        reserved = reserve.isFinite ? min(max(reserve, 0), 1) : 0
        let perSecond = configuration.minimumPerSecond.isFinite ? max(configuration.minimumPerSecond, 0) : 0
        minimumRetries = min(perSecond * DurationArithmetic.seconds(window), 1e12)
        fundedByFailures = configuration.funding == .failedFirstAttempts
        floorBase = minimumRetries
        sliceNanoseconds = windowNanoseconds / Int64(bucketCount)
        slices = Array(repeating: (0, 0, 0, 0), count: bucketCount)
    }

    /// Where on the clock the latest first attempt that succeeded started (failure funding's evidence).
    private var latestSuccessStart: Duration?

    /// The retries a quiet scope may still take from the floor.
    var floorCredit: Double { min(floorBase + ratio * Double(floorEarned), minimumRetries) }

    /// Whether the window holds too few first attempts to earn one retry from its failures, so the floor
    /// decides (failure funding only).
    var isQuiet: Bool { ratio * Double(requests) < 1 }

    /// Retries currently allowed in the window.
    var allowance: Int {
        let allowed: Double
        if !fundedByFailures {
            allowed = ratio * Double(requests) + minimumRetries
        } else if isQuiet {
            allowed = Double(retries) + floorCredit
        } else {
            allowed = ratio * Double(failures)
        }
        return Int(min(allowed.rounded(.down), Double(Int32.max)))
    }

    /// Counts one first attempt.
    mutating func recordRequest(now: ResilienceInstant) {
        slide(to: now)
        requests += 1
        slices[index].requests += 1
        guard fundedByFailures else { return }
        if held > 0 {
            startsWhileHeld += 1
            slices[index].startsWhileHeld += 1
        }
        floorEarned += 1
        if floorCredit >= minimumRetries { (floorBase, floorEarned) = (minimumRetries, 0) }
    }

    /// Counts a first attempt that succeeded, started at `start`.
    mutating func recordSuccess(startedAt start: ResilienceInstant) {
        if let latest = latestSuccessStart, latest >= start.offset { return }
        latestSuccessStart = start.offset
    }

    /// Takes one retry for a request whose first attempt failed at `failure`, after its backoff: as
    /// `tryWithdraw`, or, funded by failures, within `ratio` × the window's requests once a first attempt that
    /// started after `failure` has succeeded.
    mutating func tryWithdraw(
        afterFailureAt failure: ResilienceInstant, now: ResilienceInstant, yieldsReserve: Bool
    ) -> Bool {
        if tryWithdraw(now: now, yieldsReserve: yieldsReserve) { return true }
        guard fundedByFailures, hasEvidence(afterFailureAt: failure) else { return false }
        let share = yieldsReserve ? 1 - reserved : 1
        guard Double(retries) < (ratio * Double(requests) * share).rounded(.down) else { return false }
        retries += 1
        slices[index].retries += 1
        return true
    }

    /// Whether a first attempt that started after `failure` has succeeded.
    func hasEvidence(afterFailureAt failure: ResilienceInstant) -> Bool {
        guard let latest = latestSuccessStart else { return false }
        return latest > failure.offset
    }

    /// Counts one first attempt that failed and would be retried.
    mutating func recordFailure(now: ResilienceInstant) {
        slide(to: now)
        failures += 1
        slices[index].failures += 1
    }

    /// Takes one retry from the budget if the window allows it; `yieldsReserve` (a sheddable request) leaves
    /// the reserved share of the allowance alone.
    mutating func tryWithdraw(now: ResilienceInstant, yieldsReserve: Bool = false) -> Bool {
        slide(to: now)
        let share = yieldsReserve ? 1 - reserved : 1
        if fundedByFailures && isQuiet {
            // The floor: whole retries only, the reserved share kept for the requests that matter.
            let credit = floorCredit
            guard (credit * share).rounded(.down) >= 1 else { return false }
            (floorBase, floorEarned) = (credit - 1, 0)
        } else {
            guard retries < Int((Double(allowance) * share).rounded(.down)) else { return false }
        }
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
            failures -= slices[expired].failures
            retries -= slices[expired].retries
            startsWhileHeld -= slices[expired].startsWhileHeld
            slices[expired] = (0, 0, 0, 0)
        }
        currentSlice = slice
        index = Int(slice % Int64(slices.count))
    }
}
