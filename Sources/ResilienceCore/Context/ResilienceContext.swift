/// What travels with one execution through a pipeline: who is calling, which attempt this is, when it must
/// end, whether it may be repeated, where events go, and which clock tells the time.
///
/// A value type. Stages pass a modified copy inward (the retry stage sets `attempt`, the timeout stage
/// narrows `deadline`); nothing is shared or allocated per stage.
public struct ResilienceContext: Sendable {
    /// The key whose policies apply: a ``SourceID`` raw value, a host, or any stable name.
    public var key: String
    /// The operation's name, for telemetry (`"fetch"`, `"POST /events"`).
    public var operation: String
    /// The 1-based number of the current attempt (set by the retry stage).
    public var attempt: Int
    /// The instant by which the current attempt must finish, if any. Stages only ever narrow it; transports
    /// and sources should honour it (see ``remaining(now:)``).
    public var deadline: ResilienceInstant?
    /// Whether the operation may be repeated.
    public var idempotency: Idempotency
    /// Where events go; `nil` means nobody listens and emitting costs nothing.
    public var telemetry: (any TelemetrySink)?
    /// The source of time.
    public var clock: ResilienceClock
    /// Classifies failures for the stages.
    public var classifier: any ErrorClassifier
    /// Where a transport reports the quotas servers advertise (``reportQuota(from:responseDate:)``); set by
    /// a quota-pacing limiter stage for the calls it wraps, `nil` otherwise.
    public var quotaObserver: (any ServerQuotaObserver)?
    /// How much this request matters under overload: limiters shed the lowest priorities first and retry
    /// budgets keep their last retries for the highest (``RequestPriority/default`` unless the caller says).
    public var priority: RequestPriority

    /// Creates a context.
    ///
    /// - Parameters:
    ///   - key: The key whose policies apply (a source id, a host, any stable name).
    ///   - operation: The operation's name, for telemetry.
    ///   - attempt: The 1-based attempt number (the retry stage sets it).
    ///   - deadline: The instant by which the operation must finish, if any.
    ///   - idempotency: Whether the operation may be repeated.
    ///   - telemetry: Where events go; `nil` for nowhere.
    ///   - clock: The source of time.
    ///   - classifier: Classifies failures for the stages.
    ///   - priority: How much the request matters under overload. Default: ``RequestPriority/default``.
    public init(
        key: String,
        operation: String = "call",
        attempt: Int = 1,
        deadline: ResilienceInstant? = nil,
        idempotency: Idempotency = .idempotent,
        telemetry: (any TelemetrySink)? = nil,
        clock: ResilienceClock = .continuous,
        classifier: any ErrorClassifier = CompositeErrorClassifier.standard,
        priority: RequestPriority = .default
    ) {
        self.key = key
        self.operation = operation
        self.attempt = attempt
        self.deadline = deadline
        self.idempotency = idempotency
        self.telemetry = telemetry
        self.clock = clock
        self.classifier = classifier
        self.priority = priority
    }

    /// The classification of `error`: cancellation and ``ClassifiedError`` first, then ``classifier``, then
    /// ``FailureClassification/unknown``.
    public func classify(_ error: any Error) -> FailureClassification {
        if let universal = CompositeErrorClassifier.universalClassification(of: error) { return universal }
        return classifier.classify(error) ?? .unknown
    }

    /// What work that ran with this context ended with when it threw `error`: a cancellation that came at or
    /// after ``deadline`` becomes a ``DeadlineExceededError`` (a deadline enforced around the work, such as an
    /// aggregated source's, cut it off: a timeout, not the caller going away); any other error is returned as it
    /// is.
    ///
    /// For a stage or decorator that reports how the work inside it ended (a span, an operation's metrics) and
    /// may sit inside an enforced deadline it cannot see: classify what this returns.
    ///
    /// - Parameter error: What the work threw.
    public func deadlineAware(_ error: any Error) -> any Error {
        guard let deadline, classify(error).category == .cancelled, clock.now() >= deadline else { return error }
        return DeadlineExceededError(deadline: deadline, operationError: error)
    }

    /// Time left before ``deadline`` (zero when it has passed), or `nil` without a deadline.
    @inlinable
    public func remaining(now: ResilienceInstant) -> Duration? {
        guard let deadline else { return nil }
        let left = now.duration(to: deadline)
        return Duration.inlinedZero.isLess(than: left) ? left : .inlinedZero
    }

    /// Narrows the deadline to `candidate` if that is earlier.
    @inlinable
    public mutating func narrowDeadline(to candidate: ResilienceInstant) {
        if let deadline, deadline <= candidate { return }
        deadline = candidate
    }

    /// Sends an event to the sink, building it only if somebody listens.
    @inlinable
    public func emit(_ kind: ResilienceEventKind, _ fill: (inout ResilienceEvent) -> Void = { _ in }) {
        guard let telemetry, telemetry.isEnabled else { return }
        var event = ResilienceEvent(
            kind: kind, key: key, operation: operation, attempt: attempt, time: clock.now())
        fill(&event)
        telemetry.receive(event)
    }

    /// Sends an event stamped `time` (an instant the caller already read) to the sink, building it only if
    /// somebody listens.
    @inlinable
    package func emit(
        _ kind: ResilienceEventKind, at time: ResilienceInstant, _ fill: (inout ResilienceEvent) -> Void = { _ in }
    ) {
        guard let telemetry, telemetry.isEnabled else { return }
        var event = ResilienceEvent(kind: kind, key: key, operation: operation, attempt: attempt, time: time)
        fill(&event)
        telemetry.receive(event)
    }
}
