import ResilienceCore
import ResilienceTelemetry
import ResilienceTesting
import Testing

@Suite("LineSink levels")
struct LineSinkLevelTests {
    static func event(_ kind: ResilienceEventKind, classification: FailureClassification? = nil) -> ResilienceEvent {
        ResilienceEvent(kind: kind, key: "lever", attempt: 1, time: .origin, classification: classification)
    }

    @Test("at info, attempts started, succeeded or abandoned write no line; a failure and a transition do")
    func routineAttemptsAreBelowInfo() {
        let lines = LockedBox<[String]>([])
        let sink = LineSink(minimumLevel: .info) { line in lines.mutate { $0.append(line) } }
        for _ in 0..<100 {
            sink.receive(Self.event(.attemptStarted))
            sink.receive(Self.event(.attemptSucceeded))
            sink.receive(Self.event(.attemptCancelled))
        }
        #expect(lines.value.count == 0, "lines written for healthy and abandoned attempts")

        let timeout = FailureClassification(category: .timeout, code: .timedOut)
        sink.receive(Self.event(.attemptFailed, classification: timeout))
        var transition = Self.event(.breakerTransition)
        transition.transition = BreakerTransition(from: .closed, to: .open)
        sink.receive(transition)
        #expect(lines.value.count == 2)

        let formatter = LogLineFormatter()
        #expect(formatter.level(of: Self.event(.attemptStarted)) == .trace)
        #expect(formatter.level(of: Self.event(.attemptSucceeded)) == .debug)
        #expect(formatter.level(of: Self.event(.attemptCancelled)) == .debug)
        #expect(formatter.level(of: transition) == .notice)
    }

    @Test("at info, what a healthy busy service does on every request writes no line; a limiter's refusal does")
    func routinePerRequestEventsAreBelowInfo() {
        let lines = LockedBox<[String]>([])
        let sink = LineSink(minimumLevel: .info) { line in lines.mutate { $0.append(line) } }
        var waiting = Self.event(.rateLimited)
        waiting.detail = ResilienceEvent.limiterWaiting
        var queued = Self.event(.rateLimited)
        queued.detail = ResilienceEvent.limiterQueued
        for _ in 0..<100 {
            for kind in [ResilienceEventKind.hedgeLaunched, .requestCoalesced, .fetchCompleted, .limitChanged] {
                sink.receive(Self.event(kind))
            }
            sink.receive(waiting)
            sink.receive(queued)
        }
        #expect(lines.value.count == 0, "lines written for routine per-request events")

        var rejected = Self.event(.rateLimited)
        rejected.detail = "rejected"
        sink.receive(rejected)
        sink.receive(Self.event(.partialResults))
        #expect(lines.value.count == 2)
    }
}
