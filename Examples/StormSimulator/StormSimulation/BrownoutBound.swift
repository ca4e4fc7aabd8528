import Foundation
import ResilienceKit

/// The success a retrying pipeline reaches in a brownout that fails each attempt with probability `p`, given
/// its attempts and its retry budget: what the brownout goal judges against.
///
/// **The formula.** Every retry goes to a request that failed and succeeds with probability 1 − p, so with `a`
/// retries per request the success is (1 − p)(1 + a). n attempts need p + p² + … + pⁿ⁻¹ retries per request, so
///
///     success = (1 − p) × (1 + min(a, p + … + pⁿ⁻¹))
///
/// which is 1 − pⁿ where the budget allows n attempts.
///
/// **What the budget allows.** Funded by requests, a budget of ratio ρ plus f retries per second over a window
/// of W seconds allows ⌊ρN + fW⌋ retries in a window holding N requests; at r requests/s N is Poisson(rW), so
/// a = E⌊ρN + fW⌋ ÷ rW. Funded by failed first attempts (`RetryBudgetConfiguration.smoothed`), over a client's
/// run of T seconds (M ~ Poisson(rT) requests), two rules add up:
/// - A window holding 1 ÷ ρ requests or more (counting the failing request) allows ⌊ρF⌋ retries, and ⌊ρN⌋
///   once a later first attempt has succeeded (the evidence rule). The first window holds the requests since
///   the client's start, N₀ ~ Poisson(r min(T, W)); each later second adds E⌊ρN⌋ ÷ W: E⌊ρN₀⌋ + (T − W)⁺ ×
///   E⌊ρN⌋ ÷ W retries. That takes every failure to see a success during its backoff d (probability about
///   1 − e^(−r(1 − p)d)) and a spare retry in the window when it asks; where fewer do (a 250 ms backoff, 0.5
///   requests/s, or demand ≈ supply at p ≈ ρ), the retries fall short of it.
/// - A quieter window draws on the floor instead, and the floor does not slide with the window: it starts full
///   (C = minimumPerSecond × W retries, one for the presets), each first attempt earns back ρ up to C, and a
///   retry needs a whole one. So a fresh scope retries its first failure in a quiet window at once, and after
///   each floor retry the next ⌈1 ÷ ρ⌉ − 1 requests (9 at ρ = 0.1) cannot retry from it. Which request retries
///   is a Markov chain over the credit, in steps of ρ: each request adds one step (at most C ÷ ρ), then, with
///   probability q p (its window quiet, and its first attempt failed), takes ⌈1 ÷ ρ⌉ steps if it holds them.
///   The m-th request's window is quiet for sure while m < 1 ÷ ρ (it holds at most m requests), and later only
///   if it starts after the first window, then with q = P(ρ(1 + Poisson(rW)) < 1). The floor gives the
///   chain's expected retries over M requests, less those of its first ⌈1 ÷ ρ⌉ − 1 requests where N₀ reaches
///   1 ÷ ρ (the first window's ⌊ρN₀⌋ counts them too). In steady state that is one retry every
///   ⌈1 ÷ ρ⌉ − 1 + 1 ÷ (q p) requests (0.096 at p = 0.7, q = 1), but a run short against the client's rate is
///   mostly the full floor: at 0.02 requests/s over 10 s, M ~ Poisson(0.2) and a = (1 − e^(−0.2p)) ÷ 0.2
///   (0.65 at p = 0.7: 49.6 %, where the steady state's 0.1 gave 33 %); at 0.5 requests/s over 10 s,
///   (1 − e^(−5p)) ÷ 5 less a little (0.155 at p = 0.3: 80.9 %, not 75.2 %).
/// A request whose retry failed in a quiet window finds the floor spent, so the floor gives at most one retry
/// per request; `min(a, …)` above caps the rest.
///
/// **Judging one seed.** A seed's success has the sampling noise of the server's coin flips, √(p(1 − p) ÷ N)
/// over N requests: 1.6 pp at p = 0.5 for the 1,000 requests of a quick run, 0.35 pp for the 20,000 of a full
/// one, against the 0.5 pp the goal allows. ``expectedSuccess(given:requests:)`` evaluates the formula at the
/// failures the server actually produced in that seed (a control variate): the first attempts' failures F₁
/// instead of pN (and the floor's allowance at F₁ ÷ N, since it spends on failures), the failed attempts that
/// the attempt limit lets retry (F₁ + … + Fₙ₋₁) instead of N(p + … + pⁿ⁻¹), and the retries' observed success
/// instead of 1 − p (`AttemptTally` counts them). Every coin flip then cancels between success and bound, and
/// what is left is the design's own decision: whether the retries made match min(aN, F₁ + … + Fₙ₋₁). With
/// the first attempts alone the retries' flips would remain, √(p · pⁿ⁻¹(1 − pⁿ⁻¹) ÷ N) for n attempts: 0.97 pp
/// at p = 0.5, n = 3 over 1,000 requests, and 23,500 requests a seed for 0.2 pp.
struct BrownoutBound {
    /// Retries per request that n attempts need: p + … + pⁿ⁻¹.
    let retriesNeeded: Double
    /// Retries per request the budget allows (infinity without a budget).
    let retriesAllowed: Double
    /// The failure probability.
    let p: Double
    /// The attempts the retry policy allows.
    let attempts: Int
    /// The budget, the client's requests per second and the seconds it starts requests for.
    private let budget: (configuration: RetryBudgetConfiguration, rate: Double, duration: Double)?

