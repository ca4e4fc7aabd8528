import ResilienceCore
import ResilienceTelemetry
import ResilienceTesting
import Testing

@Suite("TelemetryRecorder")
struct TelemetryRecorderTests {
    @Test("The ring never holds more than its capacity and counts evictions")
    func capacityBound() {
        var configuration = TelemetryRecorder.Configuration()
        configuration.capacity = 10
        let fixture = TelemetryFixture(configuration: configuration)
        for index in 0..<25 {
            fixture.emit(.attemptStarted, attempt: index + 1)
        }
        let events = fixture.recorder.snapshot()
        #expect(events.count == 10)
        #expect(events.first?.attempt == 16)
        #expect(events.last?.attempt == 25)
        let metrics = fixture.recorder.metrics()
        #expect(metrics.recordsEvicted == 15)
        #expect(metrics.eventsReceived == 25)
        #expect(metrics.sources["greenhouse"]?.eventCounts[.attemptStarted] == 25)
    }

    @Test("A capacity of Int.max or a detail limit of Int.min records events (clamped), never a crash")
    func hostileLimits() {
        var configuration = TelemetryRecorder.Configuration()
        configuration.capacity = Int.max
        configuration.maximumDetailLength = Int.min
        let fixture = TelemetryFixture(configuration: configuration)
        fixture.emit(.attemptStarted, detail: "a detail longer than nothing")
        let events = fixture.recorder.snapshot()
        #expect(events.count == 1)
        #expect(events.first?.detail == "…")
    }

    @Test("Records older than the window are dropped on the injected clock")
    func windowExpiry() {
        let fixture = TelemetryFixture()
        fixture.emit(.attemptStarted, key: "old")
        fixture.advance(seconds: 1800)
        fixture.emit(.attemptStarted, key: "middle")
        fixture.advance(seconds: 1801)
        let keys = fixture.recorder.snapshot().map(\.key)
        #expect(keys == ["middle"])
        fixture.advance(seconds: 1800)
        #expect(fixture.recorder.snapshot().isEmpty)
    }

    @Test("A snapshot round-trips every stored field")
    func roundTrip() {
        let fixture = TelemetryFixture()
        fixture.emit(
            .attemptFailed, key: "lever", attempt: 3, duration: .milliseconds(250),
            classification: FailureClassification(category: .rateLimited, code: .rateLimited, httpStatus: 429),
            detail: "slow down", count: 2, total: 6)
        fixture.transition("lever", .closed, .open)
        let events = fixture.recorder.snapshot()
        #expect(events.count == 2)
        let failed = events[0]
        #expect(failed.kind == .attemptFailed)
        #expect(failed.key == "lever")
        #expect(failed.operation == "fetch")
        #expect(failed.attempt == 3)
        #expect(failed.duration == .milliseconds(250))
        #expect(failed.classification?.category == .rateLimited)
        #expect(failed.classification?.code == .rateLimited)
        #expect(failed.classification?.httpStatus == 429)
        #expect(failed.detail == "slow down")
        #expect(failed.count == 2)
        #expect(failed.total == 6)
        #expect(events[1].transition == BreakerTransition(from: .closed, to: .open, openFor: .seconds(30)))
    }

    @Test("Details are redacted and truncated before they are stored")
    func redactsAndTruncates() {
        let fixture = TelemetryFixture()
        fixture.emit(.insecureTransportBlocked, detail: "http://api.example.com/?api_key=sekrit123")
        fixture.emit(.fallbackUsed, detail: String(repeating: "x", count: 500))
        let events = fixture.recorder.snapshot()
        #expect(events[0].detail?.contains("sekrit123") == false)
        #expect(events[0].detail?.contains("[REDACTED]") == true)
        #expect((events[1].detail?.utf8.count ?? 0) <= 48)
    }

