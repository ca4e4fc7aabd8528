import Foundation
import ResilienceKit

/// The outage goal's bound on a preset's load (server arrivals ÷ requests offered while the server is down),
/// as a function of the requests per second one pipeline sees: the one place the sweep and the report read it.
///
/// A pipeline that sees `r` requests/s learns of an outage from its first failures; what it may add before its
/// breaker and budget stop retrying is a fixed number of retries, spread over `r` requests per second. So the
/// bound is 1.10× wherever `r ≥ 1`, and rises log-linearly to 1.5× at `r = 0.02` (one request every 50 s):
///
///     bound(r) = 1.10                                    for r ≥ 1
///     bound(r) = 1.10 + 0.40 × ln(1 / r) ÷ ln(50)        for 0.02 ≤ r < 1
///     bound(r) = 1.50                                    for r < 0.02
public enum OutageLoadBound {
    /// The rate from which the tight bound applies, in requests per second per pipeline.
    public static let busyRate = 1.0
    /// The quietest rate the sweep judges, in requests per second per pipeline.
    public static let quietRate = 0.02
    /// The bound at ``busyRate`` and above.
    public static let busyBound = 1.10
    /// The bound at ``quietRate`` and below.
    public static let quietBound = 1.5

    /// The largest load ratio a preset may cause during a full outage when one pipeline sees `rate`
    /// requests per second.
    ///
    /// - Parameter rate: Requests per second one pipeline sees.
    public static func maximum(rate: Double) -> Double {
        guard rate < busyRate else { return busyBound }
        guard rate > quietRate else { return quietBound }
        return busyBound + (quietBound - busyBound) * log(busyRate / rate) / log(busyRate / quietRate)
    }

    /// The formula, as the report prints it.
    public static let formula = "1.10 for r ≥ 1/s; 1.10 + 0.40 × ln(1/r) ÷ ln 50 down to 1.5 at r = 0.02/s"
}

/// What a ``RetryBudget`` allows, derived from its settings: the bound the outage goal judges every preset
/// against, and the attempts it leaves a brownout's requests.
///
/// Funded by requests (``RetryBudgetConfiguration/Funding/requests``), the budget allows ⌊ratio × n + floor⌋
/// retries in its window of W seconds holding n requests (floor = `minimumPerSecond` × W tokens), counted at the
/// moment of each retry. Split an outage of T seconds into m = ⌈T ÷ W'⌉ chunks of L = T ÷ m seconds,
/// W' = W × (buckets − 1) ÷ buckets (a retry leaves the sliding window after at least W'). Every retry of a chunk
/// is still in the window when the chunk's last retry is granted, and that window began at most W before the
/// chunk did, so a chunk holds at most ⌊ratio × n + floor⌋ retries for the n requests of the W + L seconds
/// ending with it: n ~ Poisson(r (W + L)) for a key or scope sending r requests per second. (The window of a
/// fixed instant would understate it: a quiet key retries exactly when its window happens to hold more requests
/// than usual.) No request makes more than `attempts` attempts:
///
///     load ≤ 1 + min(attempts − 1, m × E⌊ratio × N + floor⌋ ÷ (r × T)),  N ~ Poisson(r (W + T ÷ m))
///
/// Funded by failed first attempts (``RetryBudgetConfiguration/Funding/failedFirstAttempts``), the retries of
/// the last W seconds never pass ratio × the failed first attempts of the same W seconds, so by induction over
/// windows the retries of an outage never pass ratio × its failed first attempts (a healthy server left none in
/// the window before it). A scope whose window holds fewer than 1 ÷ ratio requests may also draw on the floor,
/// at most ⌊floor + ratio × n⌋ retries for the n requests of the outage, and only if some window is quiet:
///
///     load ≤ 1 + min(attempts − 1, ratio + Q × E[min(n, ⌊floor + ratio × n⌋)] ÷ (r × T)),  n ~ Poisson(r T),
///     Q = min(1, P(ratio × N₀ < 1) + P(ratio × N < 1) × ⌈T ÷ W'⌉),  N₀ ~ Poisson(r min(W, A)),  N ~ Poisson(r W)
///
/// where A is the scope's age when the outage begins: a scope younger than its window (an app that started A
/// seconds before the outage) has seen only A seconds of requests, so it is quiet more often.
/// The breaker's half-open probes are first attempts of requests the clients offered, so they add nothing
/// to the bound; a retry of a probe is a retry like any other. The bound holds without a breaker; a breaker
/// that trips sheds calls and keeps the load below it.
public enum RetryBudgetBound {
    /// E[f(N)] for N ~ Poisson(`mean`): sums the probabilities (in logarithms, so a large mean does not
    /// underflow) over the counts within 12 standard deviations of the mean; the rest is negligible.
    static func poissonExpectation(mean: Double, _ value: (Int) -> Double) -> Double {
        guard mean > 0 else { return value(0) }
        let spread = 12 * mean.squareRoot() + 30
        let first = Int(max(0, mean - spread).rounded(.down))
        let last = Int((mean + spread).rounded(.up))
        var expected = 0.0
        for count in first...last {
            expected += exp(Double(count) * log(mean) - mean - lgamma(Double(count) + 1)) * value(count)
        }
        return expected
    }

