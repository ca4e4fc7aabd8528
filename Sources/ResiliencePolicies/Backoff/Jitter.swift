/// Randomness added to a backoff delay so that many clients do not retry in lock-step.
///
/// Every mode draws only from the generator it is given. Decorrelated jitter is a backoff shape
/// (``Backoff/decorrelated(base:cap:)``) because it depends on the previous delay.
public struct Jitter: Sendable, Hashable, CustomStringConvertible {
    /// The kind of jitter.
    public struct Mode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The identifier.
        public let rawValue: String
        /// Creates a mode.
        ///
        /// - Parameter rawValue: The identifier, like the predefined `"none"`, `"proportional"`, `"full"`, `"equal"`
        ///   and `"additive"`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// No randomness.
        public static let none = Mode(rawValue: "none")
        /// `delay × (1 + fraction × uniform(−1, 1))`.
        public static let proportional = Mode(rawValue: "proportional")
        /// `uniform(0, delay)` (AWS "full jitter").
        public static let full = Mode(rawValue: "full")
        /// `delay / 2 + uniform(0, delay / 2)` (AWS "equal jitter").
        public static let equal = Mode(rawValue: "equal")
        /// `delay + uniform(0, maximum)`.
        public static let additive = Mode(rawValue: "additive")
    }

    /// The kind.
    public var mode: Mode
    /// The fraction for ``Mode/proportional`` (0.2 = ±20 %), clamped to `0...1`; a value that is not finite
    /// (`.nan`, `±.infinity`) applies no jitter.
    public var fraction: Double
    /// The largest addition for ``Mode/additive``.
    public var maximum: Duration

    /// Creates a jitter; prefer the static members.
    ///
    /// - Parameters:
    ///   - mode: How each delay is randomised: ``Mode/none``, ``Mode/proportional``, ``Mode/full``, ``Mode/equal`` or
    ///     ``Mode/additive``.
    ///   - fraction: The fraction for ``Mode/proportional`` (0.2 = ±20 %), clamped to `0...1`; one that is not
    ///     finite applies no jitter. Default: `0`.
    ///   - maximum: The largest addition for ``Mode/additive``. Default: `.zero`.
    public init(mode: Mode, fraction: Double = 0, maximum: Duration = .zero) {
        self.mode = mode
        self.fraction = fraction
        self.maximum = maximum
    }

    /// No randomness.
    public static let none = Jitter(mode: .none)
    /// `uniform(0, delay)`.
    public static let full = Jitter(mode: .full)
    /// `delay / 2 + uniform(0, delay / 2)`.
    public static let equal = Jitter(mode: .equal)

    /// ±`fraction` of the delay.
    public static func proportional(_ fraction: Double) -> Jitter {
        Jitter(mode: .proportional, fraction: fraction)
    }

    /// Adds `uniform(0, maximum)`.
    public static func additive(maximum: Duration) -> Jitter {
        Jitter(mode: .additive, maximum: maximum)
    }

    /// `delay` with jitter drawn from `random`; never negative.
    public func apply<Random: RandomNumberGenerator>(to delay: Duration, using random: inout Random) -> Duration {
        let seconds = DurationArithmetic.seconds(delay)
        switch mode {
        case .proportional:
            let spread = spread
            guard spread > 0 else { return delay }
            let factor = 1 + spread * Double.random(in: -1...1, using: &random)
            return DurationArithmetic.duration(seconds: seconds * factor)
        case .full:
            guard seconds > 0 else { return .zero }
            return DurationArithmetic.duration(seconds: Double.random(in: 0...seconds, using: &random))
        case .equal:
            guard seconds > 0 else { return .zero }
            let half = seconds / 2
            return DurationArithmetic.duration(seconds: half + Double.random(in: 0...half, using: &random))
        case .additive:
            let maximumSeconds = max(DurationArithmetic.seconds(maximum), 0)
            guard maximumSeconds > 0 else { return delay }
            return DurationArithmetic.duration(
                seconds: seconds + Double.random(in: 0...maximumSeconds, using: &random))
        default:
            return delay
        }
    }

    /// The largest delay this jitter can produce from `delay`.
    public func upperBound(of delay: Duration) -> Duration {
        let seconds = DurationArithmetic.seconds(delay)
        switch mode {
        case .proportional:
            return DurationArithmetic.duration(seconds: seconds * (1 + spread))
        case .additive:
            return DurationArithmetic.duration(seconds: seconds + max(DurationArithmetic.seconds(maximum), 0))
        default:
            return delay
        }
    }

    /// The fraction ``Mode/proportional`` applies: ``fraction`` clamped to `0...1`, and `0` when it is not finite.
    private var spread: Double { fraction.isFinite ? min(max(fraction, 0), 1) : 0 }

    /// `proportional(±20%)`, `additive(0…0.5 seconds)`, `full`. A proportional jitter shows the fraction it
    /// applies (clamped), so a `fraction` of `.nan` reads `proportional(±0%)`.
    public var description: String {
        switch mode {
        case .proportional: "proportional(±\(Int((spread * 100).rounded()))%)"
        case .additive: "additive(0…\(maximum))"
        default: mode.rawValue
        }
    }
}
