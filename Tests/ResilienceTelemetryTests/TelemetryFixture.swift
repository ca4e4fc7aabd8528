import ResilienceCore
import ResilienceTelemetry
import ResilienceTesting

/// A recorder on a manual clock, with helpers that emit events at the clock's current time.
struct TelemetryFixture {
    let manual = ManualClock()
    let clock: ResilienceClock
    let recorder: TelemetryRecorder

    init(configuration: TelemetryRecorder.Configuration = .standard) {
        clock = ResilienceClock(manual)
        recorder = TelemetryRecorder(configuration: configuration, clock: clock)
    }

    func advance(seconds: Int64) { manual.advance(by: .seconds(seconds)) }

    func emit(
        _ kind: ResilienceEventKind, key: String = "greenhouse", attempt: Int = 1, duration: Duration? = nil,
        classification: FailureClassification? = nil, transition: BreakerTransition? = nil, detail: String? = nil,
        count: Int? = nil, total: Int? = nil
    ) {
        recorder.receive(
            ResilienceEvent(
                kind: kind, key: key, operation: "fetch", attempt: attempt, time: clock.now(), duration: duration,
                classification: classification, transition: transition, detail: detail, count: count, total: total))
    }

    func succeed(_ key: String = "greenhouse", attempt: Int = 1, milliseconds: Int64 = 100) {
        emit(.attemptSucceeded, key: key, attempt: attempt, duration: .milliseconds(milliseconds))
    }

    func fail(
        _ key: String = "greenhouse", attempt: Int = 1, classification: FailureClassification = .serverError,
        milliseconds: Int64 = 100
    ) {
        emit(
            .attemptFailed, key: key, attempt: attempt, duration: .milliseconds(milliseconds),
            classification: classification)
    }

    func transition(_ key: String, _ from: BreakerState, _ to: BreakerState) {
        emit(.breakerTransition, key: key, transition: BreakerTransition(from: from, to: to, openFor: .seconds(30)))
    }
}

extension FailureClassification {
    static let serverError = FailureClassification(category: .serverError, code: .serverUnavailable, httpStatus: 503)
    static let timeout = FailureClassification(category: .timeout, code: .timedOut)
}
