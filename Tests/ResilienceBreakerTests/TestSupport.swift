import ResiliencePolicies
import ResilienceTesting

/// The instant `seconds` after the origin.
func at(_ seconds: Double) -> ResilienceInstant {
    ResilienceInstant(offset: .seconds(seconds))
}

enum Failures {
    static let server = FailureClassification(category: .serverError, code: .serverUnavailable, httpStatus: 503)
    static let tooManyRequests = FailureClassification(category: .rateLimited, code: .rateLimited, httpStatus: 429)
    static let client = FailureClassification(category: .clientError, code: .invalidFormat, httpStatus: 400)
    static let timeout = FailureClassification(category: .timeout, code: .timedOut)
}

/// An error that classifies itself.
struct ScriptedError: ClassifiedError {
    var classification: FailureClassification
}

extension BreakerAdmission {
    var permit: BreakerPermit? {
        if case .admitted(let permit, _) = self { return permit }
        return nil
    }

    var transition: BreakerTransition? {
        if case .admitted(_, let transition) = self { return transition }
        return nil
    }

    var rejection: (retryAfter: Duration, state: BreakerState)? {
        if case .rejected(let retryAfter, let state) = self { return (retryAfter, state) }
        return nil
    }
}

/// Admits and records one call; returns the transition it caused (admission or outcome).
@discardableResult
func call(
    _ breaker: any BreakerPolicy, _ outcome: BreakerOutcome, at instant: ResilienceInstant
)
    -> BreakerTransition?
{
    let admission = breaker.admit(now: instant)
    guard let permit = admission.permit else { return nil }
    return breaker.record(outcome, for: permit, now: instant) ?? admission.transition
}

/// Seconds in a duration, for approximate comparisons.
func seconds(_ duration: Duration) -> Double {
    let parts = duration.components
    return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
}

/// Lets background tasks run until `condition` holds (or gives up after many turns).
func settles(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<20_000 {
        if condition() { return true }
        await Task.yield()
    }
    return condition()
}
