import ResilienceCore
import ResilienceTelemetry
import Testing

@Suite("HealthMonitor")
struct HealthMonitorTests {
    private func monitor(_ fixture: TelemetryFixture) -> HealthMonitor {
        HealthMonitor(recorder: fixture.recorder)
    }

    @Test("Healthy traffic raises nothing")
    func healthy() {
        let fixture = TelemetryFixture()
        for _ in 0..<30 {
            fixture.succeed("a")
            fixture.succeed("b")
            fixture.advance(seconds: 10)
        }
        let report = monitor(fixture).evaluate()
        #expect(report.alerts.isEmpty)
        #expect(report.isHealthy)
        #expect(report.status == nil)
    }

    @Test("All sources failing: critical only after more than 5 minutes")
    func allSourcesFailing() {
        let fixture = TelemetryFixture()
        fixture.succeed("a")
        fixture.succeed("b")
        fixture.advance(seconds: 10)
        for _ in 0..<29 {
            fixture.fail("a")
            fixture.fail("b")
            fixture.advance(seconds: 10)
        }
        #expect(monitor(fixture).evaluate().alert("all-sources-failing") == nil)
        fixture.fail("a")
        fixture.fail("b")
        fixture.advance(seconds: 15)
        fixture.fail("a")
        let report = monitor(fixture).evaluate()
        let alert = report.alert("all-sources-failing")
        #expect(alert?.severity == .critical)
        #expect(alert?.keys == ["a", "b"])
        #expect(report.status == .critical)
        #expect(!report.isHealthy)
    }

    @Test("Every call failing for 10 minutes under load is critical, although the ring holds only the last 50 s")
    func allSourcesFailingUnderLoad() {
        let fixture = TelemetryFixture()
        fixture.succeed("a")
        fixture.succeed("b")
        // 10 failed attempts a second per source: the 1,000-record ring covers the last 50 seconds only.
        for _ in 0..<600 {
            for _ in 0..<10 {
                fixture.fail("a")
                fixture.fail("b")
            }
            fixture.advance(seconds: 1)
        }
        #expect(fixture.recorder.metrics().recordsEvicted > 0)
        let report = monitor(fixture).evaluate()
        #expect(report.alert("all-sources-failing")?.severity == .critical)
        #expect(report.alert("all-sources-failing")?.keys.sorted() == ["a", "b"])
        #expect(!report.isHealthy)
        // A success clears it at once.
        fixture.succeed("a")
        #expect(monitor(fixture).evaluate().alert("all-sources-failing") == nil)
    }

