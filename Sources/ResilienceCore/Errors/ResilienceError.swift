/// An error raised by a resilience stage itself (not by the operation it protects).
///
/// A struct with an open ``Code`` so new stages can add codes without breaking anyone's `switch`.
/// It classifies itself (``ClassifiedError``), so every classifier treats it consistently: a circuit-open
/// rejection is never retried, a timeout is a timeout and not the caller's cancellation.
public struct ResilienceError: ClassifiedError, Hashable, CustomStringConvertible {
    /// Which stage rejected or failed the call, and why.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The identifier.
        public let rawValue: String
        /// Creates a code.
        ///
        /// - Parameter rawValue: The identifier, in kebab-case like the predefined codes (`"circuit-open"`).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The identifier.
        public var description: String { rawValue }

        /// One attempt exceeded its timeout.
        public static let attemptTimedOut = Code(rawValue: "attempt-timed-out")
        /// The total deadline passed. Classified as a timeout, unless the call was failing, or held, for lack of a
        /// network path (an `underlying` classified ``FailureCategory/networkUnreachable``): then as that
        /// failure (its category, code and whether it was sent), since no server was slow.
        public static let deadlineExceeded = Code(rawValue: "deadline-exceeded")
        /// A circuit breaker is open; `retryAfter` is the time left.
        public static let circuitOpen = Code(rawValue: "circuit-open")
        /// A local rate limiter rejected the call; `retryAfter` is when a permit is expected.
        public static let rateLimited = Code(rawValue: "rate-limited")
        /// The retry budget is spent.
        public static let budgetExhausted = Code(rawValue: "budget-exhausted")
        /// The bulkhead's slots and queue are full.
        public static let bulkheadFull = Code(rawValue: "bulkhead-full")
        /// The adaptive throttle rejected the call client-side.
        public static let throttled = Code(rawValue: "throttled")
        /// Every fallback alternative failed.
        public static let fallbackExhausted = Code(rawValue: "fallback-exhausted")
    }

    /// What happened.
    public var code: Code
    /// The key (source or host) whose stage raised it.
    public var key: String
    /// How long until trying again could succeed (breaker time left, limiter wait), if known.
    public var retryAfter: Duration?
    /// The classification of the failure behind this one (for example the last attempt's failure when a
    /// budget runs out), if any.
    public var underlying: FailureClassification?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What happened.
    ///   - key: The key (source or host) whose stage raised it. Default: `""`.
    ///   - retryAfter: How long until trying again could succeed (breaker time left, limiter wait), if known.
    ///   - underlying: The classification of the failure behind this one (for example the last attempt's failure when a
    ///     budget runs out), if any.
    public init(
        _ code: Code, key: String = "", retryAfter: Duration? = nil, underlying: FailureClassification? = nil
    ) {
        self.code = code
        self.key = key
        self.retryAfter = retryAfter
        self.underlying = underlying
    }

    /// The classification every classifier uses for this error.
    public var classification: FailureClassification { classification(message: .text(description)) }

    /// This error's classification, for `error`, which holds this error as thrown: its message is rendered
    /// from `error` only when read (the classifiers' path: a stage classifies every failure it sees).
    func classification(describing error: any Error) -> FailureClassification {
        classification(message: .description(of: error))
    }

    private func classification(message: FailureMessage) -> FailureClassification {
        // An open breaker's rejection first: the commonest stage error while a dependency is down, and its
        // code the cheapest to compare (the timeouts' are longer than a small string).
        var classification =
            switch code {
            case .circuitOpen:
                FailureClassification(
                    category: .circuitOpen, code: .circuitOpen, retryAfter: retryAfter, isTransient: false,
                    logLevel: .info, requestWasNotSent: true)
            case .attemptTimedOut:
                FailureClassification(category: .timeout, code: .attemptTimedOut)
            case .deadlineExceeded:
                if let underlying, underlying.category == .networkUnreachable {
                    // The time ran out while the device had no network: the person is told that, not that a
                    // server took too long.
                    FailureClassification(
                        category: .networkUnreachable, code: underlying.code, isTransient: false,
                        requestWasNotSent: underlying.requestWasNotSent)
                } else {
                    FailureClassification(category: .timeout, code: .deadlineExceeded, isTransient: false)
                }
            case .rateLimited:
                throttled(.rateLimitedLocally)
            case .bulkheadFull:
                throttled(.bulkheadFull)
            case .throttled:
                throttled(.throttledAdaptively)
            case .budgetExhausted:
                FailureClassification(
                    category: underlying?.category ?? .throttled, code: .retryBudgetExhausted,
                    httpStatus: underlying?.httpStatus, retryAfter: retryAfter ?? underlying?.retryAfter,
                    isTransient: false)
            case .fallbackExhausted:
                FailureClassification(
                    category: underlying?.category ?? .unknown, code: .fallbackExhausted,
                    httpStatus: underlying?.httpStatus, retryAfter: underlying?.retryAfter, isTransient: false,
                    logLevel: .error)
            default:
                FailureClassification(
                    category: .unknown, code: FailureCode("RES_\(code.rawValue)"), isTransient: false)
            }
        classification.messageSource = message
        return classification
    }

    private func throttled(_ failureCode: FailureCode) -> FailureClassification {
        FailureClassification(
            category: .throttled, code: failureCode, retryAfter: retryAfter, isTransient: false, logLevel: .info,
            requestWasNotSent: true)
    }

    /// `code [key] (retry after …)`; a zero wait (a refusal that already waited its delay out) is not named.
    public var description: String {
        var text = code.rawValue
        // One allocation for the common shape (`circuit-open [key]`).
        text.reserveCapacity(text.utf8.count + key.utf8.count + 3)
        if !key.isEmpty {
            text += " ["
            text += key
            text += "]"
        }
        if let retryAfter, retryAfter > .zero { text += " (retry after \(retryAfter))" }
        if let underlying { text += " after \(underlying.category)/\(underlying.code)" }
        return text
    }
}
