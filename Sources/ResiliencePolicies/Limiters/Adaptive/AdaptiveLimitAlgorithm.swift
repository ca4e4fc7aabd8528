/// How an ``AdaptiveConcurrencyLimiter`` learns its limit: ``gradient2(_:)`` (the default), ``vegas(_:)`` or
/// ``aimd(_:)``. An open set: a struct around a private list, so new algorithms break nobody's `switch`.
public struct AdaptiveLimitAlgorithm: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case gradient2(Gradient2Limit)
        case vegas(VegasLimit)
        case aimd(AIMDLimit)
    }

    let kind: Kind

    /// Follows the ratio of a baseline round trip to the recent one (after Netflix's `Gradient2Limit`).
    ///
    /// - Parameter settings: Smoothing, tolerance, short window, baseline rise and growth. Default: the
    ///   settings ``Gradient2Limit/init(smoothing:tolerance:shortWindow:baselineRise:growth:longWindow:)`` documents.
    public static func gradient2(_ settings: Gradient2Limit = .init()) -> AdaptiveLimitAlgorithm {
        AdaptiveLimitAlgorithm(kind: .gradient2(settings.sanitized))
    }

    /// Keeps the estimated queue at the backend between two bounds (TCP Vegas, Netflix's `VegasLimit`).
    ///
    /// - Parameter settings: The queue bounds, smoothing and probe interval. Default: Netflix's.
    public static func vegas(_ settings: VegasLimit = .init()) -> AdaptiveLimitAlgorithm {
        AdaptiveLimitAlgorithm(kind: .vegas(settings.sanitized))
    }

    /// Grows by one per sample and shrinks by a ratio on a drop or a slow call (Netflix's `AIMDLimit`).
    ///
    /// - Parameter settings: The backoff ratio and the latency that counts as a drop. Default: Netflix's.
    public static func aimd(_ settings: AIMDLimit = .init()) -> AdaptiveLimitAlgorithm {
        AdaptiveLimitAlgorithm(kind: .aimd(settings.sanitized))
    }

    /// The limit after `sample`, from `limit`, before the limiter's bounds apply.
    func nextLimit(
        _ limit: Double, _ sample: AdaptiveLimitSample, minimum: Double, _ memory: inout AdaptiveLimitMemory
    ) -> Double {
        switch kind {
        case .gradient2(let settings): settings.nextLimit(limit, sample, minimum: minimum, &memory)
        case .vegas(let settings): settings.nextLimit(limit, sample, &memory)
        case .aimd(let settings): settings.nextLimit(limit, sample)
        }
    }

    /// `gradient2(tolerance: 1.5, …)`.
    public var description: String {
        switch kind {
        case .gradient2(let settings): settings.summary
        case .vegas(let settings): settings.summary
        case .aimd(let settings): settings.summary
        }
    }
}
