/// Opens when the failure ratio (or slow-call ratio) over a sliding window reaches a threshold.
///
/// resilience4j / Polly semantics: the window is the last N calls or the last T seconds; nothing is judged
/// until it holds `minimumThroughput` calls; then a failure ratio at or above `failureRatio` (or, when slow
/// calls are measured, a slow-call ratio at or above `slowCallRatio`) opens the breaker. Half-open admits a
/// few probes; enough successes close it, any counted failure reopens it.
///
/// ```swift
/// var settings = FailureRatioBreaker.Configuration.standard
/// settings.slowCallThreshold = .seconds(2)
/// let breaker = FailureRatioBreaker(settings)
/// ```
public final class FailureRatioBreaker: StateMachineBreaker, @unchecked Sendable {
    /// The settings it was created with.
    public let configuration: Configuration

    /// Creates a breaker.
    ///
    /// - Parameters:
    ///   - configuration: The window, ratios, minimum throughput and half-open rules.
    ///   - random: Feeds the open duration's jitter when one is configured.
    public init(_ configuration: Configuration = .standard, random: SharedRandomSource = SharedRandomSource()) {
        self.configuration = configuration
        super.init(
            RuleMachine(
                rule: FailureRatioRule(configuration), openDuration: configuration.openDuration,
                generator: random.makeGenerator(),
                cycle: BreakerCycle(
                    halfOpen: BreakerHalfOpenRules(
                        probeLimit: configuration.halfOpenProbeLimit, successesToClose: configuration.successesToClose,
                        probeTimeout: configuration.probeTimeout),
                    isolatedRetryAfter: configuration.openDuration.base, retryAfter: configuration.retryAfter),
                countsAsFailure: configuration.countsAsFailure,
                unanswered: configuration.opensWhenUnanswered
                    ? UnansweredWindow(
                        window: configuration.unansweredWindow ?? configuration.window.unansweredLength,
                        minimumCalls: configuration.minimumUnansweredCalls ?? configuration.minimumThroughput)
                    : nil))
    }

    /// Calls, failures and slow calls currently in the window.
    public func windowCounts(now: ResilienceInstant) -> (calls: Int, failures: Int, slow: Int) {
        let totals = inspect(RuleMachine<FailureRatioRule>.self) { $0.rule.window.totals(now: now) }
        return (totals?.calls ?? 0, totals?.failures ?? 0, totals?.slow ?? 0)
    }

    /// `failure-ratio(window: 30 s, ratio: 0.5, minimum: 20)`.
    public override var policyDescription: String {
        let window: String
        switch configuration.window {
        case .count(let calls): window = "\(calls) calls"
        case .time(let duration, _): window = "\(duration)"
        }
        var text = "failure-ratio(window: \(window), ratio: \(configuration.failureRatio), "
        text += "minimum: \(configuration.minimumThroughput)"
        if configuration.minimumObservation > .zero {
            text += ", observed: \(configuration.minimumObservation)"
        }
        if let slow = configuration.slowCallThreshold {
            text += ", slow: \(slow) at \(configuration.slowCallRatio)"
        }
        if configuration.opensWhenUnanswered {
            text += ", unanswered"
            if let calls = configuration.minimumUnansweredCalls, calls != configuration.minimumThroughput {
                text += ": \(calls)"
            }
            if let silence = configuration.unansweredWindow { text += " in \(silence)" }
        }
        return text + ")"
    }
}

extension FailureRatioBreaker {
    /// The window a ``FailureRatioBreaker`` measures over.
    public enum Window: Hashable, Sendable {
        /// The last `calls` recorded calls (resilience4j's COUNT_BASED), clamped to `1...1_000_000` (a byte per
        /// call is kept).
        case count(Int)
        /// The calls of the last `duration`, kept in `buckets` slices (resilience4j's TIME_BASED, Polly's
        /// sampling duration); `buckets` is clamped to `1...1000`.
        case time(Duration, buckets: Int = 10)

        /// The most calls a ``count(_:)`` window keeps.
        static let maximumCalls = 1_000_000

        /// The length of a silence that ``Configuration/opensWhenUnanswered`` judges when
        /// ``Configuration/unansweredWindow`` does not name one: a time window's duration, or 10 s for a count
        /// window (which has no duration of its own).
        var unansweredLength: Duration {
            switch self {
            case .count: .seconds(10)
            case .time(let duration, _): duration
            }
        }
    }

