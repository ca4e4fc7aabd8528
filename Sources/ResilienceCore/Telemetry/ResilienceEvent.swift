/// One thing that happened in a pipeline, transport, source or sync engine.
///
/// A flat value with optional fields, so new kinds need no new types and exporters can render any event.
/// Which fields are set depends on ``kind`` (see ``ResilienceEventKind``'s members).
public struct ResilienceEvent: Sendable, Hashable {
    /// What happened.
    public var kind: ResilienceEventKind
    /// The key (source id or host) it happened to.
    public var key: String
    /// The operation's name.
    public var operation: String
    /// The attempt number at the time.
    public var attempt: Int
    /// When, on the pipeline's clock.
    public var time: ResilienceInstant
    /// A latency, delay, wait or limit, depending on the kind.
    public var duration: Duration?
    /// The failure, for failure kinds.
    public var classification: FailureClassification?
    /// The breaker's state change, for ``ResilienceEventKind/breakerTransition``.
    public var transition: BreakerTransition?
    /// A short free-form detail (a reason, a fallback's name, a redacted URL).
    public var detail: String?
    /// A count (succeeded sources, pending mutations).
    public var count: Int?
    /// A total (attempted sources).
    public var total: Int?

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - kind: What happened.
    ///   - key: The key (source id or host) it happened to.
    ///   - operation: The operation's name. Default: `""`.
    ///   - attempt: The attempt number at the time. Default: `0`.
    ///   - time: When, on the pipeline's clock.
    ///   - duration: A latency, delay, wait or limit, depending on the kind.
    ///   - classification: The failure, for failure kinds.
    ///   - transition: The breaker's state change, for ``ResilienceEventKind/breakerTransition``.
    ///   - detail: A short free-form detail (a reason, a fallback's name, a redacted URL).
    ///   - count: A count (succeeded sources, pending mutations).
    ///   - total: A total (attempted sources).
    public init(
        kind: ResilienceEventKind,
        key: String,
        operation: String = "",
        attempt: Int = 0,
        time: ResilienceInstant,
        duration: Duration? = nil,
        classification: FailureClassification? = nil,
        transition: BreakerTransition? = nil,
        detail: String? = nil,
        count: Int? = nil,
        total: Int? = nil
    ) {
        self.kind = kind
        self.key = key
        self.operation = operation
        self.attempt = attempt
        self.time = time
        self.duration = duration
        self.classification = classification
        self.transition = transition
        self.detail = detail
        self.count = count
        self.total = total
    }
}

extension ResilienceEvent {
    /// The `detail` of a `rate-limited` event whose call waits for a rate limiter's permit.
    public static let limiterWaiting = "waiting"
    /// The `detail` of a `rate-limited` event whose call queues for a concurrency limiter's slot.
    public static let limiterQueued = "queued"
}

extension ResilienceEvent {
    /// How loudly the event is logged unless a sink is told otherwise: the failure's level
    /// (``FailureClassification/logLevel``) when it has one; `trace` for an attempt's start; `debug` for what a
    /// healthy busy service does on every request (an attempt's success, its cancellation at the level of
    /// ``FailureClassification/cancelled``, a call that waits or queues for a limiter, a hedge launched, a
    /// request coalesced, a fetch completed, an adaptive limit moving), so a busy server logs nothing per request
    /// at `info`, as swift-log asks of libraries; `notice` for a breaker transition and a blocked plaintext
    /// request; `warning` for a store the library could not use (an HTTP cache's, the sync engine's own state, a
    /// coordination store), which it works around but an operator must see; `info` for every other kind.
    public var logLevel: LogLevel {
        if let classification { return classification.logLevel }
        switch kind {
        case .attemptStarted: return .trace
        case .attemptSucceeded, .hedgeLaunched, .requestCoalesced, .fetchCompleted, .limitChanged: return .debug
        case .attemptCancelled: return FailureClassification.cancelled.logLevel
        case .rateLimited where detail == Self.limiterWaiting || detail == Self.limiterQueued: return .debug
        case .breakerTransition, .insecureTransportBlocked: return .notice
        case .cacheStoreFailed, .syncStoreFailed, .coordinationStoreFailed: return .warning
        default: return .info
        }
    }
}
