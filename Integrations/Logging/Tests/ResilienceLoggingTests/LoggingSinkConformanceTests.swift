import InMemoryLogging
import Logging
import ResilienceLogging
import ResilienceTesting
import Testing

@Suite("LoggingTelemetrySink conformance")
struct LoggingSinkConformanceTests {
    @Test("passes ResilienceTesting's TelemetrySink conformance kit, with everything it logged checked for secrets")
    func conformance() async throws {
        try await TelemetrySinkConformance {
            let handler = InMemoryLogHandler()
            var logger = Logger(label: "conformance") { _ in handler }
            logger.logLevel = .trace
            let exported: @Sendable () -> String = {
                handler.entries.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
            }
            return (sink: LoggingTelemetrySink(logger: logger), exported: exported)
        }.check()
    }
}