    /// The bound for a client of `ratePerClient` requests/s that starts requests for `duration` seconds.
    init(p: Double, attempts: Int, budget: RetryBudgetConfiguration?, ratePerClient: Double, duration: Double) {
        self.p = p
        self.attempts = max(attempts, 1)
        retriesNeeded = (1..<max(attempts, 1)).reduce(0.0) { $0 + pow(p, Double($1)) }
        self.budget = budget.map { ($0, ratePerClient, duration) }
        retriesAllowed =
            budget.map { Self.allowance($0, p: p, ratePerClient: ratePerClient, duration: duration) } ?? .infinity
    }

    /// Whether the budget, not the attempts, limits the retries.
    var isBudgetLimited: Bool { retriesAllowed < retriesNeeded }

    /// The expected success rate: (1 − p)(1 + min(a, p + … + pⁿ⁻¹)).
    var success: Double { (1 - p) * (1 + min(retriesAllowed, retriesNeeded)) }

    /// The success the formula gives at the failures the server produced in one seed of `requests` requests:
    /// 1 − p̂ + s × min(a(p̂), p̂ + (F₂ + … + Fₙ₋₁) ÷ N), with p̂ = F₁ ÷ (first attempts made), a(p̂) the allowance
    /// at p̂ (the floor spends on failures) and s the share of the retries made that succeeded (1 − p when none
    /// was made). A request the pipeline refused before any attempt (an open breaker) is expected to have fared
    /// as the others did, so the refusal costs the seed its margin.
    func expectedSuccess(given counts: AttemptCounts, requests: Int) -> Double {
        let firstAttempts = counts.made(number: 1)
        guard requests > 0, firstAttempts > 0 else { return success }
        let failureRate = Double(counts.failed(number: 1)) / Double(firstAttempts)
        let laterFailures = (2..<max(attempts, 2)).reduce(0) { $0 + counts.failed(number: $1) }
        let retriable = failureRate + Double(laterFailures) / Double(requests)
        let retryShare = counts.retries > 0 ? Double(counts.successfulRetries) / Double(counts.retries) : 1 - p
        let allowed =
            budget.map {
                Self.allowance($0.configuration, p: failureRate, ratePerClient: $0.rate, duration: $0.duration)
            } ?? .infinity
        return 1 - failureRate + retryShare * min(allowed, attempts > 1 ? retriable : 0)
    }

    /// The retries per request a budget allows a client of `rate` requests/s in a brownout of failure
    /// probability `p` over a run of `duration` seconds T: E⌊ρN + fW⌋ ÷ rW funded by requests, N ~ Poisson(rW);
    /// funded by failed first attempts, (E⌊ρN₀⌋ + (T − W)⁺ × E⌊ρN⌋ ÷ W + the floor's retries − the floor's first
    /// retry where N₀ ≥ 1 ÷ ρ) ÷ rT, with N₀ ~ Poisson(r min(T, W)) the requests of the first window (which
    /// counts the floor's retry among its ⌊ρN₀⌋) (``floorRetries(_:p:ratePerClient:duration:)``).
    static func allowance(
        _ budget: RetryBudgetConfiguration, p: Double, ratePerClient rate: Double, duration: Double
    ) -> Double {
        let window = budget.window.seconds
        let mean = rate * window
        guard mean > 0 else { return .infinity }
        let ratio = budget.ratio
        if budget.funding == .requests {
            let floor = budget.minimumPerSecond * window
            return RetryBudgetBound.poissonExpectation(mean: mean) { (ratio * Double($0) + floor).rounded(.down) }
                / mean
        }
        let funded = { (mean: Double) in
            RetryBudgetBound.poissonExpectation(mean: mean) { (ratio * Double($0)).rounded(.down) }
        }
        let requests = rate * duration
        guard requests > 0 else { return funded(mean) / mean }
        let first = funded(rate * min(duration, window))
        let later = max(duration - window, 0) * funded(mean) / window
        let floor = floorRetries(budget, p: p, ratePerClient: rate, duration: duration)
        return (first + later + floor.total - floor.countedInFirstWindow) / requests
    }

