/// Overflow-safe conversions between `Duration` and plain numbers, shared by backoff, breakers and limiters.
///
/// Backoff grows geometrically, so intermediate values are computed as `Double` (which saturates to
/// infinity instead of trapping) and converted back only after clamping to ``maximumSeconds``.
@usableFromInline
enum DurationArithmetic {
    /// The largest delay any policy produces: about 31 years. Keeps conversions far from `Int64` limits.
    static let maximumSeconds: Double = 1_000_000_000

    /// `duration` in seconds: whole seconds plus attoseconds × 10⁻¹⁸, as `duration.components` splits it.
    static func seconds(_ duration: Duration) -> Double {
        let high = duration._high
        let low = duration._low
        // Under a second (a round trip, mostly): no whole seconds, and 0 + x is x.
        if high == 0 && low < 1_000_000_000_000_000_000 { return Double(Int64(low)) * 1e-18 }
        if let (whole, attoseconds) = split(duration) {
            return Double(Int64(whole)) + Double(Int64(attoseconds)) * 1e-18
        }
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            // The same split (truncated towards zero) by one native 128-bit division: `components` divides
            // in emulated 128-bit arithmetic, about 190 instructions, twice per call of the adaptive limiter.
            let (seconds, attoseconds) = duration.attoseconds.quotientAndRemainder(
                dividingBy: 1_000_000_000_000_000_000)
            return Double(Int64(seconds)) + Double(Int64(attoseconds)) * 1e-18
        }
        let components = duration.components
        return Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }

    /// The largest delay any policy produces, as a duration.
    @usableFromInline static let maximum = Duration.seconds(Int64(maximumSeconds))

    /// `duration` clamped to `0...maximum`: safe to add to an instant and to sleep for.
    @inlinable
    static func clamp(_ duration: Duration) -> Duration {
        duration < .zero ? .zero : (duration > maximum ? maximum : duration)
    }

    /// `duration`'s whole seconds and the attoseconds left over, as `duration.components` splits it, for every
    /// duration from zero to 2⁸² attoseconds (56 days); `nil` for the others.
    ///
    /// Without a 128-bit division (`components` divides in emulated 128-bit arithmetic, about 190
    /// instructions; the breakers and the retry budget convert on every call): 10¹⁸ = 2¹⁸ × 5¹⁸, so the whole
    /// seconds are the attoseconds shifted right by 18 (a 64-bit value there) divided by 5¹⁸, a 64-bit
    /// division by a constant (a multiplication); the remainder, below 10¹⁸, is exact in the low 64 bits.
    static func split(_ duration: Duration) -> (seconds: UInt64, attoseconds: UInt64)? {
        let high = duration._high
        let low = duration._low
        guard high >= 0 && high < 1 << 18 else { return nil }
        let whole = (UInt64(high) << 46 | low >> 18) / 3_814_697_265_625
        return (whole, low &- whole &* 1_000_000_000_000_000_000)
    }

    /// A duration of `seconds`, clamped to `0...maximumSeconds`; NaN becomes zero.
    static func duration(seconds: Double) -> Duration {
        guard seconds.isFinite || seconds == .infinity else { return .zero }
        let clamped = min(max(seconds, 0), maximumSeconds)
        return .nanoseconds(Int64((clamped * 1e9).rounded()))
    }

    /// `duration` in whole nanoseconds, saturating at the `Int64` limits.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        // Below 2⁸² attoseconds the whole seconds times 10⁹ (at most 4.9 × 10¹⁵) cannot overflow.
        if let (whole, attoseconds) = split(duration) {
            return Int64(whole) * 1_000_000_000 + Int64(attoseconds / 1_000_000_000)
        }
        let parts = duration.components
        let (whole, overflow) = parts.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return parts.seconds < 0 ? .min : .max }
        let (total, overflowSum) = whole.addingReportingOverflow(parts.attoseconds / 1_000_000_000)
        if overflowSum { return parts.seconds < 0 ? .min : .max }
        return total
    }

    /// `lhs` divided by `rhs`, rounded towards negative infinity (`rhs` > 0).
    static func floorDivide(_ lhs: Int64, _ rhs: Int64) -> Int64 {
        let quotient = lhs / rhs
        return (lhs % rhs != 0 && lhs < 0) ? quotient - 1 : quotient
    }
}
