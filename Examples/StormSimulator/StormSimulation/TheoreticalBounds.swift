/// The closed forms for independent failures with probability p and at most n attempts.
public enum TheoreticalBounds {
    /// The probability that one of n attempts succeeds: 1 − pⁿ.
    public static func success(p: Double, attempts n: Int) -> Double {
        1 - power(p, n)
    }

    /// The expected attempts per request: 1 + p + … + pⁿ⁻¹ = (1 − pⁿ)/(1 − p), which is n when p = 1.
    public static func load(p: Double, attempts n: Int) -> Double {
        if p >= 1 { return Double(max(n, 1)) }
        return (1 - power(p, n)) / (1 - p)
    }

    private static func power(_ base: Double, _ exponent: Int) -> Double {
        var result = 1.0
        for _ in 0..<max(exponent, 0) { result *= base }
        return result
    }
}
