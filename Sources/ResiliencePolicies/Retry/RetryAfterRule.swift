/// How a retry policy treats the server's retry hint (`Retry-After`, `X-RateLimit-Reset`, …).
///
/// A hint is honoured instead of the backoff delay (never shortened by jitter). A hint longer than
/// ``maximum`` either stops retrying with ``RetryDecision/StopReason/retryAfterTooLong`` (the default:
/// a caller waiting minutes is better served by a fast, honest failure that carries the hint) or is clamped
/// to ``maximum`` when ``whenLonger`` is ``Overflow/clamp``.
public struct RetryAfterRule: Sendable, Hashable, CustomStringConvertible {
    /// What to do with a hint longer than ``maximum``.
    public struct Overflow: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The identifier.
        public let rawValue: String
        /// Creates a value.
        ///
        /// - Parameter rawValue: The identifier, like the predefined `"stop"` and `"clamp"`.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// Stop retrying with ``RetryDecision/StopReason/retryAfterTooLong``.
        public static let stop = Overflow(rawValue: "stop")
        /// Wait ``RetryAfterRule/maximum`` instead.
        public static let clamp = Overflow(rawValue: "clamp")
    }

    /// Whether hints are honoured at all (when `false`, the backoff delay is used).
    public var honoursHint: Bool = true
    /// The longest hint honoured (default 300 s).
    public var maximum: Duration = .seconds(300)
    /// What to do beyond ``maximum`` (default ``Overflow/stop``).
    public var whenLonger: Overflow = .stop
    /// Whether a retry whose wait came from the hint uses up one of the allowed attempts (default `true`).
    public var countsAsAttempt: Bool = true

    /// Creates a rule.
    ///
    /// - Parameters:
    ///   - honoursHint: Whether hints are honoured at all (when `false`, the backoff delay is used). Default: `true`.
    ///   - maximum: The longest hint honoured (default 300 s).
    ///   - whenLonger: What to do beyond ``maximum`` (default ``Overflow/stop``).
    ///   - countsAsAttempt: Whether a retry whose wait came from the hint uses up one of the allowed attempts (default
    ///     `true`).
    public init(
        honoursHint: Bool = true, maximum: Duration = .seconds(300), whenLonger: Overflow = .stop,
        countsAsAttempt: Bool = true
    ) {
        self.honoursHint = honoursHint
        self.maximum = maximum
        self.whenLonger = whenLonger
        self.countsAsAttempt = countsAsAttempt
    }

    /// Honour hints up to 300 s, stop beyond, count them as attempts.
    public static let standard = RetryAfterRule()

    /// The decision the hint in `failure` dictates, or `nil` when there is no hint to honour.
    public func decision(for failure: FailureClassification) -> RetryDecision? {
        guard honoursHint, let hint = failure.retryAfter else { return nil }
        let wait = hint > .zero ? hint : .zero
        if wait > maximum {
            if whenLonger == .clamp {
                return .retry(after: max(maximum, .zero), countsAsAttempt: countsAsAttempt, source: "retry-after")
            }
            return .stop(.retryAfterTooLong)
        }
        return .retry(after: wait, countsAsAttempt: countsAsAttempt, source: "retry-after")
    }

    /// `retry-after(max: 300 seconds, stop, counted)`.
    public var description: String {
        guard honoursHint else { return "ignored" }
        return "max \(maximum), \(whenLonger), \(countsAsAttempt ? "counted" : "not counted")"
    }
}
