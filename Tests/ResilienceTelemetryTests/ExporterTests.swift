import Foundation
import ResilienceCore
import ResilienceTelemetry
import ResilienceTesting
import Testing

@Suite("Exporters")
struct ExporterTests {
    static let secretDetail =
        "GET https://api.example.com/jobs?api_key=AK123SECRET&page=2 Authorization: Bearer tok.SECRET"
    static let secrets = ["AK123SECRET", "tok.SECRET", "hunter2", "COOKIESECRET"]

    private func populated() -> TelemetryFixture {
        let fixture = TelemetryFixture()
        fixture.succeed("greenhouse", milliseconds: 3)
        fixture.succeed("greenhouse", milliseconds: 40)
        fixture.succeed("greenhouse", milliseconds: 700)
        fixture.fail("lever", classification: .timeout, milliseconds: 12_000)
        fixture.transition("lever", .closed, .open)
        fixture.emit(
            .insecureTransportBlocked, key: "https://user:hunter2@feeds.example.com", detail: Self.secretDetail)
        fixture.emit(.fallbackUsed, key: "weird\"source\\with\nnewline", detail: "Cookie: session=COOKIESECRET")
        return fixture
    }

    @Test("Latency buckets of 1e300 or set to ±infinity and NaN render valid text, never a crash")
    func prometheusHostileBuckets() throws {
        let metrics = populated().recorder.metrics()
        var exporter = PrometheusExporter(latencyBuckets: [0.1, 1e300])
        var samples = try PrometheusValidator.validate(exporter.render(metrics))
        let huge = samples.first {
            $0.name == "resilience_attempt_duration_seconds_bucket" && $0.labels["key"] == "greenhouse"
                && $0.labels["le"] == "1e+300"
        }
        #expect(huge?.value == 3)
        exporter.latencyBuckets = [.infinity, -.infinity, .nan, -1, 0.1]
        #expect(exporter.latencyBuckets == [0.1])
        samples = try PrometheusValidator.validate(exporter.render(metrics))
        #expect(
            samples.contains { $0.name == "resilience_attempt_duration_seconds_bucket" && $0.labels["le"] == "0.1" })
    }

    @Test("Prometheus text is valid exposition format and carries the recorded numbers")
    func prometheusValid() throws {
        let text = PrometheusExporter().render(populated().recorder.metrics())
        let samples = try PrometheusValidator.validate(text)
        func value(_ name: String, _ labels: [String: String]) -> Double? {
            samples.first { $0.name == name && $0.labels == labels }?.value
        }
        #expect(value("resilience_events_total", ["key": "greenhouse", "kind": "attempt-succeeded"]) == 3)
        #expect(
            value("resilience_attempts_total", ["key": "greenhouse", "category": "none", "outcome": "success"]) == 3)
        #expect(
            value("resilience_attempts_total", ["key": "lever", "category": "timeout", "outcome": "failure"]) == 1)
        #expect(value("resilience_breaker_state", ["key": "lever", "state": "open"]) == 1)
        #expect(value("resilience_breaker_state", ["key": "lever", "state": "closed"]) == 0)
        #expect(value("resilience_breaker_state", ["key": "lever", "state": "half_open"]) == 0)
        #expect(value("resilience_breaker_state", ["key": "lever", "state": "isolated"]) == 0)
        #expect(value("resilience_attempt_duration_seconds_count", ["key": "greenhouse"]) == 3)
        #expect(value("resilience_attempt_duration_seconds_bucket", ["key": "greenhouse", "le": "0.005"]) == 1)
        #expect(value("resilience_attempt_duration_seconds_bucket", ["key": "greenhouse", "le": "0.05"]) == 2)
        #expect(value("resilience_attempt_duration_seconds_bucket", ["key": "lever", "le": "10"]) == 0)
        #expect(value("resilience_attempt_duration_seconds_bucket", ["key": "lever", "le": "+Inf"]) == 1)
        #expect(value("resilience_attempt_duration_seconds_sum", ["key": "greenhouse"]) == 0.743)
        #expect(
            value("resilience_events_total", ["key": "weird\"source\\with\nnewline", "kind": "fallback-used"]) == 1)
        #expect(text.contains("# TYPE resilience_attempt_duration_seconds histogram\n"))
        #expect(text.contains("# HELP resilience_events_total "))
        #expect(PrometheusExporter.contentType.hasPrefix("text/plain; version=0.0.4"))
        for secret in Self.secrets { #expect(!text.contains(secret), "\(secret) leaked") }
    }

    @Test("A namespace with characters a metric name cannot hold renders valid names, as swift-prometheus writes them")
    func prometheusNamespaceSanitized() throws {
        let metrics = populated().recorder.metrics()
        var exporter = PrometheusExporter(namespace: "job-board.v2")
        var samples = try PrometheusValidator.validate(exporter.render(metrics))
        #expect(samples.contains { $0.name == "job_board_v2_events_total" })
        #expect(exporter.namespace == "job_board_v2")
        exporter.namespace = "2fast ü"
        samples = try PrometheusValidator.validate(exporter.render(metrics))
        #expect(samples.contains { $0.name == "_fast___recorder_records" })
        #expect(PrometheusExporter(namespace: "app:resilience").namespace == "app:resilience")
    }

    @Test("A failed attempt reported without a classification counts in attempts_total as unknown, as the sink does")
    func prometheusUnclassifiedFailure() throws {
        let fixture = TelemetryFixture()
        fixture.succeed("lever")
        fixture.emit(.attemptFailed, key: "lever", duration: .milliseconds(20))
        let samples = try PrometheusValidator.validate(PrometheusExporter().render(fixture.recorder.metrics()))
        func value(_ labels: [String: String]) -> Double? {
            samples.first { $0.name == "resilience_attempts_total" && $0.labels == labels }?.value
        }
        #expect(value(["key": "lever", "category": "unknown", "outcome": "failure"]) == 1)
        #expect(value(["key": "lever", "category": "none", "outcome": "success"]) == 1)
    }

    @Test("The validator rejects broken exposition text")
    func validatorRejects() {
        #expect(throws: (any Error).self) { try PrometheusValidator.validate("metric{a=\"x} 1\n") }
        #expect(throws: (any Error).self) { try PrometheusValidator.validate("1metric 1\n") }
        #expect(throws: (any Error).self) { try PrometheusValidator.validate("m 1") }
        #expect(throws: (any Error).self) {
            try PrometheusValidator.validate(
                "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n")
        }
        #expect(throws: (any Error).self) { try PrometheusValidator.validate("a 1\nb 1\na 2\n") }
    }

    @Test("JSON lines parse back with every field, redacted")
    func jsonLines() throws {
        let fixture = populated()
        var events = fixture.recorder.snapshot()
        events.append(
            ResilienceEvent(
                kind: .attemptFailed, key: "k", time: .origin,
                classification: FailureClassification(
                    category: .authentication, code: .unauthorized, httpStatus: 401,
                    message: "token=hunter2 rejected")))
        let text = JSONLinesExporter().render(events)
        let lines = text.split(separator: "\n")
        #expect(lines.count == events.count)
        let objects = try lines.map {
            try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects[0]["kind"] as? String == "attempt-succeeded")
        #expect(objects[0]["source"] as? String == "greenhouse")
        #expect(objects[0]["duration_ms"] as? Int == 3)
        #expect(objects[3]["code"] as? String == "NET_002")
        #expect(objects[4]["to"] as? String == "open")
        #expect(objects[6]["source"] as? String == "weird\"source\\with\nnewline")
        #expect(objects[7]["http_status"] as? Int == 401)
        #expect((objects[7]["message"] as? String)?.contains("[REDACTED]") == true)
        for secret in Self.secrets { #expect(!text.contains(secret), "\(secret) leaked") }
    }

    @Test("Durations too long for milliseconds in an Int64 are written saturated, never a crash")
    func hugeDurations() {
        let event = ResilienceEvent(
            kind: .breakerTransition, key: "lever", time: ResilienceInstant(offset: .seconds(Int64.max / 10)),
            duration: .seconds(Int64.max),
            transition: BreakerTransition(from: .closed, to: .open, openFor: .seconds(-Int64.max)))
        let json = JSONLinesExporter().line(for: event)
        #expect(json.contains("\"duration_ms\":\(Int64.max)"))
        #expect(json.contains("\"open_for_ms\":\(Int64.min)"))
        let line = LogLineFormatter().line(for: event)
        #expect(line.contains("duration=9223372036854775.807"))
    }

    @Test("Log lines are single lines with the fields, redacted")
    func logLines() {
        let formatter = LogLineFormatter()
        let event = ResilienceEvent(
            kind: .attemptFailed, key: "lever", operation: "fetch jobs", attempt: 2,
            time: .init(offset: .milliseconds(12_500)),
            duration: .milliseconds(1200),
            classification: FailureClassification(category: .timeout, code: .timedOut, httpStatus: 504),
            detail: Self.secretDetail)
        let line = formatter.line(for: event)
        #expect(
            line.hasPrefix("+12.500 warning attempt-failed source=lever op=\"fetch jobs\" attempt=2 duration=1.200"))
        #expect(line.contains("category=timeout code=NET_002 status=504"))
        #expect(!line.contains("\n"))
        for event in populated().recorder.snapshot() {
            let line = formatter.line(for: event)
            #expect(!line.contains("\n"))
            for secret in Self.secrets { #expect(!line.contains(secret), "\(secret) leaked") }
        }
        for secret in Self.secrets { #expect(!line.contains(secret), "\(secret) leaked") }
    }
}

@Suite("LineSink JSON")
struct LineSinkJSONTests {
    @Test("JSON lines from the sink parse back and carry no secrets")
    func jsonSink() throws {
        let lines = LockedBox<[String]>([])
        let sink = LineSink(format: .jsonLines) { line in lines.mutate { $0.append(line) } }
        sink.receive(
            ResilienceEvent(
                kind: .retryScheduled, key: "lever", attempt: 1, time: .origin, duration: .milliseconds(400),
                detail: "Set-Cookie: sid=COOKIESECRET"))
        let line = try #require(lines.value.first)
        let object = try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["kind"] as? String == "retry-scheduled")
        #expect(object["duration_ms"] as? Int == 400)
        #expect(object["detail"] as? String == "Set-Cookie: [REDACTED]")
    }
}
