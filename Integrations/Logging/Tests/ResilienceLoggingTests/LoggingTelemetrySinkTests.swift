import InMemoryLogging
import Logging
import ResilienceCore
import ResilienceLogging
import ResilienceTelemetry
import Testing

@Suite("LoggingTelemetrySink")
struct LoggingTelemetrySinkTests {
    /// A logger backed by swift-log's in-memory handler, at `level`.
    static func logger(level: Logger.Level = .info) -> (Logger, InMemoryLogHandler) {
        let handler = InMemoryLogHandler()
        var logger = Logger(label: "test.resilience") { _ in handler }
        logger.logLevel = level
        return (logger, handler)
    }

    static func event(
        _ kind: ResilienceEventKind, attempt: Int = 1, classification: FailureClassification? = nil,
        detail: String? = nil
    ) -> ResilienceEvent {
        ResilienceEvent(
            kind: kind, key: "greenhouse", operation: "fetch", attempt: attempt,
            time: ResilienceInstant(offset: .seconds(3)), duration: .milliseconds(1_250),
            classification: classification, detail: detail)
    }

    @Test("a failed attempt logs at its classification's level with semantic-convention metadata, redacted")
    func failedAttempt() throws {
        let (logger, handler) = Self.logger()
        let failure = FailureClassification(
            category: .serverError, code: FailureCode(rawValue: "HTTP_503"), httpStatus: 503, logLevel: .error,
            message: "upstream said token=abc123 Authorization: Bearer s3cr3t")
        LoggingTelemetrySink(logger: logger).receive(Self.event(.attemptFailed, attempt: 3, classification: failure))

        let entry = try #require(handler.entries.only)
        #expect(entry.level == .error)
        #expect(entry.message.description == "resilience attempt-failed")
        #expect(entry.metadata["error.type"] == "HTTP_503")
        #expect(entry.metadata["http.response.status_code"]?.description == "503")
        #expect(entry.metadata["http.request.resend_count"]?.description == "2")
        #expect(entry.metadata["resilience.attempt"]?.description == "3")
        #expect(entry.metadata["resilience.error.category"] == "server-error")
        #expect(entry.metadata["resilience.key"] == "greenhouse")
        #expect(entry.metadata["resilience.operation"] == "fetch")
        #expect(entry.metadata["resilience.duration"]?.description == "1.25")
        let message = try #require(entry.metadata["error.message"]?.description)
        #expect(!message.contains("abc123") && !message.contains("s3cr3t"))
        #expect(message.contains("[REDACTED]"))
    }

    @Test("the first attempt has no resend count")
    func firstAttempt() throws {
        let (logger, handler) = Self.logger()
        let failure = FailureClassification(category: .timeout, code: FailureCode(rawValue: "NET_002"))
        LoggingTelemetrySink(logger: logger).receive(Self.event(.attemptFailed, classification: failure))
        let entry = try #require(handler.entries.only)
        #expect(entry.level == .warning)
        #expect(entry.metadata["http.request.resend_count"] == nil)
    }

    @Test("the logger's level filters: successes log at debug, starts at trace, others at info")
    func levels() {
        let (logger, handler) = Self.logger(level: .info)
        let sink = LoggingTelemetrySink(logger: logger)
        sink.receive(Self.event(.attemptStarted))
        sink.receive(Self.event(.attemptSucceeded))
        sink.receive(Self.event(.retryScheduled, attempt: 1))
        #expect(handler.entries.map(\.level) == [.info])

        let (verbose, all) = Self.logger(level: .trace)
        let verboseSink = LoggingTelemetrySink(logger: verbose)
        verboseSink.receive(Self.event(.attemptStarted))
        verboseSink.receive(Self.event(.attemptSucceeded))
        #expect(all.entries.map(\.level) == [.trace, .debug])
        #expect(verboseSink.level(of: Self.event(.breakerTransition)) == .notice)
    }

