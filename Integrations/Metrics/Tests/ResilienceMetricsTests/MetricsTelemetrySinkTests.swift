import CoreMetrics
import MetricsTestKit
import ResilienceCore
import ResilienceMetrics
import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("MetricsTelemetrySink")
struct MetricsTelemetrySinkTests {
    static func event(
        _ kind: ResilienceEventKind, key: String = "lever", duration: Duration? = nil,
        classification: FailureClassification? = nil, transition: BreakerTransition? = nil
    ) -> ResilienceEvent {
        ResilienceEvent(
            kind: kind, key: key, operation: "fetch", attempt: 1, time: .origin, duration: duration,
            classification: classification, transition: transition)
    }

    @Test("attempts count by key, category and outcome; their latency goes to a timer")
    func attempts() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        sink.receive(Self.event(.attemptSucceeded, duration: .milliseconds(120)))
        sink.receive(Self.event(.attemptSucceeded, duration: .milliseconds(80)))
        sink.receive(
            Self.event(.attemptFailed, duration: .seconds(2), classification: TestFailure.serverError.classification))
        sink.receive(Self.event(.attemptCancelled, duration: .milliseconds(5)))

        let successes = try metrics.expectCounter(
            "resilience_attempts_total", [("key", "lever"), ("category", "none"), ("outcome", "success")])
        #expect(successes.totalValue == 2)
        let failures = try metrics.expectCounter(
            "resilience_attempts_total", [("key", "lever"), ("category", "server-error"), ("outcome", "failure")])
        #expect(failures.totalValue == 1)
        let cancelled = try metrics.expectCounter(
            "resilience_attempts_total", [("key", "lever"), ("category", "cancelled"), ("outcome", "cancelled")])
        #expect(cancelled.totalValue == 1)
        let latency = try metrics.expectTimer("resilience_attempt_duration_seconds", [("key", "lever")])
        #expect(latency.values == [120_000_000, 80_000_000, 2_000_000_000])
        #expect(metrics.counterTotal(label: "resilience_events_total") == 4)
    }

    @Test("attempts in flight go up on each start and down on each end, cancellation included")
    func inFlight() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        sink.receive(Self.event(.attemptStarted))
        sink.receive(Self.event(.attemptStarted))
        sink.receive(Self.event(.attemptSucceeded, duration: .milliseconds(1)))
        sink.receive(Self.event(.attemptStarted))
        sink.receive(Self.event(.attemptCancelled))
        sink.receive(Self.event(.attemptFailed, classification: TestFailure.serverError.classification))
        let gauge = try metrics.expectGauge("resilience_attempts_in_flight", [("key", "lever")])
        #expect(gauge.values == [1, 2, 1, 2, 1, 0])
    }

    @Test("the breaker's state series exist from the pipeline's creation, one per state")
    func breakerFromCreation() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        let clock = ManualClock()
        let pipeline = Pipeline { CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker()) }
        pipeline.announceCreation(key: "lever", to: sink, clock: .manual(clock))
        func state(_ name: String) throws -> Double? {
            try metrics.expectGauge("resilience_breaker_state", [("key", "lever"), ("state", name)]).lastValue
        }
        #expect(try state("closed") == 1)
        #expect(try state("open") == 0)
        #expect(try state("half_open") == 0)
        #expect(try state("isolated") == 0)
        Pipeline { RetryStrategy(policy: StandardRetryPolicy.standard) }
            .announceCreation(key: "plain", to: sink, clock: .manual(clock))
        #expect(
            !metrics.recorders(label: "resilience_breaker_state").contains {
                $0.dimensions.contains { $0.1 == "plain" }
            })
    }

    @Test("a limiter that made a call wait for its permit rejected nothing")
    func limiterWaitIsNoRejection() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        for detail in ["waiting", "queued", "waiting", "rejected", "bulkhead-full"] {
            var event = Self.event(.rateLimited, duration: .seconds(1))
            event.detail = detail
            sink.receive(event)
        }
        let rejections = try metrics.expectCounter(
            "resilience_rejections_total", [("key", "lever"), ("reason", "rate-limited")])
        #expect(rejections.totalValue == 2)
        #expect(metrics.counterTotal(label: "resilience_events_total") == 5)
    }

    @Test("retries, rejections and the breaker gauge")
    func retriesRejectionsBreaker() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        let timeout = FailureClassification(category: .timeout, code: .timedOut)
        sink.receive(Self.event(.retryScheduled, duration: .seconds(1), classification: timeout))
        sink.receive(Self.event(.retryScheduled, duration: .seconds(2), classification: timeout))
        sink.receive(Self.event(.breakerRejected, duration: .seconds(30)))
        sink.receive(Self.event(.rateLimited, duration: .seconds(1)))
        sink.receive(Self.event(.budgetExhausted, classification: timeout))
        sink.receive(Self.event(.breakerTransition, transition: BreakerTransition(from: .closed, to: .open)))

        #expect(
            try metrics.expectCounter("resilience_retries_total", [("key", "lever"), ("category", "timeout")])
                .totalValue == 2)
        for reason in ["breaker-rejected", "rate-limited", "budget-exhausted"] {
            #expect(
                try metrics.expectCounter("resilience_rejections_total", [("key", "lever"), ("reason", reason)])
                    .totalValue == 1)
        }
        func gauge(_ state: String) throws -> TestRecorder {
            try metrics.expectGauge("resilience_breaker_state", [("key", "lever"), ("state", state)])
        }
        #expect(try gauge("open").lastValue == 1)
        #expect(try gauge("closed").lastValue == 0)
        sink.receive(Self.event(.breakerTransition, transition: BreakerTransition(from: .open, to: .halfOpen)))
        sink.receive(Self.event(.breakerTransition, transition: BreakerTransition(from: .halfOpen, to: .closed)))
        #expect(try gauge("open").values == [1, 0, 0])
        #expect(try gauge("half_open").values == [0, 1, 0])
        #expect(try gauge("closed").values == [0, 0, 1])
        #expect(try gauge("isolated").values == [0, 0, 0])
    }

    @Test("a negative duration (a clock that stepped back) is timed as zero, never as negative or as 292 years")
    func negativeDurations() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        sink.receive(Self.event(.attemptSucceeded, duration: .milliseconds(-5)))
        sink.receive(Self.event(.attemptFailed, duration: .seconds(Int64.min), classification: .unknown))
        sink.receive(Self.event(.attemptSucceeded, duration: .milliseconds(7)))
        sink.recordOperation(key: "lever", duration: .seconds(-1), failure: nil)
        let latency = try metrics.expectTimer("resilience_attempt_duration_seconds", [("key", "lever")])
        #expect(latency.values == [0, 0, 7_000_000])
        let operation = try metrics.expectTimer(
            "resilience_operation_duration_seconds", [("key", "lever"), ("outcome", "success")])
        #expect(operation.values == [0])
    }

    @Test("keys past the cap are counted as other, and the number of series stays bounded")
    func cardinalityCap() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(configuration: .init(maximumKeys: 3), factory: metrics)
        for index in 0..<50 {
            sink.receive(Self.event(.attemptSucceeded, key: "host-\(index)", duration: .milliseconds(1)))
        }
        sink.receive(Self.event(.attemptSucceeded, key: "host-1", duration: .milliseconds(1)))
        let series = metrics.counters(label: "resilience_attempts_total")
        #expect(series.count == 4)
        #expect(sink.distinctKeyCount == 3)
        let other = try metrics.expectCounter(
            "resilience_attempts_total", [("key", "other"), ("category", "none"), ("outcome", "success")])
        #expect(other.totalValue == 47)
        let kept = try metrics.expectCounter(
            "resilience_attempts_total", [("key", "host-1"), ("category", "none"), ("outcome", "success")])
        #expect(kept.totalValue == 2)
    }

    @Test("keys are redacted before they become labels; the prefix is configurable")
    func redactionAndPrefix() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(configuration: .init(prefix: "jobs"), factory: metrics)
        sink.receive(Self.event(.attemptSucceeded, key: "feed?token=abc", duration: .milliseconds(1)))
        let labels = metrics.counters.flatMap { $0.dimensions.map(\.1) }
        #expect(!labels.contains { $0.contains("abc") })
        #expect(metrics.counterTotal(label: "jobs_attempts_total") == 1)
    }

    @Test("MetricsStrategy times the whole operation, retries included, and counts its outcome")
    func operationStage() async throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(factory: metrics)
        let clock = ManualClock()
        let pipeline = Pipeline {
            MetricsStrategy(sink: sink)
            RetryStrategy(policy: StandardRetryPolicy(maxAttempts: 3, backoff: .constant(.seconds(1)), jitter: .none))
        }
        let operation = ScriptedOperation<Int>(
            [.failure(TestFailure.serverError), .delayed(.milliseconds(250), .success(7))], manualClock: clock)
        let context = ResilienceContext(key: "lever", telemetry: sink, clock: .manual(clock))
        let task = Task { try await pipeline.execute(context) { try await operation($0) } }
        await clock.waitForSleepers()
        clock.advance(by: .seconds(1))
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(250))
        #expect(try await task.value == 7)

        let operations = try metrics.expectCounter(
            "resilience_operations_total", [("key", "lever"), ("category", "none"), ("outcome", "success")])
        #expect(operations.totalValue == 1)
        let duration = try metrics.expectTimer(
            "resilience_operation_duration_seconds", [("key", "lever"), ("outcome", "success")])
        #expect(duration.values == [1_250_000_000])
        #expect(
            try metrics.expectCounter("resilience_retries_total", [("key", "lever"), ("category", "server-error")])
                .totalValue == 1)
        #expect(pipeline.stages.first?.name == "metrics")

        let failing = ScriptedOperation<Int>([.failure(TestFailure.serverError)], manualClock: clock)
        let once = Pipeline { MetricsStrategy(sink: sink) }
        await #expect(throws: TestFailure.self) { try await once.execute(context) { try await failing($0) } }
        #expect(
            try metrics.expectCounter(
                "resilience_operations_total", [("key", "lever"), ("category", "server-error"), ("outcome", "failure")]
            ).totalValue == 1)
    }
}

@Suite("MetricsTelemetrySink handle cache")
struct MetricsHandleCacheTests {
    @Test("each series' counter, timer and gauge is made once and reused for every later event")
    func handlesAreMadeOncePerSeries() throws {
        let factory = ObservedMetricsFactory()
        let sink = MetricsTelemetrySink(factory: factory)
        for round in 0..<5 {
            sink.receive(MetricsTelemetrySinkTests.event(.attemptSucceeded, duration: .milliseconds(10)))
            let transition = BreakerTransition(from: .closed, to: round.isMultiple(of: 2) ? .open : .halfOpen)
            sink.receive(MetricsTelemetrySinkTests.event(.breakerTransition, transition: transition))
        }
        // Nine series: events_total for each of the two kinds, attempts_total, the attempt timer, the in-flight
        // gauge, and the breaker gauge's four states.
        #expect(factory.handlesMade.value == 9)
        #expect(
            try factory.base.expectTimer("resilience_attempt_duration_seconds", [("key", "lever")]).values.count
                == 5)
        #expect(
            try factory.base.expectGauge("resilience_breaker_state", [("key", "lever"), ("state", "open")]).values
                .count == 5)
        #expect(factory.base.counterTotal(label: "resilience_events_total") == 10)
    }
}
