/// A chaos stage's settings are out of range.
public enum ChaosConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The injection rate is not a number in `0...1`.
    case rateOutOfRange(Double)
    /// A latency is negative.
    case negativeLatency(Duration)

    /// What is wrong.
    public var description: String {
        switch self {
        case .rateOutOfRange(let rate): "chaos injection rate \(rate) is not in 0...1"
        case .negativeLatency(let latency): "chaos latency \(latency) is negative"
        }
    }
}
