import ResilienceCore
import ResilienceTelemetry
import ResilienceTesting
import Testing

@Suite("TelemetrySinkConformance")
struct TelemetrySinkConformanceTests {
    @Test("The library's sinks and the test kit's recorder conform")
    func librarySinksConform() async throws {
        try await TelemetrySinkConformance(sink: { RecordingTelemetrySink() }).check()
        try await TelemetrySinkConformance(sink: { TelemetryRecorder() }).check()
        try await TelemetrySinkConformance(sink: { NoOpSink() }).check()
        try await TelemetrySinkConformance(sink: { MultiplexingSink(RecordingTelemetrySink(), TelemetryRecorder()) })
            .check()
        try await TelemetrySinkConformance {
            let lines = LockedBox<[String]>([])
            let sink = LineSink { line in lines.mutate { $0.append(line) } }
            return (sink, { lines.value.joined(separator: "\n") })
        }.check()
    }

    @Test("A sink that exports secrets verbatim is caught")
    func leakySinkFails() async {
        struct Leaky: TelemetrySink {
            let lines: LockedBox<[String]>
            func receive(_ event: ResilienceEvent) {
                lines.mutate { $0.append("\(event.detail ?? "") \(event.classification?.message ?? "")") }
            }
        }
        let report = await TelemetrySinkConformance {
            let lines = LockedBox<[String]>([])
            return (Leaky(lines: lines), { lines.value.joined(separator: "\n") })
        }.run()
        #expect(report.failedCases == ["redacts-secrets"], "\(report)")
    }
}

@Suite("RecordingTelemetrySink")
struct RecordingTelemetrySinkTests {
    func event(_ kind: ResilienceEventKind, key: String = "a") -> ResilienceEvent {
        ResilienceEvent(kind: kind, key: key, time: .origin)
    }

    @Test("Queries by kind and key, counts and order")
    func queries() throws {
        let sink = RecordingTelemetrySink()
        sink.receive(event(.attemptStarted))
        sink.receive(event(.attemptFailed, key: "b"))
        sink.receive(event(.retryScheduled))
        sink.receive(event(.attemptSucceeded))
        #expect(sink.kinds == [.attemptStarted, .attemptFailed, .retryScheduled, .attemptSucceeded])
        #expect(sink.count(.attemptFailed) == 1 && sink.count(.attemptFailed, key: "a") == 0)
        #expect(sink.events(.attemptFailed, key: "b").count == 1)
        #expect(sink.countsByKind[.retryScheduled] == 1)
        #expect(sink.containsInOrder([.attemptStarted, .attemptSucceeded]))
        #expect(!sink.containsInOrder([.attemptSucceeded, .attemptStarted]))
        try sink.expectCount(.attemptStarted, 1)
        #expect(throws: ExpectationFailure.self) { try sink.expectCount(.attemptStarted, 2) }
        #expect(throws: ExpectationFailure.self) { try sink.expectOrder([.retryScheduled, .attemptStarted]) }
        sink.removeAll()
        #expect(sink.events.isEmpty)
        sink.setEnabled(false)
        #expect(!sink.isEnabled)
    }

    @Test("Waiting for an event suspends until it arrives, without sleeping, and honours cancellation")
    func waiting() async throws {
        let sink = RecordingTelemetrySink()
        sink.receive(event(.attemptStarted))
        #expect(try await sink.next(.attemptStarted).kind == .attemptStarted)
        let waiter = Task { try await sink.waitForCount(.retryScheduled, atLeast: 2) }
        let keyed = Task { try await sink.next(.attemptFailed) { $0.key == "x" } }
        sink.receive(event(.retryScheduled))
        sink.receive(event(.attemptFailed, key: "y"))
        sink.receive(event(.retryScheduled))
        sink.receive(event(.attemptFailed, key: "x"))
        #expect(try await waiter.value.count == 2)
        #expect(try await keyed.value.key == "x")
        let never = Task { try await sink.next(.fallbackUsed) }
        never.cancel()
        await #expect(throws: CancellationError.self) { try await never.value }
    }

    @Test("A test context runs on a manual clock and records into the sink")
    func testContext() {
        let clock = ManualClock()
        let context = ResilienceContext.test(clock: clock, timeout: .seconds(5))
        context.emit(.attemptStarted)
        #expect(context.recordingSink?.count(.attemptStarted) == 1)
        #expect(context.remaining(now: context.clock.now()) == .seconds(5))
        clock.advance(by: .seconds(2))
        #expect(context.remaining(now: context.clock.now()) == .seconds(3))
        #expect(TestFailure.rateLimited(after: .seconds(3)).classification.retryAfter == .seconds(3))
        #expect(context.classify(TestFailure(category: .timeout)).category == .timeout)
    }
}
