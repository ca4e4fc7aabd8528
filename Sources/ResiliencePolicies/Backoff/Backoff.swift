import Foundation

/// How long to wait before retry *n*, before jitter: exponential, linear, constant or decorrelated.
///
/// A value type with static sugar. Every formula is overflow-safe: at retry 10,000 (or `Int.max`) the
/// delay is the ``cap``, never a trap or a negative value.
///
/// ```swift
/// let backoff = Backoff.exponential(base: .seconds(1), multiplier: 2, cap: .seconds(300))
/// backoff.delay(forRetry: 9)   // 256 s
/// backoff.delay(forRetry: 10)  // 300 s (capped)
/// ```
public struct Backoff: Sendable, Hashable, CustomStringConvertible {
    /// The shape of the curve: a closed set that can grow without breaking anyone's code. A name this
    /// version does not know is rejected (`init?(rawValue:)` returns `nil`), never treated as another shape.
    public struct Shape: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Kind: String, CaseIterable {
            case exponential, linear, constant, decorrelated
        }

        fileprivate let kind: Kind

        fileprivate init(_ kind: Kind) { self.kind = kind }

        /// The shape named `rawValue` (`"exponential"`, `"linear"`, `"constant"`, `"decorrelated"`), or `nil`
        /// for a name this version does not know.
        ///
        /// - Parameter rawValue: The shape's name.
        public init?(rawValue: String) {
            guard let kind = Kind(rawValue: rawValue) else { return nil }
            self.kind = kind
        }

        /// The identifier.
        public var rawValue: String { kind.rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// `base × multiplier^(n−1)`.
        public static let exponential = Shape(.exponential)
        /// `base + increment × (n−1)`.
        public static let linear = Shape(.linear)
        /// `base` every time.
        public static let constant = Shape(.constant)
        /// AWS "decorrelated jitter": uniform in `base ... previous × 3`, capped (random by itself).
        public static let decorrelated = Shape(.decorrelated)
    }

    /// The curve.
    public var shape: Shape
    /// The first delay.
    public var base: Duration
    /// The growth factor per retry (exponential).
    public var multiplier: Double
    /// The growth per retry (linear).
    public var increment: Duration
    /// The largest delay before jitter.
    public var cap: Duration

    /// Creates a backoff; prefer the static constructors.
    ///
    /// - Parameters:
    ///   - shape: The curve.
    ///   - base: The first delay.
    ///   - multiplier: The growth factor per retry (exponential; decorrelated uses it as its upper factor).
    ///   - increment: The growth per retry (linear).
    ///   - cap: The largest delay before jitter.
    public init(
        shape: Shape, base: Duration, multiplier: Double = 2, increment: Duration = .zero,
        cap: Duration = .seconds(300)
    ) {
        self.shape = shape
        self.base = base
        self.multiplier = multiplier
        self.increment = increment
        self.cap = cap
    }

    /// `base × multiplier^(n−1)`, at most `cap` (1 s × 2 with a 300 s cap by default).
    public static func exponential(
        base: Duration = .seconds(1), multiplier: Double = 2, cap: Duration = .seconds(300)
    ) -> Backoff {
        Backoff(shape: .exponential, base: base, multiplier: multiplier, cap: cap)
    }

    /// `base + increment × (n−1)`, at most `cap` (the usual curve for timeouts).
    public static func linear(
        base: Duration = .seconds(1), increment: Duration? = nil, cap: Duration = .seconds(60)
    )
        -> Backoff
    {
        Backoff(shape: .linear, base: base, increment: increment ?? base, cap: cap)
    }

    /// The same delay every time.
    public static func constant(_ delay: Duration) -> Backoff {
        Backoff(shape: .constant, base: delay, cap: delay)
    }

    /// Decorrelated jitter (AWS): uniform in `base ... previous × 3`, at most `cap`.
    public static func decorrelated(base: Duration = .seconds(1), cap: Duration = .seconds(60)) -> Backoff {
        Backoff(shape: .decorrelated, base: base, multiplier: 3, cap: cap)
    }

    /// The delay before retry `retry` (1-based) without randomness; decorrelated returns its upper bound.
    public func delay(forRetry retry: Int, previous: Duration? = nil) -> Duration {
        var constantRandom = UpperBoundGenerator()
        return delay(forRetry: retry, previous: previous, using: &constantRandom)
    }

    /// The delay before retry `retry` (1-based); only ``Shape/decorrelated`` draws from `random`.
    public func delay<Random: RandomNumberGenerator>(
        forRetry retry: Int, previous: Duration?, using random: inout Random
    ) -> Duration {
        let n = Double(max(retry, 1))
        let baseSeconds = max(DurationArithmetic.seconds(base), 0)
        let capSeconds = max(DurationArithmetic.seconds(cap), 0)
        let seconds: Double
        switch shape.kind {
        case .linear:
            seconds = baseSeconds + max(DurationArithmetic.seconds(increment), 0) * (n - 1)
        case .constant:
            seconds = baseSeconds
        case .decorrelated:
            let previousSeconds = previous.map(DurationArithmetic.seconds) ?? baseSeconds
            let upper = min(max(previousSeconds * max(multiplier, 1), baseSeconds), capSeconds)
            let lower = min(baseSeconds, upper)
            seconds = upper > lower ? Double.random(in: lower...upper, using: &random) : upper
        case .exponential:
            seconds = baseSeconds * pow(max(multiplier, 0), n - 1)
        }
        return DurationArithmetic.duration(seconds: min(seconds.isNaN ? capSeconds : seconds, capSeconds))
    }

    /// `exponential(base: 1 s, ×2, cap: 300 s)`.
    public var description: String {
        switch shape.kind {
        case .exponential: "exponential(base: \(base), ×\(multiplier), cap: \(cap))"
        case .linear: "linear(base: \(base), +\(increment), cap: \(cap))"
        case .constant: "constant(\(base))"
        case .decorrelated: "decorrelated(base: \(base), cap: \(cap))"
        }
    }
}

/// A generator that always returns the top of the range: makes decorrelated backoff report its bound.
private struct UpperBoundGenerator: RandomNumberGenerator {
    mutating func next() -> UInt64 { .max }
}