    @Test("Some sources failing: a warning at once, never healthy; it clears when the source succeeds")
    func someSourcesFailing() {
        let fixture = TelemetryFixture()
        fixture.succeed("a")
        fixture.fail("b")
        fixture.emit(.sourceFailed, key: "b", classification: .serverError)
        fixture.succeed("c")
        fixture.advance(seconds: 1)
        let report = monitor(fixture).evaluate()
        #expect(report.alert("sources-failing")?.keys == ["b"])
        #expect(report.alert("sources-failing")?.severity == .warning)
        #expect(!report.isHealthy)
        fixture.succeed("b")
        #expect(monitor(fixture).evaluate().alert("sources-failing") == nil)
        let retrying = TelemetryFixture()
        retrying.succeed("a")
        retrying.fail("b")
        #expect(
            monitor(retrying).evaluate().alert("sources-failing") == nil, "a failed attempt alone is not a failed fetch"
        )
    }

    @Test("A rarely fetched source whose last fetch failed is a warning, although busy keys pushed it out of the ring")
    func rareFailingSourceUnderLoad() {
        let fixture = TelemetryFixture()
        fixture.succeed("feed")
        fixture.fail("feed")
        fixture.emit(.sourceFailed, key: "feed", classification: .serverError)
        // A busy key: 20 successes a second for two minutes, so the 1,000-record ring holds its last 50 s only.
        for _ in 0..<120 {
            for _ in 0..<20 { fixture.succeed("api") }
            fixture.advance(seconds: 1)
        }
        #expect(fixture.recorder.snapshot().allSatisfy { $0.key == "api" })
        let report = monitor(fixture).evaluate()
        #expect(report.alert("sources-failing")?.keys == ["feed"])
        #expect(report.alert("all-sources-failing") == nil)
        #expect(!report.isHealthy)
        fixture.succeed("feed")
        #expect(monitor(fixture).evaluate().alert("sources-failing") == nil)
    }

    @Test("A quiet source that succeeded prevents all-sources-failing when a busy failing key fills the ring")
    func quietHealthySourceUnderLoad() {
        let fixture = TelemetryFixture()
        fixture.succeed("feed")
        fixture.succeed("api")
        // The busy key fails 10 times a second for 6 minutes; the quiet one is not called meanwhile.
        for _ in 0..<360 {
            for _ in 0..<10 { fixture.fail("api") }
            fixture.emit(.sourceFailed, key: "api", classification: .serverError)
            fixture.advance(seconds: 1)
        }
        #expect(fixture.recorder.snapshot().allSatisfy { $0.key == "api" })
        let report = monitor(fixture).evaluate()
        #expect(report.alert("all-sources-failing") == nil, "feed has not failed")
        #expect(report.alert("sources-failing")?.keys == ["api"])
        #expect(report.alert("sources-failing")?.message == "1 of 2 sources are failing: api")
        // A key not tried within the recorder's window (1 hour) no longer counts as a source.
        fixture.advance(seconds: 3600)
        fixture.fail("api")
        #expect(monitor(fixture).evaluate().alert("all-sources-failing")?.keys == ["api"])
    }

    static let rejected = FailureClassification(category: .circuitOpen, code: .circuitOpen)

    @Test("A quiet source without a breaker prevents every-breaker-open when a busy key's rejections fill the ring")
    func quietSourceWithoutBreakerUnderLoad() {
        let fixture = TelemetryFixture()
        fixture.succeed("feed")
        fixture.transition("api", .closed, .open)
        for _ in 0..<120 {
            for _ in 0..<20 { fixture.fail("api", classification: Self.rejected) }
            fixture.advance(seconds: 1)
        }
        #expect(fixture.recorder.snapshot().allSatisfy { $0.key == "api" })
        #expect(monitor(fixture).evaluate().alert("every-breaker-open") == nil, "feed has no breaker and succeeded")
    }

    @Test("One healthy source prevents the all-sources-failing alert")
    func oneHealthySource() {
        let fixture = TelemetryFixture()
        for _ in 0..<40 {
            fixture.fail("a")
            fixture.succeed("b")
            fixture.advance(seconds: 10)
        }
        #expect(monitor(fixture).evaluate().alert("all-sources-failing") == nil)
    }

    @Test("Error rate above 50% must last 2 minutes to be critical; a short burst is not enough")
    func criticalErrorRate() {
        let fixture = TelemetryFixture()
        for _ in 0..<20 {
            fixture.succeed("a")
            fixture.advance(seconds: 5)
        }
        for _ in 0..<6 {
            fixture.fail("a")
            fixture.fail("a")
            fixture.succeed("a")
            fixture.advance(seconds: 5)
        }
        #expect(monitor(fixture).evaluate().alert("error-rate-critical") == nil)
        for _ in 0..<20 {
            fixture.fail("a")
            fixture.fail("a")
            fixture.succeed("a")
            fixture.advance(seconds: 5)
        }
        let alert = monitor(fixture).evaluate().alert("error-rate-critical")
        #expect(alert?.severity == .critical)
        #expect(alert?.keys == ["a"])
        #expect(alert?.message == "Error rate 67% over the last 2 min (limit 50%)")
    }

    @Test("10,000 failing attempts in 2 minutes are critical, although the 1,000-record ring holds the last 12 s")
    func criticalErrorRateUnderLoad() {
        let fixture = TelemetryFixture()
        for _ in 0..<125 {
            for _ in 0..<80 { fixture.fail("a") }
            fixture.advance(seconds: 1)
        }
        #expect(fixture.recorder.metrics().recordsEvicted == 9000)
        let report = monitor(fixture).evaluate()
        let alert = report.alert("error-rate-critical")
        #expect(alert?.severity == .critical)
        #expect(alert?.keys == ["a"])
        #expect(alert?.value == 1)
        #expect(alert?.message == "Error rate 100% over the last 2 min (limit 50%)")
        #expect(report.status == .critical)
    }

    @Test("A sustained 33% error rate at 60 attempts a second is a warning after 5 minutes, not before")
    func warningErrorRateUnderLoad() {
        let fixture = TelemetryFixture()
        func second() {
            for _ in 0..<20 {
                fixture.fail("a")
                fixture.succeed("a")
                fixture.succeed("b")
            }
            fixture.advance(seconds: 1)
        }
        for _ in 0..<140 { second() }
        #expect(monitor(fixture).evaluate().alert("error-rate-warning") == nil, "2 min 20 s is not 5 min")
        for _ in 0..<161 { second() }
        let report = monitor(fixture).evaluate()
        #expect(report.alert("error-rate-warning")?.keys == ["a"], "a fails half its attempts, b none")
        #expect(report.alert("error-rate-critical") == nil)
    }

    @Test("A burst of failures under load is not a sustained error rate")
    func burstUnderLoad() {
        let fixture = TelemetryFixture()
        for _ in 0..<120 {
            for _ in 0..<50 { fixture.succeed("a") }
            fixture.advance(seconds: 1)
        }
        for _ in 0..<30 {
            for _ in 0..<50 { fixture.fail("a") }
            fixture.advance(seconds: 1)
        }
        let report = monitor(fixture).evaluate()
        #expect(report.alert("error-rate-critical") == nil)
        #expect(report.alert("error-rate-warning") == nil)
    }

    @Test("Failed retries and partial fetches count for 15 minutes, however many attempts follow them")
    func ratioRulesUnderLoad() {
        let fixture = TelemetryFixture()
        for _ in 0..<4 {
            fixture.fail("a", attempt: 2)
            fixture.emit(.fetchCompleted, key: "all", count: 1, total: 3)
        }
        fixture.advance(seconds: 60)
        // 2,000 first attempts that succeed: the ring now holds none of the retries or fetches above.
        for _ in 0..<2000 { fixture.succeed("b") }
        fixture.advance(seconds: 1)
        let report = monitor(fixture).evaluate()
        #expect(report.alert("retry-success-low")?.value == 0)
        #expect(report.alert("partial-failures-high")?.value == 1)
        #expect(report.alert("retry-success-low")?.message == "Only 0% of 4 retries succeeded (minimum 50%)")
        fixture.advance(seconds: 900)
        let later = monitor(fixture).evaluate()
        #expect(later.alert("retry-success-low") == nil, "older than 15 minutes")
        #expect(later.alert("partial-failures-high") == nil)
    }

    @Test("Error rate above 20% for 5 minutes is a warning, not critical")
    func warningErrorRate() {
        let fixture = TelemetryFixture()
        for _ in 0..<62 {
            fixture.fail("a")
            for _ in 0..<2 { fixture.succeed("a") }
            fixture.advance(seconds: 5)
        }
        let report = monitor(fixture).evaluate()
        #expect(report.alert("error-rate-warning")?.severity == .warning)
        #expect(report.alert("error-rate-critical") == nil)
        #expect(report.status == .warning)
    }

    @Test("Every breaker open is critical; a breaker opening is info")
    func breakers() {
        let fixture = TelemetryFixture()
        fixture.fail("a")
        fixture.fail("b")
        fixture.transition("a", .closed, .open)
        var report = monitor(fixture).evaluate()
        #expect(report.alert("every-breaker-open") == nil)
        #expect(report.alert("breaker-opened")?.severity == .info)
        #expect(report.alert("breaker-opened")?.keys == ["a"])
        fixture.transition("b", .closed, .open)
        report = monitor(fixture).evaluate()
        #expect(report.alert("every-breaker-open")?.severity == .critical)
        fixture.advance(seconds: 400)
        report = monitor(fixture).evaluate()
        #expect(report.alert("breaker-opened") == nil)
        #expect(report.alert("every-breaker-open") != nil)
    }

    @Test("Retry success below 50% is a warning; a retry that succeeded is info")
    func retries() {
        let fixture = TelemetryFixture()
        fixture.fail("a", attempt: 2)
        fixture.fail("a", attempt: 3)
        fixture.fail("a", attempt: 2)
        fixture.succeed("a", attempt: 2)
        let report = monitor(fixture).evaluate()
        #expect(report.alert("retry-success-low")?.value == 0.25)
        #expect(report.alert("retry-succeeded")?.severity == .info)
        fixture.advance(seconds: 1000)
        #expect(monitor(fixture).evaluate().alerts.isEmpty)
    }

    @Test("A threshold no whole percentage holds (±1e300, ±infinity) is written as it is, never a crash")
    func hostileThresholds() {
        let fixture = TelemetryFixture()
        fixture.fail("a", attempt: 2)
        fixture.fail("a", attempt: 3)
        fixture.fail("a", attempt: 2)
        fixture.succeed("a", attempt: 2)
        for _ in 0..<10 { fixture.emit(.fetchCompleted, key: "all", count: 4, total: 6) }
        for minimum in [1e300, Double.infinity] {
            var thresholds = HealthThresholds()
            thresholds.minimumRetrySuccessRate = minimum
            thresholds.maximumPartialFailureRate = -minimum
            let report = HealthMonitor(recorder: fixture.recorder, rules: HealthRule.standard(thresholds)).evaluate()
            #expect(report.alert("retry-success-low")?.message.hasSuffix("(minimum \(minimum * 100)%)") == true)
            #expect(report.alert("partial-failures-high")?.message.hasSuffix("(limit \(-minimum * 100)%)") == true)
        }
    }

    @Test("Partial failures above 30% of fetches are a warning")
    func partials() {
        let fixture = TelemetryFixture()
        for total in [6, 6, 6, 6, 6] { fixture.emit(.fetchCompleted, key: "all", count: total, total: total) }
        #expect(monitor(fixture).evaluate().alert("partial-failures-high") == nil)
        for _ in 0..<3 { fixture.emit(.fetchCompleted, key: "all", count: 4, total: 6) }
        #expect(monitor(fixture).evaluate().alert("partial-failures-high")?.severity == .warning)
    }

    @Test("Insecure transport blocks are info")
    func insecure() {
        let fixture = TelemetryFixture()
        fixture.emit(.insecureTransportBlocked, key: "rss", detail: "http://feeds.example.com/jobs")
        #expect(monitor(fixture).evaluate().alert("insecure-transport-blocked")?.keys == ["rss"])
    }

    @Test("The rule set is configurable: thresholds, removal and custom rules")
    func configurable() {
        let fixture = TelemetryFixture()
        for _ in 0..<30 {
            fixture.fail("a")
            for _ in 0..<9 { fixture.succeed("a") }
            fixture.advance(seconds: 12)
        }
        #expect(monitor(fixture).evaluate().alerts.isEmpty)
        var thresholds = HealthThresholds()
        thresholds.warningErrorRate = 0.05
        var rules = HealthRule.standard(thresholds)
        rules.append(
            HealthRule(id: "custom", severity: .info) { input in
                input.events.isEmpty ? nil : HealthAlert(rule: "custom", severity: .info, message: "events seen")
            })
        let report = HealthMonitor(recorder: fixture.recorder, rules: rules).evaluate()
        #expect(report.alerts.map(\.rule) == ["error-rate-warning", "custom"])
    }
}

