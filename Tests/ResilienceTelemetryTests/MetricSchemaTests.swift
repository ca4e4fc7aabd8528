import Foundation
import ResilienceCore
import ResilienceTelemetry
import ResilienceTesting
import Testing

@Suite("Metric schema")
struct MetricSchemaTests {
    static let telemetryGuide = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Docs/Telemetry.md")

    @Test("Docs/Telemetry.md's table is the schema's table")
    func documentedTable() throws {
        let guide = try String(contentsOf: Self.telemetryGuide, encoding: .utf8)
        let begin = try #require(guide.range(of: "<!-- metric-schema:begin"))
        let tableStart = try #require(guide[begin.upperBound...].firstIndex(of: "\n"))
        let end = try #require(guide.range(of: "<!-- metric-schema:end -->"))
        let documented = String(guide[guide.index(after: tableStart)..<end.lowerBound])
        #expect(
            documented == MetricSchema.markdownTable(),
            "regenerate the table in Docs/Telemetry.md from MetricSchema.markdownTable()")
    }

    @Test("Names follow Prometheus and OpenTelemetry conventions and are unique")
    func conventions() {
        let names = MetricSchema.all.map { $0.name() }
        #expect(Set(names).count == names.count)
        for family in MetricSchema.all {
            let name = family.name()
            #expect(name.hasPrefix("resilience_"))
            #expect(name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }, "\(name)")
            #expect((family.kind == .counter) == name.hasSuffix("_total"), "\(name): only counters end in _total")
            if family.kind == .histogram { #expect(name.hasSuffix("_seconds"), "\(name): a unit in the name") }
            #expect(Set(family.labels).count == family.labels.count)
        }
        #expect(MetricSchema.attempts.name(prefix: "") == "attempts_total")
        #expect(MetricSchema.breakerState.name(prefix: "app") == "app_breaker_state")
    }

    @Test("The Prometheus exporter renders every family the recorder can feed, with the schema's types and labels")
    func exporterFollowsSchema() throws {
        let fixture = TelemetryFixture()
        fixture.emit(.attemptStarted, key: "lever")
        fixture.fail("lever", classification: .timeout)
        fixture.emit(.retryScheduled, key: "lever", duration: .seconds(1), classification: .timeout)
        fixture.emit(.attemptStarted, key: "lever", attempt: 2)
        fixture.emit(.breakerRejected, key: "lever", duration: .seconds(3))
        fixture.transition("lever", .closed, .halfOpen)
        let text = PrometheusExporter().render(fixture.recorder.metrics())
        let samples = try PrometheusValidator.validate(text)
        let rendered = MetricSchema.all.filter { $0.feed != .operationStage }
        for family in rendered {
            #expect(text.contains("# TYPE \(family.name()) \(family.kind.rawValue)\n"), "\(family.name())")
            let familySamples = samples.filter {
                $0.name == family.name() || $0.name.hasPrefix(family.name() + "_")
            }
            #expect(!familySamples.isEmpty, "\(family.name()) has no sample")
            for sample in familySamples {
                #expect(Set(sample.labels.keys).subtracting(["le"]) == Set(family.labels), "\(sample.name)")
            }
        }
        for family in MetricSchema.all where family.feed == .operationStage {
            #expect(!text.contains(family.name()))
        }
        func value(_ family: MetricFamily, _ labels: [String: String]) -> Double? {
            samples.first { $0.name == family.name() && $0.labels == labels }?.value
        }
        #expect(value(MetricSchema.attemptsInFlight, ["key": "lever"]) == 1)
        #expect(value(MetricSchema.retries, ["key": "lever", "category": "timeout"]) == 1)
        #expect(value(MetricSchema.rejections, ["key": "lever", "reason": "breaker-rejected"]) == 1)
        #expect(value(MetricSchema.breakerState, ["key": "lever", "state": "half_open"]) == 1)
        #expect(value(MetricSchema.breakerState, ["key": "lever", "state": "open"]) == 0)
    }

    @Test("A limiter that made a call wait for its permit rejected nothing")
    func limiterWaitIsNoRejection() throws {
        let fixture = TelemetryFixture()
        for detail in ["waiting", "queued", "waiting", "rejected", "bulkhead-full"] {
            fixture.emit(.rateLimited, key: "lever", duration: .seconds(1), detail: detail)
        }
        let metrics = fixture.recorder.metrics()
        #expect(metrics.sources["lever"]?.eventCounts[.rateLimited] == 5)
        #expect(metrics.sources["lever"]?.rejectionCounts[.rateLimited] == 2)
        let text = PrometheusExporter().render(metrics)
        #expect(text.contains("resilience_rejections_total{key=\"lever\",reason=\"rate-limited\"} 2\n"), "\(text)")
    }

    @Test("A pipeline's creation shows its breaker closed; a cancelled attempt leaves the in-flight gauge")
    func creationAndCancellation() throws {
        let fixture = TelemetryFixture()
        fixture.emit(
            .pipelineCreated, key: "indeed", attempt: 0, transition: BreakerTransition(from: .closed, to: .closed))
        fixture.emit(.pipelineCreated, key: "no-breaker", attempt: 0)
        fixture.emit(.attemptStarted, key: "indeed")
        fixture.emit(.attemptCancelled, key: "indeed", duration: .milliseconds(5))
        let samples = try PrometheusValidator.validate(PrometheusExporter().render(fixture.recorder.metrics()))
        func value(_ family: MetricFamily, _ labels: [String: String]) -> Double? {
            samples.first { $0.name == family.name() && $0.labels == labels }?.value
        }
        #expect(value(MetricSchema.breakerState, ["key": "indeed", "state": "closed"]) == 1)
        #expect(value(MetricSchema.breakerState, ["key": "indeed", "state": "open"]) == 0)
        #expect(!samples.contains { $0.name == MetricSchema.breakerState.name() && $0.labels["key"] == "no-breaker" })
        #expect(value(MetricSchema.attemptsInFlight, ["key": "indeed"]) == 0)
        #expect(
            value(MetricSchema.attempts, ["key": "indeed", "category": "cancelled", "outcome": "cancelled"]) == 1)
        #expect(!samples.contains { $0.name == MetricSchema.attemptDuration.name() + "_count" })
    }

    @Test("Outcome labels: none/success, category/failure, cancelled/cancelled")
    func outcomeLabels() {
        let labels = [nil, .timeout, .cancelled].map { MetricSchema.outcomeLabels($0) }
        #expect(labels.map(\.category) == ["none", "timeout", "cancelled"])
        #expect(labels.map(\.outcome) == ["success", "failure", "cancelled"])
        #expect(
            BreakerState.allCases.map(MetricSchema.breakerStateLabel) == ["closed", "open", "half_open", "isolated"])
    }
}