    /// Settings of a ``FailureRatioBreaker`` (resilience4j / Polly semantics).
    public struct Configuration: Sendable {
        /// The measuring window.
        public var window: Window = .time(.seconds(30))
        /// Calls the window must hold before the ratio is judged at all.
        public var minimumThroughput = 20
        /// How long the breaker must have been counting (since the first call it counted after it was created,
        /// opened, closed or reset) before the ratio is judged at all; `.zero` (the default) judges as soon as the
        /// window holds ``minimumThroughput`` calls. Set to a time window's length, a new or just-closed breaker
        /// judges a whole window, not the first few calls of one.
        public var minimumObservation: Duration = .zero
        /// The failure ratio (0...1) that opens the breaker when reached; 0 opens it on any counted failure, never on
        /// a window without one.
        public var failureRatio = 0.5
        /// A call taking at least this long is slow; `nil` turns slow-call detection off.
        public var slowCallThreshold: Duration?
        /// The slow-call ratio (0...1) that opens the breaker when reached; 0 opens it on any slow call, never on a
        /// window without one.
        public var slowCallRatio = 1.0
        /// Whether calls left unanswered open it too: when calls have waited a whole window without a success
        /// (``unansweredWindow``, by default a time window's length or 10 s for a count window, and at least as
        /// long as the slowest success since the breaker last closed), and at least ``minimumUnansweredCalls``
        /// calls since the last success are
        /// waiting or failed, the closed breaker opens before their timeouts fire. A hung server answers nothing, and
        /// every second the clients wait for their timeouts they queue another second of work that the server
        /// still does after it recovers. Judged only once the breaker has seen a success since it was created
        /// or opened, so it knows the dependency answers. A breaker opened by that silence, or by a call that
        /// timed out, then lets one probe wait at a time, and closes as soon as any call admitted before it opened
        /// comes back with a success (the dependency answers its queue again; unless the server's `Retry-After`
        /// holds the breaker open). The admission that finds the silence returns the
        /// opening transition with a permit whose outcome counts for nothing; ``CircuitBreakerStrategy`` reports
        /// the transition and rejects that call. A call held by a stage inside the breaker (a server-quota or
        /// limiter wait) is not waiting for the dependency when the stage reports its hold (a limiter, quota or
        /// adaptive concurrency stage given the breaker as its ``CallHoldObserver``, as in the presets); an
        /// unreported hold counts as silence. Stages that hold calls without reporting
        /// belong outside the breaker (the presets wait for connectivity there).
        public var opensWhenUnanswered = false
        /// With ``opensWhenUnanswered``, how many calls since the last success must be waiting or have failed for
        /// a whole window's silence to open the breaker; `nil` (the default) uses ``minimumThroughput``. Silence
        /// can take fewer calls than failures: calls that come back failed may be a heavy brownout's, while calls
        /// left waiting together for a whole window with no answer at all are a hung dependency's.
        public var minimumUnansweredCalls: Int?
        /// With ``opensWhenUnanswered``, the silence that counts: how long calls must wait with no success before
        /// it opens the breaker (never less than the slowest success since the breaker last closed); `nil` (the
        /// default) uses the window's length (10 s for a count window). A silence shorter than the attempt
        /// timeout opens the breaker before the timeouts fire, while the calls queued at a hung server are few.
        public var unansweredWindow: Duration?
        /// Successful half-open probes needed to close it.
        public var successesToClose = 3
        /// How many probes may run at once in half-open.
        public var halfOpenProbeLimit = 3
        /// After this long without an answer from the probes in flight, half-open admits new probes.
        public var probeTimeout: Duration = .seconds(30)
        /// How long it stays open (constant 30 s by default).
        public var openDuration: BreakerBackoff = .constant(.seconds(30))
        /// Which failures count.
        public var countsAsFailure: BreakerFailurePredicate = .standard
        /// How the server's `Retry-After` on a counted failure lengthens or starts an open period.
        public var retryAfter: BreakerRetryAfter = .standard

        /// Creates the standard configuration; adjust the `var`s as needed.
        public init() {}

        /// 50 % failures over 30 s (10 buckets), at least 20 calls, open 30 s, 3 probes.
        public static var standard: Configuration { Configuration() }

        /// resilience4j's defaults: the last 100 calls, at least 100, 50 %, open 60 s, 10 probes.
        public static var countBased: Configuration {
            var configuration = Configuration()
            configuration.window = .count(100)
            configuration.minimumThroughput = 100
            configuration.openDuration = .constant(.seconds(60))
            configuration.successesToClose = 10
            configuration.halfOpenProbeLimit = 10
            return configuration
        }

