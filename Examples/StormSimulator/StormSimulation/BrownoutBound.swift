import Foundation
import ResilienceKit

/// The success a retrying pipeline can reach in a brownout that fails each attempt with probability `p`, given
/// its attempts and its retry budget: the bound the brownout goal judges against.
///
/// Every retry goes to a request that failed and succeeds with probability 1 − p, so with `a` retries per
/// request the success is (1 − p)(1 + a). n attempts need p + p² + … + pⁿ⁻¹ retries per request, so
///
///     success ≤ (1 − p) × (1 + min(a, p + … + pⁿ⁻¹))
///
/// which is 1 − pⁿ where the budget allows n attempts. A budget of ratio ρ funded by requests, plus f retries
/// per second over a window of W seconds, allows ⌊ρN + fW⌋ retries in a window holding N requests; at r
/// requests/s, N is Poisson(rW), so a = E⌊ρN + fW⌋ ÷ rW (about ρ + f ÷ r, less the rounding down). Funded by
/// failed first attempts, a retry refused at its failure goes after its backoff once a later first attempt has
/// succeeded, within ⌊ρN⌋ a window; a window with fewer than 1 ÷ ρ requests draws on the floor instead, earned
/// back at ρ per request and spent only on failures: a = (E⌊ρN⌋ + min(ρ, p) × E[N; ρN < 1]) ÷ rW. That assumes
/// every failure sees a success during its backoff (1 − e^(−r (1 − p) × backoff)); the failures that do not get
/// ⌊ρF⌋ of their own, F ≤ N, so a is the bound.
struct BrownoutBound {
    /// Retries per request that n attempts need: p + … + pⁿ⁻¹.
    let retriesNeeded: Double
    /// Retries per request the budget allows (infinity without a budget).
    let retriesAllowed: Double
    /// The failure probability.
    let p: Double

    init(p: Double, attempts: Int, budget: RetryBudgetConfiguration?, ratePerClient: Double) {
        self.p = p
        retriesNeeded = (1..<max(attempts, 1)).reduce(0.0) { $0 + pow(p, Double($1)) }
        retriesAllowed = budget.map { Self.allowance($0, p: p, ratePerClient: ratePerClient) } ?? .infinity
    }

    /// Whether the budget, not the attempts, limits the retries.
    var isBudgetLimited: Bool { retriesAllowed < retriesNeeded }

    /// The bound on the success rate: (1 − p)(1 + min(a, p + … + pⁿ⁻¹)).
    var success: Double { (1 - p) * (1 + min(retriesAllowed, retriesNeeded)) }

    /// The retries per request a budget allows a client of `rate` in a brownout of failure probability `p`:
    /// E⌊ρN + fW⌋ ÷ rW funded by requests, (E⌊ρN⌋ + min(ρ, p) × E[N; ρN < 1]) ÷ rW funded by failed first
    /// attempts, with N ~ Poisson(rW).
    static func allowance(_ budget: RetryBudgetConfiguration, p: Double, ratePerClient rate: Double) -> Double {
        let window = budget.window.seconds
        let mean = rate * window
        guard mean > 0 else { return .infinity }
        let ratio = budget.ratio
        if budget.funding == .requests {
            let floor = budget.minimumPerSecond * window
            return RetryBudgetBound.poissonExpectation(mean: mean) { (ratio * Double($0) + floor).rounded(.down) }
                / mean
        } else {
            let funded = RetryBudgetBound.poissonExpectation(mean: mean) { (ratio * Double($0)).rounded(.down) }
            let quiet = RetryBudgetBound.poissonExpectation(mean: mean) { ratio * Double($0) < 1 ? Double($0) : 0 }
            return (funded + min(ratio, p) * quiet) / mean
        }
    }
}