    /// The footprint is computed from the actual contents by `memoryFootprint()`: the ring's inline storage
    /// (`capacity × MemoryLayout<StoredRecord>.stride`), plus the heap storage of every detail longer than
    /// Swift's 15-byte small-string limit (32-byte header + bytes + terminator, rounded to 16), plus the
    /// intern table's names and hash table. This test fills 1,000 records with the worst case: every record
    /// with a maximal (48-byte) detail and 50 distinct 40-character keys.
    @Test("1,000 records take at most 200 KB, even with maximal details")
    func memoryBound() {
        let fixture = TelemetryFixture()
        for index in 0..<1000 {
            fixture.emit(
                .attemptFailed, key: "source-with-a-long-identifier-number-\(index % 50)", attempt: index % 5 + 1,
                duration: .milliseconds(Int64(index)), classification: .serverError,
                detail: "detail \(index) " + String(repeating: "d", count: 100))
        }
        #expect(fixture.recorder.count == 1000)
        let bytes = fixture.recorder.memoryFootprint()
        #expect(TelemetryRecorder.recordStride <= 80)
        #expect(bytes <= 200 * 1024, "footprint \(bytes) bytes")
        #expect(bytes >= 1000 * TelemetryRecorder.recordStride)
    }

    @Test("Recent counts reach back the whole rate window at any rate, in whole 15-second buckets")
    func recentCounts() {
        let fixture = TelemetryFixture()
        // 20 minutes of 10 finished attempts a second (one failed, one a succeeded retry): 12,000 events.
        for _ in 0..<1200 {
            fixture.fail("a")
            for _ in 0..<8 { fixture.succeed("a") }
            fixture.succeed("b", attempt: 2)
            fixture.advance(seconds: 1)
        }
        let now = fixture.clock.now()
        var counts = fixture.recorder.recentCounts()
        #expect(counts.resolution == .seconds(15))
        #expect(counts.span == .seconds(900))
        // The bucket in progress ([1200 s, 1215 s), empty so far) and the 59 before it: the last 885 seconds.
        let window = counts.counts(over: .seconds(900), endingAt: now)
        #expect(window.attempts == 8850)
        #expect(window.failures == 885)
        #expect(window.attemptsByKey == ["a": 7965, "b": 885])
        #expect(window.failuresByKey == ["a": 885])
        #expect(window.retryAttempts == 885)
        #expect(window.retrySuccesses == 885)
        #expect(window.errorRate(of: "a") == 885.0 / 7965.0)
        // Ten minutes ago: buckets [555 s, 615 s).
        #expect(counts.counts(over: .seconds(60), endingAt: now.advanced(by: .seconds(-600))).attempts == 600)
        // Beyond the span: nothing is kept.
        #expect(counts.counts(over: .seconds(60), endingAt: ResilienceInstant(offset: .seconds(100))).attempts == 0)
        #expect(counts.counts(over: .zero, endingAt: now).attempts == 0)
        // A late event inside the span counts; one older than the span is dropped.
        for seconds: Int64 in [400, 0] {
            fixture.recorder.receive(
                ResilienceEvent(
                    kind: .attemptFailed, key: "c", attempt: 1, time: ResilienceInstant(offset: .seconds(seconds))))
        }
        counts = fixture.recorder.recentCounts()
        #expect(counts.counts(over: .seconds(900), endingAt: now).failuresByKey["c"] == 1)
        fixture.recorder.removeAllRecords()
        #expect(fixture.recorder.recentCounts().counts(over: .seconds(900), endingAt: now) == RatioCounts())
    }

    @Test("A key that goes quiet keeps its counts while they are inside the span and loses them after")
    func recentCountsOfAQuietKey() {
        let fixture = TelemetryFixture()
        for _ in 0..<60 {
            fixture.fail("a")
            fixture.advance(seconds: 1)
        }
        fixture.advance(seconds: 600)
        for _ in 0..<10 {
            fixture.succeed("a")
            fixture.advance(seconds: 1)
        }
        var window = fixture.recorder.recentCounts().counts(over: .seconds(900), endingAt: fixture.clock.now())
        #expect(window.attempts == 70)
        #expect(window.failures == 60)
        fixture.advance(seconds: 330)
        fixture.succeed("a")
        window = fixture.recorder.recentCounts().counts(over: .seconds(900), endingAt: fixture.clock.now())
        #expect(window.attempts == 11, "the failures of the first minute are more than 15 minutes old")
        #expect(window.failures == 0)
    }

