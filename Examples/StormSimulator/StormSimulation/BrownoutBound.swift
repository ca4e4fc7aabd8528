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
/// which is 1 − pⁿ where the budget allows n attempts. A budget of ratio ρ plus f retries per second over a
/// window of W seconds allows ⌊ρN + fW⌋ retries in a window holding N requests; at r requests/s, N is
/// Poisson(rW), so a = E⌊ρN + fW⌋ ÷ rW (about ρ + f ÷ r, less the rounding down: 0.105 rather than 0.108 at
/// 4 requests/s with the presets' 10 % and one retry per 30 s).
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
        retriesAllowed = budget.map { Self.allowance($0, ratePerClient: ratePerClient) } ?? .infinity
    }

    /// Whether the budget, not the attempts, limits the retries.
    var isBudgetLimited: Bool { retriesAllowed < retriesNeeded }

    /// The bound on the success rate: (1 − p)(1 + min(a, p + … + pⁿ⁻¹)).
    var success: Double { (1 - p) * (1 + min(retriesAllowed, retriesNeeded)) }

    /// E⌊ρN + fW⌋ ÷ rW with N ~ Poisson(rW): the retries per request a budget allows a client of `rate`.
    static func allowance(_ budget: RetryBudgetConfiguration, ratePerClient rate: Double) -> Double {
        let window = budget.window.seconds
        let mean = rate * window
        guard mean > 0 else { return .infinity }
        let floor = budget.minimumPerSecond * window
        let spread = 12 * mean.squareRoot() + 12
        var expected = 0.0
        for count in max(0, Int(mean - spread))...Int(mean + spread) {
            let k = Double(count)
            let probability = exp(-mean + k * log(mean) - lgamma(k + 1))
            expected += probability * (budget.ratio * k + floor).rounded(.down)
        }
        return expected / mean
    }
}
