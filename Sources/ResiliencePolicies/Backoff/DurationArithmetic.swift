/// Overflow-safe conversions between `Duration` and floating-point seconds.
///
/// Backoff grows geometrically, so intermediate values are computed as `Double` (which saturates to
/// infinity instead of trapping) and converted back only after clamping to ``maximumSeconds``.
enum DurationArithmetic {
    /// The largest delay any policy produces: about 31 years. Keeps conversions far from `Int64` limits.
    static let maximumSeconds: Double = 1_000_000_000

    /// `duration` in seconds.
    static func seconds(_ duration: Duration) -> Double {
        let components = duration.components
        return Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }

    /// A duration of `seconds`, clamped to `0...maximumSeconds`; NaN becomes zero.
    static func duration(seconds: Double) -> Duration {
        guard seconds.isFinite || seconds == .infinity else { return .zero }
        let clamped = min(max(seconds, 0), maximumSeconds)
        return .nanoseconds(Int64((clamped * 1e9).rounded()))
    }

}