    @Test("The rate window sets the buckets' span and width")
    func rateWindow() {
        var configuration = TelemetryRecorder.Configuration()
        configuration.rateWindow = .seconds(3600)
        let fixture = TelemetryFixture(configuration: configuration)
        for _ in 0..<100 {
            fixture.emit(.fetchCompleted, key: "all", count: 2, total: 3)
            fixture.emit(.partialResults, key: "all")
            fixture.emit(.partialResults, key: "all")
            fixture.advance(seconds: 30)
        }
        let counts = fixture.recorder.recentCounts()
        #expect(counts.resolution == .seconds(60))
        #expect(counts.span == .seconds(3600))
        let window = counts.counts(over: .seconds(3600), endingAt: fixture.clock.now())
        #expect(window.fetches == 100)
        #expect(window.partialFetches == 200, "the larger of partial completions and partial-results events")
        #expect(window.partialFailureRate == 1)
    }

    @Test("Concurrent emitters lose nothing")
    func concurrentEmitters() async {
        let fixture = TelemetryFixture()
        let recorder = fixture.recorder
        let now = fixture.clock.now()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for _ in 0..<100 {
                        recorder.receive(ResilienceEvent(kind: .attemptStarted, key: "k\(task)", time: now))
                    }
                }
            }
        }
        #expect(recorder.metrics().eventsReceived == 800)
        #expect(recorder.count == 800)
    }

    @Test("Hostile input: thousands of distinct keys stay bounded as 'other'")
    func distinctKeysBounded() {
        var configuration = TelemetryRecorder.Configuration()
        configuration.maximumDistinctNames = 16
        let fixture = TelemetryFixture(configuration: configuration)
        for index in 0..<500 { fixture.emit(.attemptStarted, key: "key-\(index)") }
        let metrics = fixture.recorder.metrics()
        #expect(metrics.sources.count <= 16)
        #expect(metrics.sources["other"] != nil)
        #expect(metrics.sources.values.reduce(0) { $0 + ($1.eventCounts[.attemptStarted] ?? 0) } == 500)
    }

    @Test("Keys past the name limit have no breaker state: 'other' cannot say whether any of their breakers is open")
    func overflowKeysHaveNoBreakerState() throws {
        var configuration = TelemetryRecorder.Configuration()
        configuration.maximumDistinctNames = 3  // "", "other" and one key of its own
        let fixture = TelemetryFixture(configuration: configuration)
        fixture.transition("lever", .closed, .open)
        // Two keys past the limit: b's breaker opens, then c's pipeline is created with its breaker closed.
        fixture.emit(.breakerTransition, key: "b", transition: BreakerTransition(from: .closed, to: .open, sequence: 1))
        fixture.emit(.pipelineCreated, key: "c", transition: BreakerTransition(from: .closed, to: .closed, sequence: 0))
        let metrics = fixture.recorder.metrics()
        #expect(metrics.sources["lever"]?.breakerState == .open)
        #expect(metrics.sources["other"] != nil)
        #expect(metrics.sources["other"]?.breakerState == nil, "b's breaker is open, c's closed")
        let samples = try PrometheusValidator.validate(PrometheusExporter().render(metrics))
        #expect(!samples.contains { $0.name == "resilience_breaker_state" && $0.labels["key"] == "other" })
        // Nor do the statistics, which replay the stored records: no state, opens or time open for "other".
        let statistics = fixture.recorder.statistics()
        #expect(statistics.sources["lever"]?.breakerState == .open)
        #expect(statistics.sources["other"]?.breakerState == nil)
        #expect(statistics.sources["other"]?.breakerOpens ?? 0 == 0)
        #expect(fixture.recorder.snapshot().filter { $0.key == "other" }.allSatisfy { $0.transition == nil })
        // A key named "other" keeps its breaker state.
        let named = TelemetryFixture(configuration: configuration)
        named.transition("other", .closed, .open)
        #expect(named.recorder.metrics().sources["other"]?.breakerState == .open)
        #expect(named.recorder.statistics().sources["other"]?.breakerState == .open)
        #expect(named.recorder.statistics().sources["other"]?.breakerOpens == 1)
    }

    @Test("Keys that differ only in a secret are one key: they never fill the table and push real keys to 'other'")
    func keysDifferingInSecretsAreOne() {
        let fixture = TelemetryFixture()
        for index in 0..<2000 {
            fixture.recorder.receive(
                ResilienceEvent(
                    kind: .attemptStarted, key: "https://hooks.example.com/in?token=t\(index)",
                    operation: "POST /in?api_key=k\(index)", time: fixture.clock.now()))
        }
        fixture.emit(.attemptStarted, key: "lever")
        let metrics = fixture.recorder.metrics()
        #expect(metrics.sources.keys.sorted() == ["https://hooks.example.com/in?token=[REDACTED]", "lever"])
        #expect(metrics.sources["https://hooks.example.com/in?token=[REDACTED]"]?.eventCounts[.attemptStarted] == 2000)
        #expect(fixture.recorder.snapshot().last?.operation == "fetch")
        #expect(Set(fixture.recorder.snapshot().map(\.operation)) == ["POST /in?api_key=[REDACTED]", "fetch"])
    }

    @Test("Third-party kinds filling the kind table never turn the library's own kinds into 'other'")
    func customKindsKeepBuiltInKinds() {
        let fixture = TelemetryFixture()
        fixture.emit(.attemptStarted, key: "jobs")
        for index in 0..<100 {
            fixture.recorder.receive(
                ResilienceEvent(kind: ResilienceEventKind("acme-step-\(index)"), key: "jobs", time: fixture.clock.now())
            )
        }
        fixture.emit(.attemptSucceeded, key: "jobs")
        fixture.emit(.attemptStarted, key: "jobs")
        fixture.fail("jobs", classification: .serverError)
        let jobs = fixture.recorder.metrics().sources["jobs"]
        #expect(jobs?.attemptsInFlight == 0)
        #expect(jobs?.eventCounts[.attemptSucceeded] == 1)
        #expect(jobs?.eventCounts[.attemptFailed] == 1)
        #expect(jobs?.eventCounts[ResilienceEventKind("other")] ?? 0 > 0, "custom kinds past the table share 'other'")
    }

    @Test("Thousands of distinct operations never turn failure codes into 'other'")
    func distinctOperationsKeepCodes() {
        let fixture = TelemetryFixture()
        // A server naming operations after request paths with ids in them.
        for index in 0..<2000 {
            fixture.recorder.receive(
                ResilienceEvent(
                    kind: .attemptStarted, key: "webhooks", operation: "POST /hooks/\(index)",
                    time: fixture.clock.now()))
        }
        fixture.fail("webhooks", classification: .serverError)
        fixture.fail("webhooks", classification: .timeout)
        let stats = fixture.recorder.statistics()
        #expect(stats.errorCountsByCode[.serverUnavailable] == 1)
        #expect(stats.errorCountsByCode[.timedOut] == 1)
        #expect(stats.errorCountsByCode[FailureCode("other")] == nil)
        #expect(fixture.recorder.snapshot().last?.classification?.code == .timedOut)
    }
}

