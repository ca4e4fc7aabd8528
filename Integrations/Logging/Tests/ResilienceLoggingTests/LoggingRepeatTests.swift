import InMemoryLogging
import Logging
import ResilienceCore
import ResilienceLogging
import ResilienceTelemetry
import ResilienceTesting
import Testing

@Suite("LoggingTelemetrySink during an outage")
struct LoggingRepeatTests {
    static let timeout = FailureClassification(category: .timeout, code: FailureCode(rawValue: "NET_002"))

    static func failure(
        key: String = "lever", classification: FailureClassification = timeout
    ) -> ResilienceEvent {
        ResilienceEvent(
            kind: .attemptFailed, key: key, operation: "fetch", attempt: 1, time: .origin,
            duration: .milliseconds(30), classification: classification)
    }

    /// A sink at `level` whose repeats are held back for 10 s of `clock`.
    static func sink(level: Logger.Level, clock: ManualClock) -> (LoggingTelemetrySink, InMemoryLogHandler) {
        let (logger, handler) = LoggingTelemetrySinkTests.logger(level: level)
        let tracker = ErrorFrequencyTracker(window: .seconds(10), clock: .manual(clock))
        return (LoggingTelemetrySink(logger: logger, configuration: .init(repeats: tracker)), handler)
    }

    @Test("an outage of 100 failures a second for 20 s logs one line per 10 s, each saying how many it stands for")
    func outageIsSummarised() throws {
        let clock = ManualClock()
        let (sink, handler) = Self.sink(level: .info, clock: clock)
        for _ in 0..<2_000 {
            sink.receive(Self.failure())
            clock.advance(by: .milliseconds(10))
        }

        let entries = handler.entries
        #expect(entries.count == 2, "\(entries.count) lines for one repeated failure")
        #expect(Set(entries.map(\.level)) == [.warning])
        #expect(entries.first?.metadata["resilience.suppressed"] == nil)
        #expect(entries.last?.metadata["resilience.suppressed"]?.description == "999")
        #expect(entries.last?.metadata["error.type"] == "NET_002")
    }

    @Test("a failure held back while many other keys fail says how many it stands for when it is next logged")
    func heldBackThroughEviction() {
        let clock = ManualClock()
        let (logger, handler) = LoggingTelemetrySinkTests.logger(level: .info)
        let tracker = ErrorFrequencyTracker(window: .seconds(10), maximumEntries: 4, clock: .manual(clock))
        let sink = LoggingTelemetrySink(logger: logger, configuration: .init(repeats: tracker))
        for _ in 0..<5 { sink.receive(Self.failure(key: "lever")) }
        for index in 0..<20 {
            clock.advance(by: .milliseconds(1))
            sink.receive(Self.failure(key: "source-\(index)"))
        }
        sink.receive(Self.failure(key: "lever"))

        let lever = handler.entries.filter { $0.metadata["resilience.key"] == "lever" }
        #expect(lever.count == 2)
        #expect(lever.last?.metadata["resilience.suppressed"]?.description == "4")
    }

    @Test("kinds, keys and failure codes are held back apart; debug records and no tracker hold nothing back")
    func signatures() {
        let clock = ManualClock()
        let (sink, handler) = Self.sink(level: .debug, clock: clock)
        let refused = FailureClassification(category: .networkUnreachable, code: FailureCode(rawValue: "NET_001"))
        var rejected = Self.failure()
        rejected.kind = .breakerRejected
        rejected.classification = nil
        for _ in 0..<10 {
            sink.receive(Self.failure(key: "lever"))
            sink.receive(Self.failure(key: "greenhouse"))
            sink.receive(Self.failure(key: "lever", classification: refused))
            sink.receive(Self.failure(key: "lever", classification: .cancelled))
            sink.receive(rejected)
            clock.advance(by: .milliseconds(1))
        }
        #expect(handler.entries.filter { $0.level == .warning }.count == 3)
        #expect(handler.entries.filter { $0.level == .info }.count == 1)
        #expect(handler.entries.filter { $0.level == .debug }.count == 10)

        let (everything, all) = LoggingTelemetrySinkTests.logger(level: .info)
        let unlimited = LoggingTelemetrySink(logger: everything, configuration: .init(repeats: nil))
        for _ in 0..<10 { unlimited.receive(Self.failure()) }
        #expect(all.entries.count == 10)
    }
}
