import ResilienceCore

extension ResilienceContext {
    /// A context for tests: time from a ``ManualClock`` (a fresh one unless given), events to a
    /// ``RecordingTelemetrySink`` (a fresh one unless given), the standard classifier.
    ///
    /// ```swift
    /// let clock = ManualClock()
    /// let sink = RecordingTelemetrySink()
    /// let context = ResilienceContext.test(clock: clock, telemetry: sink)
    /// ```
    ///
    /// - Parameters:
    ///   - key: The key whose policies apply.
    ///   - operation: The operation's name in events.
    ///   - clock: The manual clock the context reads and sleeps on.
    ///   - telemetry: The sink that records the events.
    ///   - timeout: When given, the deadline is this long after the clock's current instant.
    ///   - idempotency: Whether the operation may be repeated.
    ///   - classifier: Classifies failures for the stages.
    public static func test(
        key: String = "test",
        operation: String = "call",
        clock: ManualClock = ManualClock(),
        telemetry: RecordingTelemetrySink? = RecordingTelemetrySink(),
        timeout: Duration? = nil,
        idempotency: Idempotency = .idempotent,
        classifier: any ErrorClassifier = CompositeErrorClassifier.standard
    ) -> ResilienceContext {
        let resilienceClock = ResilienceClock.manual(clock)
        return ResilienceContext(
            key: key, operation: operation, deadline: timeout.map { resilienceClock.now().advanced(by: $0) },
            idempotency: idempotency, telemetry: telemetry, clock: resilienceClock, classifier: classifier)
    }

    /// The recording sink this context sends events to, if it is one.
    public var recordingSink: RecordingTelemetrySink? { telemetry as? RecordingTelemetrySink }
}