    @Test("a cancelled attempt logs at the cancellation's level (debug), like a failure classified as cancelled")
    func cancelledAttempt() {
        let (logger, handler) = Self.logger(level: .info)
        let sink = LoggingTelemetrySink(logger: logger)
        sink.receive(Self.event(.attemptCancelled))
        sink.receive(Self.event(.attemptFailed, classification: .cancelled))
        #expect(handler.entries.isEmpty, "a client going away logs nothing per request at info")
        #expect(sink.level(of: Self.event(.attemptCancelled)) == .debug)
        let (verbose, all) = Self.logger(level: .debug)
        LoggingTelemetrySink(logger: verbose).receive(Self.event(.attemptCancelled))
        #expect(all.entries.map(\.level) == [.debug])
        let overridden = LoggingTelemetrySink(logger: logger, configuration: .init(levels: [.attemptCancelled: .info]))
        #expect(overridden.level(of: Self.event(.attemptCancelled)) == .info)
    }

    @Test("overriding one kind's level keeps every other kind's default: attempts stay below info")
    func overrideKeepsDefaults() {
        let (logger, handler) = Self.logger(level: .info)
        let sink = LoggingTelemetrySink(logger: logger, configuration: .init(levels: [.fallbackUsed: .notice]))
        sink.receive(Self.event(.attemptStarted))
        sink.receive(Self.event(.attemptSucceeded))
        sink.receive(Self.event(.attemptCancelled))
        sink.receive(Self.event(.fallbackUsed, detail: "cache"))
        #expect(handler.entries.map(\.message.description) == ["resilience fallback-used"])
        #expect(handler.entries.map(\.level) == [.notice])
        #expect(sink.level(of: Self.event(.attemptStarted)) == .trace)
        #expect(sink.level(of: Self.event(.attemptSucceeded)) == .debug)
    }

    @Test("configured levels override the default rule")
    func overrides() {
        let (logger, handler) = Self.logger(level: .info)
        let sink = LoggingTelemetrySink(
            logger: logger, configuration: .init(levels: [.attemptSucceeded: .info, .retryScheduled: .debug]))
        sink.receive(Self.event(.attemptSucceeded))
        sink.receive(Self.event(.retryScheduled))
        #expect(handler.entries.map(\.message.description) == ["resilience attempt-succeeded"])
    }

    @Test("the integrator's logger metadata stays on every record")
    func integratorMetadata() throws {
        var (logger, handler) = Self.logger()
        logger[metadataKey: "request.id"] = "r-42"
        LoggingTelemetrySink(logger: logger).receive(Self.event(.fallbackUsed, detail: "cache"))
        let entry = try #require(handler.entries.only)
        #expect(entry.metadata["request.id"] == "r-42")
        #expect(entry.metadata["resilience.detail"] == "cache")
    }

    @Test("a blocked plaintext URL gives server.address and a redacted url.full")
    func serverAddress() throws {
        let (logger, handler) = Self.logger()
        LoggingTelemetrySink(logger: logger).receive(
            Self.event(.insecureTransportBlocked, detail: "http://bob:pw@jobs.example.com:8080/feed?api_key=k1"))
        let entry = try #require(handler.entries.only)
        #expect(entry.level == .notice)
        #expect(entry.metadata["server.address"] == "jobs.example.com")
        #expect(entry.metadata["server.port"]?.description == "8080")
        let url = try #require(entry.metadata["url.full"]?.description)
        #expect(!url.contains("pw") && !url.contains("k1"))
    }

    @Test("a custom redactor and prefix apply")
    func customRedactor() throws {
        let (logger, handler) = Self.logger()
        let redactor = Redactor(replacement: "***", sensitiveParameters: ["jobkey"])
        LoggingTelemetrySink(logger: logger, configuration: .init(redactor: redactor, messagePrefix: "rk"))
            .receive(Self.event(.fallbackUsed, detail: "jobkey=v"))
        let entry = try #require(handler.entries.only)
        #expect(entry.message.description == "rk fallback-used")
        #expect(entry.metadata["resilience.detail"] == "jobkey=***")
    }
}

extension Array {
    /// The single element, or `nil` when there are none or several.
    var only: Element? { count == 1 ? first : nil }
}