@Suite("Sinks")
struct SinkTests {
    @Test("The no-op sink is disabled; the multiplexer forwards to enabled sinks only")
    func multiplexing() {
        let first = TelemetryFixture()
        let second = TelemetryFixture()
        let sink = MultiplexingSink(first.recorder, NoOpSink(), second.recorder)
        #expect(NoOpSink().isEnabled == false)
        #expect(sink.isEnabled)
        #expect(MultiplexingSink(NoOpSink()).isEnabled == false)
        sink.receive(ResilienceEvent(kind: .fallbackUsed, key: "k", time: .origin))
        #expect(first.recorder.count == 1)
        #expect(second.recorder.count == 1)
    }

    @Test("The line sink writes formatted, redacted lines and honours the minimum level")
    func lineSink() {
        let lines = LockedBox<[String]>([])
        let sink = LineSink(format: .logLine, minimumLevel: .warning) { line in lines.mutate { $0.append(line) } }
        sink.receive(ResilienceEvent(kind: .attemptStarted, key: "k", time: .origin))
        sink.receive(
            ResilienceEvent(
                kind: .attemptFailed, key: "k", time: .origin, classification: .serverError,
                detail: "Authorization: Bearer abc.def"))
        #expect(lines.value.count == 1)
        #expect(lines.value.first?.contains("abc.def") == false)
        #expect(lines.value.first?.contains("code=NET_014") == true)
    }
}

