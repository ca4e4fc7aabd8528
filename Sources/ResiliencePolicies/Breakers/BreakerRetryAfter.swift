/// How a breaker treats the server's own wait (`Retry-After`, carried as
/// ``FailureClassification/retryAfter``) on a failure it counts.
///
/// A server that answers "try again in 30 s" speaks for the whole key, not for one request: every call sent
/// before then is refused (and counted against the client's quota). So every breaker of this module
///
/// - stays open at least as long as the hint of the failure that tripped it (its own schedule may be longer);
/// - while open, keeps itself open until the hint of any later counted failure has passed (calls admitted
///   before the trip that come back with a longer wait; ``SharedBreaker`` applies only the other two rules);
/// - opens at once, whatever its threshold, when a failure matching ``opensAtOnce`` carries a hint (by
///   default rate-limit answers: a `429` with `Retry-After` is an instruction, not a health signal to
///   average).
///
/// Hints are clamped to ``maximum`` so a hostile or broken header cannot disable a key for days.
///
/// ```swift
/// var settings = FailureRatioBreaker.Configuration.standard
/// settings.retryAfter = .lengthensTrips   // honour hints, but only count them towards the threshold
/// ```
public struct BreakerRetryAfter: Sendable, CustomStringConvertible {
    /// Whether hints are honoured at all.
    public var honoursHint: Bool
    /// Counted failures whose hint opens the breaker at once; `nil` to only lengthen trips.
    public var opensAtOnce: BreakerFailurePredicate?
    /// The longest hint honoured; longer ones are clamped to it.
    public var maximum: Duration

    /// Creates the rules.
    ///
    /// - Parameters:
    ///   - honoursHint: Whether hints are honoured at all (`false` ignores them).
    ///   - opensAtOnce: Counted failures whose hint opens the breaker at once; `nil` to only lengthen trips.
    ///   - maximum: The longest hint honoured (longer ones are clamped).
    public init(
        honoursHint: Bool = true, opensAtOnce: BreakerFailurePredicate? = .rateLimitedOnly,
        maximum: Duration = .seconds(3600)
    ) {
        self.honoursHint = honoursHint
        self.opensAtOnce = opensAtOnce
        self.maximum = maximum
    }

    /// Honours hints up to an hour; a rate-limit answer with a hint opens the breaker at once.
    public static var standard: BreakerRetryAfter { BreakerRetryAfter() }

    /// Honours hints up to an hour, but only a trip the threshold decided lasts at least the hint.
    public static var lengthensTrips: BreakerRetryAfter { BreakerRetryAfter(opensAtOnce: nil) }

    /// Ignores hints (the breaker's own schedule alone decides).
    public static var ignored: BreakerRetryAfter { BreakerRetryAfter(honoursHint: false, opensAtOnce: nil) }

    /// `retry-after(opens at once: yes, max: 3600 seconds)`.
    public var description: String {
        guard honoursHint else { return "retry-after(ignored)" }
        return "retry-after(opens at once: \(opensAtOnce == nil ? "no" : "yes"), max: \(maximum))"
    }

    /// The hint `outcome` carries, clamped, when hints are honoured and `counted` says the failure counts.
    func hint(_ outcome: BreakerOutcome, counted: Bool) -> Duration? {
        guard honoursHint, counted, case .failure(let classification) = outcome,
            let hint = classification.retryAfter, hint > .zero
        else { return nil }
        return min(hint, max(maximum, .zero))
    }

    /// The hint of a counted failure that must open the breaker at once, if `outcome` is one.
    func immediateHint(_ outcome: BreakerOutcome, counted: Bool) -> Duration? {
        guard let opensAtOnce, case .failure(let classification) = outcome, opensAtOnce.counts(classification)
        else { return nil }
        return hint(outcome, counted: counted)
    }
}
