import ResiliencePolicies
import ResilienceTesting

/// The instant `seconds` after the origin.
func at(_ seconds: Double) -> ResilienceInstant {
    ResilienceInstant(offset: .seconds(seconds))
}

enum Failures {
    static let server = FailureClassification(category: .serverError, code: .serverUnavailable, httpStatus: 503)
    static let client = FailureClassification(category: .clientError, code: .invalidFormat, httpStatus: 400)
}

/// An error that classifies itself.
struct ScriptedError: ClassifiedError {
    var classification: FailureClassification
}

extension RateLimitDecision {
    var permit: RateLimitPermit? {
        if case .admitted(let permit) = self { return permit }
        return nil
    }
}

extension TokenBucketLimiter.Configuration {
    /// `.backingOff` with one call of burst refilled in 10 ms and no jitter: every wait is the backoff's, exactly
    /// (1 s, 2 s, 4 s …).
    static var backingOffWithoutJitter: Self {
        var configuration = Self.backingOff
        configuration.burst = 1
        configuration.refillPerSecond = 100
        configuration.exhaustionBackoff?.jitter = 0
        return configuration
    }
}