    /// E⌊ratio × N + floor⌋ for N ~ Poisson(`rate` × `span`): the retries a window of a budget funded by
    /// requests allows on average when the requests of `span` seconds count.
    ///
    /// - Parameters:
    ///   - budget: The budget's settings.
    ///   - rate: Requests per second the key or scope sends.
    ///   - span: The seconds whose requests count (default: the budget's window).
    public static func retriesPerWindow(
        _ budget: RetryBudgetConfiguration, rate: Double, span: Double? = nil
    ) -> Double {
        let floor = budget.minimumPerSecond * budget.window.seconds
        return poissonExpectation(mean: max(rate, 0) * (span ?? budget.window.seconds)) { count in
            (budget.ratio * Double(count) + floor).rounded(.down)
        }
    }

    /// The chance that a budget funded by failed first attempts finds its window quiet (fewer than 1 ÷ ratio
    /// requests) at least once in an outage of `outage` seconds, summed over the windows the outage spans, at
    /// most 1: the window the outage starts in, which holds the requests of min(W, `age`) seconds, and
    /// ⌈T ÷ W'⌉ later ones of W seconds each, each quiet with P(ratio × N < 1) for N ~ Poisson(r × its span).
    /// A scope younger than its window has not yet seen a whole window of requests, so it is quiet more often.
    ///
    /// - Parameters:
    ///   - budget: The budget's settings.
    ///   - rate: Requests per second the key or scope sends.
    ///   - outage: The outage's length in seconds.
    ///   - age: How long the scope had been counting when the outage began, in seconds (default: long enough
    ///     to have filled its window).
    public static func quietChance(
        _ budget: RetryBudgetConfiguration, rate: Double, outage: Double, age: Double = .infinity
    ) -> Double {
        let window = budget.window.seconds
        func quiet(span: Double) -> Double {
            poissonExpectation(mean: max(rate, 0) * span) { budget.ratio * Double($0) < 1 ? 1 : 0 }
        }
        let laterWindows = (outage / slidWindow(budget)).rounded(.up)
        return min(1, quiet(span: min(window, max(age, 0))) + quiet(span: window) * laterWindows)
    }

    /// W' = W × (buckets − 1) ÷ buckets: the least time a retry stays in the sliding window.
    static func slidWindow(_ budget: RetryBudgetConfiguration) -> Double {
        let buckets = Double(max(budget.buckets, 2))
        return budget.window.seconds * (buckets - 1) / buckets
    }

    /// The largest outage load (server arrivals ÷ requests offered while the outage lasts) the budget allows a
    /// key or scope sending `rate` requests per second, for an outage of `outage` seconds.
    ///
    /// - Parameters:
    ///   - budget: The budget's settings.
    ///   - rate: Requests per second the key or scope sends.
    ///   - outage: The outage's length in seconds.
    ///   - age: How long the scope had been counting when the outage began, in seconds (default: long enough
    ///     to have filled its window).
    ///   - attempts: The most attempts one request makes.
    public static func outageLoad(
        _ budget: RetryBudgetConfiguration, rate: Double, outage: Double, age: Double = .infinity, attempts: Int
    ) -> Double {
        let offered = max(rate * outage, 1e-9)
        let retries: Double
        if budget.funding == .requests {
            let chunks = max((outage / slidWindow(budget)).rounded(.up), 1)
            let span = budget.window.seconds + outage / chunks
            retries = chunks * retriesPerWindow(budget, rate: rate, span: span) / offered
        } else {
            let floor = budget.minimumPerSecond * budget.window.seconds
            let floorRetries = poissonExpectation(mean: max(rate, 0) * outage) { count in
                min(Double(count), (floor + budget.ratio * Double(count)).rounded(.down))
            }
            retries = budget.ratio + quietChance(budget, rate: rate, outage: outage, age: age) * floorRetries / offered
        }
        return 1 + min(Double(max(attempts - 1, 0)), retries)
    }

    /// The retries per request a budget funded by requests allows a key or scope sending `rate` requests per
    /// second, on average: E⌊ratio × N + floor⌋ ÷ (r × W).
    ///
    /// - Parameters:
    ///   - budget: The budget's settings.
    ///   - rate: Requests per second the key or scope sends.
    public static func retriesPerRequest(_ budget: RetryBudgetConfiguration, rate: Double) -> Double {
        retriesPerWindow(budget, rate: rate) / max(rate * budget.window.seconds, 1e-9)
    }

    /// The formula, as the report prints it.
    public static let formula =
        "by requests: 1 + min(attempts − 1, m × E⌊ratio × N + floor⌋ ÷ (r T)), m = ⌈T ÷ W'⌉, N ~ Poisson(r (W + T ÷ m)); "
        + "by failed first attempts: 1 + min(attempts − 1, ratio + Q × E[min(n, ⌊floor + ratio × n⌋)] ÷ (r T)), "
        + "n ~ Poisson(r T), Q = P(some window holds < 1 ÷ ratio requests)"
}