    /// The retries one client's floor grants over a run of `duration` seconds T at `rate` requests/s, funded by
    /// failed first attempts: the expected retries of the credit's Markov chain (full at the start, one step of
    /// ρ per request up to C ÷ ρ, ⌈1 ÷ ρ⌉ steps taken with probability q p where it holds them) over
    /// M ~ Poisson(rT) requests, Σₘ P(M ≥ m) × P(the m-th request retries). The m-th request finds its window
    /// quiet for sure while m < 1 ÷ ρ (its window holds at most m requests), and otherwise only once it starts
    /// after the first window, with the stationary q = P(ρ(1 + Poisson(rW)) < 1). Also the part of it the first
    /// window's ⌊ρN₀⌋ counts as well: the retries of its first ⌈1 ÷ ρ⌉ − 1 requests, where N₀ reaches 1 ÷ ρ.
    static func floorRetries(
        _ budget: RetryBudgetConfiguration, p: Double, ratePerClient rate: Double, duration: Double
    ) -> (total: Double, countedInFirstWindow: Double) {
        let ratio = budget.ratio
        guard ratio > 0, rate > 0, duration > 0 else { return (0, 0) }
        let window = budget.window.seconds
        // The steps of ρ a retry costs, and the most the floor holds (C ÷ ρ), as the budget counts them.
        let cost = Int((1 / ratio - 1e-9).rounded(.up))
        let capacity = Int((budget.minimumPerSecond * window / ratio + 1e-9).rounded(.down))
        guard capacity >= cost else { return (0, 0) }
        let stationaryQuiet = RetryBudgetBound.poissonExpectation(mean: rate * window) {
            ratio * Double($0 + 1) < 1 ? 1 : 0
        }
        let failure = min(max(p, 0), 1)
        let mean = rate * duration
        let windowMean = rate * min(window, duration)
        let last = Int((mean + 12 * mean.squareRoot() + 30).rounded(.up))
        var credit = Array(repeating: 0.0, count: capacity + 1)
        credit[capacity] = 1
        // P(M ≥ m) over the run and P(the m-th request starts within the first window), down the Poisson terms
        // (each from its logarithm: e^(−rT) underflows from rT ≈ 745).
        func poisson(_ count: Int, _ mean: Double) -> Double {
            mean > 0 ? exp(Double(count) * log(mean) - mean - lgamma(Double(count) + 1)) : (count == 0 ? 1 : 0)
        }
        var (runSurvival, windowSurvival) = (1 - poisson(0, mean), 1 - poisson(0, windowMean))
        var (total, early) = (0.0, 0.0)
        for request in 1...last {
            let afterFirstWindow = runSurvival > 0 ? max(runSurvival - windowSurvival, 0) / runSurvival : 0
            let chance = failure * (request < cost ? 1 : afterFirstWindow * stationaryQuiet)
            var next = Array(repeating: 0.0, count: capacity + 1)
            var retrying = 0.0
            for (steps, share) in credit.enumerated() where share > 0 {
                let held = min(steps + 1, capacity)
                if held >= cost {
                    retrying += share * chance
                    next[held - cost] += share * chance
                    next[held] += share * (1 - chance)
                } else {
                    next[held] += share
                }
            }
            total += max(runSurvival, 0) * retrying
            if request < cost { early += retrying }
            credit = next
            runSurvival -= poisson(request, mean)
            windowSurvival -= poisson(request, windowMean)
        }
        let firstWindowQuiet = RetryBudgetBound.poissonExpectation(mean: windowMean) { $0 < cost ? 1 : 0 }
        let firstWindowFills = 1 - firstWindowQuiet
        return (total, early * firstWindowFills)
    }
}
