import ResilienceCore

/// How one attempt ended, as a one-byte code (events stay small; the classification is built once).
enum AttemptOutcome: UInt8, Sendable {
    /// The server answered with success.
    case success
    /// The server failed it or shed it (503), or was down.
    case unavailable
    /// The client's attempt timeout fired first.
    case timedOut
    /// An optimistic-concurrency conflict (409): someone else wrote first.
    case conflict

    static let unavailableClassification = FailureClassification(
        category: .serverError, code: .serverUnavailable, httpStatus: 503)
    static let timedOutClassification = FailureClassification(category: .timeout, code: .attemptTimedOut)
    static let conflictClassification = FailureClassification(
        category: .conflict, code: FailureCode("SIM_409"), httpStatus: 409, isTransient: true)

    /// The classification the policies see.
    var classification: FailureClassification {
        switch self {
        case .success, .unavailable: Self.unavailableClassification
        case .timedOut: Self.timedOutClassification
        case .conflict: Self.conflictClassification
        }
    }

    /// What adaptive throttling learns: only overload counts against the backend; an answered conflict was
    /// accepted.
    var limiterOutcome: RateLimitOutcome {
        switch self {
        case .success, .conflict: .accepted
        case .unavailable, .timedOut: .rejectedByBackend
        }
    }
}

/// The attempts of one request still waiting for an answer: at most the first and one hedge.
struct LiveAttempts {
    private var first = -1
    private var second = -1

    /// True when no attempt is waiting.
    var isEmpty: Bool { first < 0 && second < 0 }

    /// Calls `body` with each waiting attempt.
    func forEach(_ body: (Int) -> Void) {
        if first >= 0 { body(first) }
        if second >= 0 { body(second) }
    }

    /// Adds an attempt.
    mutating func insert(_ attempt: Int) {
        if first < 0 { first = attempt } else { second = attempt }
    }

    /// Removes an attempt.
    mutating func remove(_ attempt: Int) {
        if first == attempt { first = -1 }
        if second == attempt { second = -1 }
    }
}
