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
