/// How much to simulate.
public enum RunMode: String, Sendable {
    /// Every scenario over 20 seeds: the published report.
    case full
    /// Fewer seeds, shorter runs, fewer brownout levels: a CI smoke run, byte-reproducible.
    case quick

    /// The seeds every goal is evaluated over: `count` of them from `first` (default 20, or 2 in quick mode).
    public func seeds(from first: UInt64, count: Int? = nil) -> [UInt64] {
        let count = UInt64(count ?? (self == .full ? 20 : 2))
        return (0..<count).map { first &+ $0 }
    }

    /// The scale of offered load and server capacity (1 in full mode; the quick run keeps their ratios).
    var scale: Double { self == .full ? 1 : 0.1 }

    /// The brownout failure probabilities.
    var brownoutLevels: [Double] { self == .full ? [0.05, 0.1, 0.2, 0.3, 0.5, 0.7] : [0.1, 0.5] }
}
