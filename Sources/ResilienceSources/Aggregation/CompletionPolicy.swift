/// When a multi-source fetch counts as a success ("1 success = pass" is not enough for
/// everyone).
///
/// A source counts as delivered when it succeeded, was served by a fallback, or was served from cache.
/// When so many sources have failed that the policy can no longer be met, the ``Aggregator`` cancels the
/// rest at once and throws ``AggregationError``.
public struct CompletionPolicy: Hashable, Sendable, CustomStringConvertible {
    private enum Rule: Hashable {
        case bestEffort
        case atLeast(Int)
        case ratio(Double)
        case all
    }

    private let rule: Rule

    private init(_ rule: Rule) { self.rule = rule }

    /// Succeeds when at least one source delivered (or when no source is registered).
    public static let bestEffort = CompletionPolicy(.bestEffort)
    /// Succeeds only when every source delivered; the first failure cancels the others.
    public static let allOrNothing = CompletionPolicy(.all)

    /// Succeeds when at least `count` sources delivered (capped at the number registered).
    public static func atLeast(_ count: Int) -> CompletionPolicy { CompletionPolicy(.atLeast(max(0, count))) }

    /// Succeeds when at least `fraction` (0…1, rounded up) of the sources delivered.
    public static func ratio(_ fraction: Double) -> CompletionPolicy {
        let clamped = fraction.isNaN ? 1 : min(1, max(0, fraction))
        return CompletionPolicy(.ratio(clamped))
    }

    /// How many of `total` sources must deliver.
    public func requiredSources(of total: Int) -> Int {
        let total = max(0, total)
        switch rule {
        case .bestEffort: return min(1, total)
        case .atLeast(let count): return min(count, total)
        case .ratio(let fraction):
            // A decimal fraction times a count can land a rounding step above the whole number it stands for
            // (0.28 × 25 = 7.000000000000001): a product that close to a whole number is that number.
            let product = fraction * Double(total)
            let nearest = product.rounded()
            let needed = abs(product - nearest) <= nearest.ulp * 4 ? nearest : product.rounded(.up)
            return needed >= Double(total) ? total : Int(needed)
        case .all: return total
        }
    }

    /// `best-effort`, `at-least(3)`, `ratio(0.5)` or `all-or-nothing`.
    public var description: String {
        switch rule {
        case .bestEffort: "best-effort"
        case .atLeast(let count): "at-least(\(count))"
        case .ratio(let fraction): "ratio(\(fraction))"
        case .all: "all-or-nothing"
        }
    }
}
