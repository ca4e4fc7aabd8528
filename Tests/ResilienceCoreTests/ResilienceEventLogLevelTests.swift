import ResilienceCore
import Testing

@Suite("ResilienceEvent.logLevel")
struct ResilienceEventLogLevelTests {
    static func event(_ kind: ResilienceEventKind, detail: String? = nil) -> ResilienceEvent {
        ResilienceEvent(kind: kind, key: "jobs", time: .origin, detail: detail)
    }

    @Test(
        "Each kind's default level: per-request kinds stay below info, a store the library could not use warns",
        arguments: [
            (ResilienceEventKind.attemptStarted, LogLevel.trace),
            (.attemptSucceeded, .debug),
            (.attemptCancelled, .debug),
            (.requestCoalesced, .debug),
            (.breakerTransition, .notice),
            (.insecureTransportBlocked, .notice),
            (.cacheStoreFailed, .warning),
            (.syncStoreFailed, .warning),
            (.coordinationStoreFailed, .warning),
            (.coordinationStoreRecovered, .info),
            (.retryScheduled, .info),
        ])
    func defaultLevels(kind: ResilienceEventKind, level: LogLevel) {
        #expect(Self.event(kind).logLevel == level)
    }

    @Test("A limiter's wait logs at debug; its rejection at info")
    func limiterWaitIsQuiet() {
        #expect(Self.event(.rateLimited, detail: ResilienceEvent.limiterWaiting).logLevel == .debug)
        #expect(Self.event(.rateLimited, detail: ResilienceEvent.limiterQueued).logLevel == .debug)
        #expect(Self.event(.rateLimited, detail: "no-permit").logLevel == .info)
    }

    @Test("A classified event logs at its failure's level, whatever its kind's default")
    func classificationWins() {
        let corrupted = FailureClassification(
            category: .storage, code: .corruptedData, isTransient: false, logLevel: .critical)
        for kind in [ResilienceEventKind.syncStoreFailed, .attemptStarted] {
            var event = Self.event(kind)
            event.classification = corrupted
            #expect(event.logLevel == .critical, "\(kind)")
        }
    }
}
