/// Conversions between `Duration` and plain numbers for the breakers and limiters.
enum BreakerDurationArithmetic {
    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        let parts = duration.components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }

    /// `duration` in whole nanoseconds (saturating).
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let parts = duration.components
        let (whole, overflow) = parts.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return parts.seconds < 0 ? .min : .max }
        let (total, overflowSum) = whole.addingReportingOverflow(parts.attoseconds / 1_000_000_000)
        if overflowSum { return parts.seconds < 0 ? .min : .max }
        return total
    }

    /// A duration of `seconds`, rounded up to whole nanoseconds and clamped to `0...1e9` seconds (so
    /// floating-point noise never turns "4 s" into "3.999999999 s" and garbage never traps).
    static func duration(seconds: Double) -> Duration {
        guard seconds.isFinite, seconds > 0 else { return .zero }
        let clamped = min(seconds, 1e9)
        let nanoseconds = (clamped * 1e9).rounded(.up)
        let whole = Int64(clamped.rounded(.down))
        let rest = Int64(nanoseconds - Double(whole) * 1e9)
        return .seconds(whole) + .nanoseconds(max(0, rest))
    }

    /// `lhs` divided by `rhs`, rounded towards negative infinity (`rhs` > 0).
    static func floorDivide(_ lhs: Int64, _ rhs: Int64) -> Int64 {
        let quotient = lhs / rhs
        return (lhs % rhs != 0 && lhs < 0) ? quotient - 1 : quotient
    }
}