        /// Opens only on total failure: every call of the last 10 s failed (timeouts count), and at least 40 were
        /// made, or at least 3 calls went unanswered for 5 s (``opensWhenUnanswered``); open 500 ms
        /// ±20 %, not growing; up to 3 probes (one at a time when the dependency hung), and the first success closes
        /// it (and is the first call of the fresh window). ``PipelinePreset/standard``'s breaker.
        ///
        /// Why these values: a full outage or a hung server fails every call, while a brownout, however heavy, still
        /// lets some through, so the rule asks for no success at all, which a key (or a ``PresetScope``) making `n`
        /// calls in the window sees in a brownout of failure probability `p` with probability `pⁿ` (a ratio of 90 %
        /// tripped on a p = 0.9 brownout more often than not). In an outage the rule trips as soon as the healthy calls
        /// from before have left the 10 s window, like a 90 % ratio did. A flapping server's down spells shorter than
        /// the window leave the successes of its up spells in it, so the breaker stays shut and the retries reach the
        /// up spells. At least 40 calls, because that chance must be small at every rate, not only where calls are
        /// many: 0.9¹⁰ = 35 % of 10-call windows fail whole in a p = 0.9 brownout, 0.9²⁰ = 12 % of 20-call ones,
        /// 0.9⁴⁰ = 1.5 % of 40-call ones. A false trip costs a key about `1 ÷ (1 − p)` failed probes while it refuses the
        /// calls between them, and at p = 0.9 retrying gains only about 1 percentage point, so with 10 a key of 1–2
        /// requests/s did worse than not retrying at all (4–6 runs in 20 at or above it; 20 in 20 with 40). A key below
        /// 4 calls a second never holds 40 calls in the window, so failures that come back never open its breaker: its
        /// retry budget alone bounds an outage's load, at 1 + its ratio, and its callers lose no calls to an open
        /// period when the server returns. A key above opens after a whole window of failures, and then sheds most of
        /// its calls. Hystrix asks for 20 calls in its 10 s window, resilience4j and Polly for 100.
        ///
        /// The open time is what a recovered server loses: every call in the open period after the server is back
        /// fails, so a breaker open for `O` (±20 %) loses up to `1.2 O` of the traffic after a recovery, `O ÷ 2` on
        /// average. Over a fault that trips it (at least the 10 s window) and the minute after it, that must cost less
        /// than 1 percentage point of success against not retrying at all in nearly every run, not only on average, so
        /// `1.2 O` plus a probe's round trip must stay under 1 % of 70 s: 500 ms ±20 % (jittered so the keys of many
        /// clients do not probe in step; 1 s lost more than 1 point in a run in four or five at 50 requests/s).
        /// The open time does not grow, because a growing open time is exactly what swallows a recovered or flapping
        /// server's healthy seconds (Polly's and Finagle's growing break times, 5 s and more, lost 4–15 pp here). What
        /// a dead server sees instead is two rounds of probes per second per breaker: a failed probe reopens it at
        /// once, and the probe's own retry meets the open breaker. That sheds `O ÷ (O + 1/r)` of a key's calls at `r`
        /// requests per second (two thirds at 4, 96 % at 50), and the retry budget, funded by the failures, bounds what
        /// the calls that get through may add. One successful probe closes it, as in Polly and gRPC's outlier ejection:
        /// a probe that succeeds is the evidence a recovered server gives first.
        ///
        /// A hung server (one that stops serving but keeps accepting) fails calls only when their attempt
        /// timeouts fire, 10–60 s in the presets, and every second the clients wait they queue another second
        /// of work, which the server still does after it recovers whether or not anyone waits for it: the
        /// recovery after a stall lasts about as long as the clients kept sending into it. So silence counts
        /// too: once calls have waited 5 s with no success (and at least 3 calls since the last success are
        /// waiting or failed), the breaker opens without waiting for their timeouts. Answers that are slow but
        /// arrive never look silent (the silence stretches to the slowest success since the breaker closed). The
        /// silence must end before the attempt timeout, or it adds nothing: 5 s is half of `.interactive`'s 10 s,
        /// and a client of 0.5 requests/s has 3 calls waiting within it (with 10 s and 5 calls, such clients took
        /// 21 s to get back to 95 % served after a 45 s stall of a server at 280 of its 300 requests/s, and 16 s
        /// with 5 s and 3; at 4 requests/s after 45–120 s stalls, `.standard` 10–11 s and 6 s). The price is paid in
        /// pauses shorter than the attempt timeout, which used to cost only waiting: a 5 s pause at 4 requests/s
        /// leaves 95 % served 1 s late (none with 10 s), since the breaker it opens closes with the first answer to
        /// a call it had queued. Calls held by a stage inside the breaker (server-quota pacing in the presets) do
        /// not count while held (``CallHoldObserver``): a quota that holds calls for 10 s did not trip it. A
        /// breaker opened by a hung dependency (silence, or a call that timed out) lets one probe
        /// wait at a time, as Polly always does: such a probe waits out its whole attempt timeout in the
        /// server's queue, is answered no sooner for company, and each probe beside it adds to the work the
        /// server must do before it can answer anyone. The first call the hung server had queued before the
        /// breaker opened that comes back with a success closes it, without waiting for the probe behind the same
        /// queue: a quiet client (0.2 requests/s, where 5 waiting calls took 25 s) otherwise opened late in a
        /// 20 s stall and refused its calls while the server worked through its queue (recovery 26 s against
        /// 7 s). After failures that came back (an outage), three probes go side by side, so a busy key loses
        /// fewer calls in the moment its server returns.
        public static var outageOnly: Configuration {
            var configuration = Configuration()
            configuration.window = .time(.seconds(10))
            configuration.minimumThroughput = 40
            configuration.minimumObservation = .seconds(10)
            configuration.failureRatio = 1
            configuration.openDuration = BreakerBackoff(base: .milliseconds(500), jitter: 0.2)
            configuration.successesToClose = 1
            configuration.halfOpenProbeLimit = 3
            configuration.opensWhenUnanswered = true
            configuration.unansweredWindow = .seconds(5)
            configuration.minimumUnansweredCalls = 3
            return configuration
        }

