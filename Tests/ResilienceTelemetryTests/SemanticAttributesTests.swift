import ResilienceCore
import ResilienceTelemetry
import Testing

@Suite("SemanticAttribute")
struct SemanticAttributesTests {
    static func attributes(_ event: ResilienceEvent) -> [String: SemanticAttribute.Value] {
        Dictionary(uniqueKeysWithValues: SemanticAttribute.describing(event).map { ($0.key, $0.value) })
    }

    @Test("a failed resend: OpenTelemetry names for the code, status and resend count; secrets redacted")
    func failedResend() {
        let failure = FailureClassification(
            category: .serverError, code: .serverUnavailable, httpStatus: 503, retryAfter: .milliseconds(1_500),
            message: "upstream token=abc")
        let event = ResilienceEvent(
            kind: .attemptFailed, key: "lever", operation: "fetch", attempt: 3, time: .origin,
            duration: .milliseconds(250), classification: failure)
        let attributes = Self.attributes(event)
        #expect(attributes["resilience.event"] == .string("attempt-failed"))
        #expect(attributes["error.type"] == .string("NET_014"))
        #expect(attributes["http.response.status_code"] == .int(503))
        #expect(attributes["http.request.resend_count"] == .int(2))
        #expect(attributes["resilience.duration"] == .double(0.25))
        #expect(attributes["resilience.retry_after"] == .double(1.5))
        #expect(attributes["resilience.error.transient"] == .bool(true))
        #expect(attributes["error.message"] == .string("upstream token=[REDACTED]"))
    }

    @Test("the first attempt has no resend count; the kind can be left out")
    func firstAttempt() {
        let event = ResilienceEvent(kind: .attemptSucceeded, key: "lever", attempt: 1, time: .origin)
        let attributes = Dictionary(
            uniqueKeysWithValues: SemanticAttribute.describing(event, includingKind: false).map { ($0.key, $0.value) })
        #expect(attributes["http.request.resend_count"] == nil)
        #expect(attributes["resilience.event"] == nil)
        #expect(attributes["resilience.operation"] == nil)
        #expect(attributes["resilience.attempt"] == .int(1))
    }

    @Test(
        "a URL in the detail gives server.address and server.port",
        arguments: [
            ("http://jobs.example.com/feed", "jobs.example.com", nil),
            ("http://user:pw@jobs.example.com:8080/feed?x=1", "jobs.example.com", 8080),
            ("http://[::1]:9000/", "::1", 9000),
            ("https://example.org", "example.org", nil),
        ] as [(String, String, Int?)])
    func serverAddress(url: String, host: String, port: Int?) {
        let event = ResilienceEvent(kind: .insecureTransportBlocked, key: "k", time: .origin, detail: url)
        let attributes = Self.attributes(event)
        #expect(attributes["server.address"] == .string(host))
        #expect(attributes["server.port"] == port.map { .int($0) })
        #expect(attributes["url.full"] != nil && attributes["resilience.detail"] == nil)
    }

    @Test("a detail that is not a URL stays a detail", arguments: ["cache", "a://", "no scheme here", "://x"])
    func plainDetail(detail: String) {
        let event = ResilienceEvent(kind: .fallbackUsed, key: "k", time: .origin, detail: detail)
        let attributes = Self.attributes(event)
        #expect(attributes["server.address"] == nil)
        #expect(attributes["resilience.detail"] == .string(detail))
    }

    @Test("a breaker transition names both states and the open period")
    func transition() {
        let event = ResilienceEvent(
            kind: .breakerTransition, key: "k", time: .origin,
            transition: BreakerTransition(from: .closed, to: .open, openFor: .seconds(30)))
        let attributes = Self.attributes(event)
        #expect(attributes["resilience.breaker.from"] == .string("closed"))
        #expect(attributes["resilience.breaker.state"] == .string("open"))
        #expect(attributes["resilience.breaker.open_for"] == .double(30))
    }
}