@Suite("BufferedSink")
struct BufferedSinkTests {
    @Test("Receiving never waits for the consumer; overflow drops the oldest and is counted")
    func boundedWithoutConsumer() async {
        let fixture = TelemetryFixture()
        let buffered = BufferedSink(capacity: 3, downstream: fixture.recorder)
        for attempt in 1...5 {
            buffered.receive(ResilienceEvent(kind: .attemptStarted, key: "k", attempt: attempt, time: .origin))
        }
        #expect(buffered.droppedCount == 2)
        #expect(fixture.recorder.count == 0)
        buffered.finish()
        await buffered.run()
        #expect(fixture.recorder.snapshot().map(\.attempt) == [3, 4, 5])
    }

    @Test("The consumer forwards events in order")
    func forwards() async {
        let fixture = TelemetryFixture()
        let buffered = BufferedSink(capacity: 100, downstream: fixture.recorder)
        let consumer = Task { await buffered.run() }
        for attempt in 1...50 {
            buffered.receive(ResilienceEvent(kind: .attemptStarted, key: "k", attempt: attempt, time: .origin))
        }
        buffered.finish()
        await consumer.value
        #expect(fixture.recorder.snapshot().map(\.attempt) == Array(1...50))
        #expect(buffered.droppedCount == 0)
        #expect(BufferedSink(downstream: NoOpSink()).isEnabled == false)
    }

    @Test("A second run() while one forwards returns at once, and the one consumer keeps every event in order")
    func oneConsumer() async {
        let fixture = TelemetryFixture()
        let buffered = BufferedSink(capacity: 100, downstream: fixture.recorder)
        let event = { (attempt: Int) in
            ResilienceEvent(kind: .attemptStarted, key: "k", attempt: attempt, time: .origin)
        }
        let first = Task { await buffered.run() }
        buffered.receive(event(1))
        while fixture.recorder.count < 1 { await Task.yield() }  // the first consumer forwards
        let secondReturned = LockedBox(false)
        let second = Task {
            await buffered.run()
            secondReturned.mutate { $0 = true }
        }
        for _ in 0..<10_000 where !secondReturned.value { await Task.yield() }
        #expect(secondReturned.value, "a second consumer waited for events (and would take some, out of order)")
        for attempt in 2...50 { buffered.receive(event(attempt)) }
        buffered.finish()
        await first.value
        await second.value
        #expect(fixture.recorder.snapshot().map(\.attempt) == Array(1...50))
    }

    @Test("Events received after finish() are discarded and counted, whether or not the consumer has returned")
    func afterFinishCounted() async {
        let fixture = TelemetryFixture()
        let buffered = BufferedSink(capacity: 100, downstream: fixture.recorder)
        buffered.receive(ResilienceEvent(kind: .attemptStarted, key: "k", attempt: 1, time: .origin))
        buffered.finish()
        buffered.receive(ResilienceEvent(kind: .attemptStarted, key: "k", attempt: 2, time: .origin))
        await buffered.run()
        buffered.receive(ResilienceEvent(kind: .attemptStarted, key: "k", attempt: 3, time: .origin))
        #expect(fixture.recorder.snapshot().map(\.attempt) == [1])
        #expect(buffered.droppedCount == 2)
    }
}