@Suite("HealthMonitor periodic reports")
struct HealthMonitorStreamTests {
    @Test("Reports arrive every interval on the manual clock")
    func periodic() async {
        let fixture = TelemetryFixture()
        let monitor = HealthMonitor(recorder: fixture.recorder)
        var iterator = monitor.reports(every: .seconds(60)).makeAsyncIterator()
        await fixture.manual.waitForSleepers(count: 1)
        fixture.emit(.insecureTransportBlocked, key: "rss")
        fixture.manual.advance(by: .seconds(60))
        let first = await iterator.next()
        #expect(first?.evaluatedAt == ResilienceInstant(offset: .seconds(60)))
        #expect(first?.alert("insecure-transport-blocked") != nil)
        await fixture.manual.waitForSleepers(count: 1)
        fixture.manual.advance(by: .seconds(400))
        let second = await iterator.next()
        #expect(second?.alerts.isEmpty == true)
    }

    @Test("A report interval of zero or less waits 1 ms between reports instead of spinning")
    func nonPositiveInterval() async {
        for interval in [Duration.zero, .seconds(-5), .seconds(Int64.min)] {
            let fixture = TelemetryFixture()
            let stream = HealthMonitor(recorder: fixture.recorder).reports(every: interval)
            let consumer = Task { for await _ in stream {} }
            for _ in 0..<20_000 where fixture.manual.sleeperCount == 0 { await Task.yield() }
            #expect(fixture.manual.sleeperCount == 1, "the monitor waits on its clock (\(interval))")
            #expect(fixture.manual.nextDeadline == .init(offset: .milliseconds(1)))
            consumer.cancel()
            await consumer.value
        }
    }
}
