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
/// **What the budget allows.** Without a budget, a = ∞. With one, a is what the budget's rule grants a scope
/// of the client's rate over the run's duration in that brownout, run alone (``BudgetRuleModel``: the rule
/// written from its documentation, on Poisson arrivals, the scenario's round trips and the retry policy's
/// delays, over 200,000 requests), so the bound is what the budget allows and the goal asks that the pipeline
/// around it (breaker, limiter, timeouts, the server's queue) lose no more than 0.5 pp on top. A closed form
/// overstates it: a sliding window refuses retries its average allowance would grant where demand and supply
/// are about equal (p ≈ ratio: 1.5 pp of success for `.standard` at p = 0.1), and the floor's credit is earned by
/// the bursts that fill a window past 1 ÷ ratio requests and so refuse it (0.4–0.9 pp for `.interactive` at
/// 0.5 requests/s). The model runs at p and at p ± 0.02 on the same random draws, and the allowance at the
/// failure rate a seed saw is the parabola through the three.
///
/// **Judging one seed.** A seed's success has the sampling noise of the server's coin flips, √(p(1 − p) ÷ N)
/// over N requests: 1.6 pp at p = 0.5 for the 1,000 requests of a quick run, 0.35 pp for the 20,000 of a full
/// one, against the 0.5 pp the goal allows. ``expectedSuccess(given:requests:)`` evaluates the formula at the
/// failures the server actually produced in that seed (a control variate): the first attempts' failures F₁
/// instead of pN (and the budget's allowance a at F₁ ÷ N), the failed attempts that
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
    /// The budget's retries per request at the failure probabilities around `p` (nil without a budget).
    private let allowanceCurve: (points: [Double], retries: [Double])?

    /// The bound for attempts that fail with probability `p`, `attempts` of them at most, where `model` (nil
    /// without a budget) runs the budget's rule over `modelRequests` requests at each failure probability.
    init(p: Double, attempts: Int, model: BudgetRuleModel?, modelRequests: Int = Self.modelRequests) {
        self.p = p
        self.attempts = max(attempts, 1)
        retriesNeeded = (1..<max(attempts, 1)).reduce(0.0) { $0 + pow(p, Double($1)) }
        guard let model, p > 0 else {
            allowanceCurve = nil
            retriesAllowed = .infinity
            return
        }
        let step = 0.02
        let low = min(max(p - step, 0), 1 - 2 * step)
        let points = [low, low + step, low + 2 * step]
        let retries = points.map { model.run(p: $0, requests: modelRequests, seed: 1).retriesPerRequest }
        allowanceCurve = (points, retries)
        retriesAllowed = Self.interpolate(points, retries, at: p)
    }

    /// The requests the budget's rule is run over at each failure probability: its success then has a sampling
    /// spread of at most 0.11 pp (√(0.25 ÷ 200,000)), against the 0.5 pp the goal allows.
    static let modelRequests = 200_000

    /// Whether the budget, not the attempts, limits the retries.
    var isBudgetLimited: Bool { retriesAllowed < retriesNeeded }

    /// The expected success rate: (1 − p)(1 + min(a, p + … + pⁿ⁻¹)).
    var success: Double { (1 - p) * (1 + min(retriesAllowed, retriesNeeded)) }

    /// The success the formula gives at the failures the server produced in one seed of `requests` requests:
    /// 1 − p̂ + s × min(a(p̂), p̂ + (F₂ + … + Fₙ₋₁) ÷ N), with p̂ = F₁ ÷ (first attempts made), a(p̂) the budget's
    /// allowance at p̂ and s the share of the retries made that succeeded (1 − p when none was made). A request
    /// the pipeline refused before any attempt (an open breaker) is expected to have fared as the others did, so
    /// the refusal costs the seed its margin.
    func expectedSuccess(given counts: AttemptCounts, requests: Int) -> Double {
        let firstAttempts = counts.made(number: 1)
        guard requests > 0, firstAttempts > 0 else { return success }
        let failureRate = Double(counts.failed(number: 1)) / Double(firstAttempts)
        let laterFailures = (2..<max(attempts, 2)).reduce(0) { $0 + counts.failed(number: $1) }
        let retriable = failureRate + Double(laterFailures) / Double(requests)
        let retryShare = counts.retries > 0 ? Double(counts.successfulRetries) / Double(counts.retries) : 1 - p
        let allowed = retriesAllowed(atFailureRate: failureRate)
        return 1 - failureRate + retryShare * min(allowed, attempts > 1 ? retriable : 0)
    }

    /// The retries per request the budget allows where first attempts fail at `rate` (near p): the parabola
    /// through the budget's rule at p and p ± 0.02; infinity without a budget.
    func retriesAllowed(atFailureRate rate: Double) -> Double {
        allowanceCurve.map { max(Self.interpolate($0.points, $0.retries, at: rate), 0) } ?? .infinity
    }

    /// The parabola through three points (x, y), at `x`.
    static func interpolate(_ xs: [Double], _ ys: [Double], at x: Double) -> Double {
        var value = 0.0
        for i in 0..<3 {
            var weight = 1.0
            for j in 0..<3 where j != i { weight *= (x - xs[j]) / (xs[i] - xs[j]) }
            value += weight * ys[i]
        }
        return value
    }
}