        /// ``PipelinePreset/background``'s breaker: the same settings as ``outageOnly``. Background work could
        /// afford a longer open time by its 60 s recovery goal, but every preset keeps success over a fault and
        /// its recovery within 1 percentage point of not retrying, which the open time alone decides.
        public static var outageOnlyBackground: Configuration { outageOnly }

        /// ``PipelinePreset/interactive``'s breaker: the same settings as ``outageOnly``, whose silence (3 calls
        /// unanswered for 5 s) ends before `.interactive`'s 10 s attempt timeout fires.
        ///
        /// A person's app cannot tell a full outage from a heavy brownout after a handful of calls, and a
        /// brownout's successes are what the person came for: a window of n calls all fails in a brownout of
        /// probability p with probability pⁿ, 35 % for 10 calls at p = 0.9 and 1.5 % for 40, and every false
        /// trip refuses calls until a probe succeeds. With 10 calls a key of 1–3 requests/s did worse than not
        /// retrying at p = 0.9 (20 seeds: 0/20 at 1 request/s); with 40, 20/20 at 1–3 requests/s. Below 4 calls a
        /// second the window never holds 40, so the retry budget (``RetryBudgetConfiguration/interactive``)
        /// alone bounds an outage's load there: a single key of 1 request/s in a 20 s outage sends 1.08×
        /// (median), within the goal's 1.10× in 59 of 60 seeds.
        public static var outageOnlyInteractive: Configuration { outageOnly }

        /// Polly's defaults: 10 % failures over 30 s, at least 100 calls, open 5 s, one probe.
        public static var sensitive: Configuration {
            var configuration = Configuration()
            configuration.failureRatio = 0.1
            configuration.minimumThroughput = 100
            configuration.openDuration = .constant(.seconds(5))
            configuration.successesToClose = 1
            configuration.halfOpenProbeLimit = 1
            return configuration
        }
    }
}

/// The trip rule of ``FailureRatioBreaker``: the failure (or slow-call) ratio over a sliding window, judged
/// once the window holds the minimum throughput. It runs in the module's one breaker state machine.
struct FailureRatioRule: BreakerTripRule {
    let configuration: FailureRatioBreaker.Configuration
    var window: OutcomeWindow
    /// When the first call since the last ``clear()`` finished; `nil` before it.
    var countingSince: ResilienceInstant?

    init(_ configuration: FailureRatioBreaker.Configuration) {
        self.configuration = configuration
        window = OutcomeWindow(configuration.window)
    }

    mutating func shouldOpen(
        afterCallFailed failed: Bool, admittedAt: ResilienceInstant, now: ResilienceInstant
    )
        -> Bool
    {
        let slow = configuration.slowCallThreshold.map { admittedAt.duration(to: now) >= $0 } ?? false
        window.record(failure: failed, slow: slow, now: now)
        let since = countingSince ?? now
        countingSince = since
        guard since.duration(to: now) >= configuration.minimumObservation else { return false }
        let totals = window.totals(now: now)
        guard totals.calls >= max(1, configuration.minimumThroughput) else { return false }
        let calls = Double(totals.calls)
        // A ratio of 0 is reached by the first failure (or slow call), never by a window without one.
        let failureRatioReached = totals.failures > 0 && Double(totals.failures) / calls >= configuration.failureRatio
        let slowRatioReached =
            configuration.slowCallThreshold != nil && totals.slow > 0
            && Double(totals.slow) / calls >= configuration.slowCallRatio
        return failureRatioReached || slowRatioReached
    }

    mutating func clear() {
        window.clear()
        countingSince = nil
    }
}
