import Logging
import ResilienceCore
import ResilienceTelemetry

/// A ``TelemetrySink`` that logs every event through a swift-log `Logger` you pass in.
///
/// - **Your logger.** The sink never creates a logger of its own: it logs through the one you give it, with
///   its label, handler, level and metadata (add a request id to it and every event carries it).
/// - **Levels** follow ``ResilienceEvent/logLevel``, the rule every ResilienceKit log uses: the failure's
///   classification (``FailureClassification/logLevel``); breaker transitions and blocked plaintext requests at
///   `notice`; `attempt-started` at `trace`, `attempt-succeeded` and `attempt-cancelled` at `debug`, so a busy
///   server logs nothing per request at its usual `info`, nor per request its clients abandon; every other kind
///   at `info`. ``Configuration/levels`` overrides the kinds it names and leaves the others to the rule.
/// - **Metadata** uses OpenTelemetry's semantic-convention names: `error.type` (the stable code, `NET_002`),
///   `http.response.status_code`, `http.request.resend_count` (from the second attempt on), `server.address`
///   and `url.full` (when the event names a URL), `error.message`, and `resilience.*` for the rest (see
///   ``SemanticAttribute/Name``).
/// - **Redaction.** Every string (key, operation, detail, message) passes the ``Redactor`` first.
/// - **Bounded during an outage.** A record at `info` or above goes through ``Configuration/repeats``, an
///   ``ErrorFrequencyTracker`` (10 s window by default): it is written the first time its event kind and key
///   with its failure code are seen in a window, and the repeats inside the window are only counted; the next
///   record written for them carries the count as `resilience.suppressed`. So thousands of failures a second
///   log a few lines, each saying how many it stands for. Records at `debug` and `trace` are never held back.
/// - **Cheap when quiet.** Events below the logger's level are dropped before any metadata is built.
///
/// ```swift
/// var logger = Logger(label: "jobs.resilience")
/// logger.logLevel = .info
/// let sink = LoggingTelemetrySink(logger: logger)
/// var root = CompositionRoot<Job>(.interactive, telemetry: sink)
/// ```
public struct LoggingTelemetrySink: TelemetrySink {
    /// How events become log records.
    public struct Configuration: Sendable {
        /// Levels for particular event kinds, overriding the default rule (``ResilienceEvent/logLevel``) for those
        /// kinds only.
        public var levels: [ResilienceEventKind: Logger.Level]
        /// Removes secrets from every string before it is logged.
        public var redactor: Redactor
        /// The log message's prefix; the message is `"<prefix> <kind>"` (`resilience retry-scheduled`).
        public var messagePrefix: String
        /// Holds back repeats of a record at `info` or above: one record per event kind and key with its failure
        /// code in each of the tracker's windows, the next one saying how many were held back; `nil` logs every
        /// event. A tracker shared by several sinks holds back their records together.
        public var repeats: ErrorFrequencyTracker?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - levels: Levels for particular event kinds, overriding the default rule (``ResilienceEvent/logLevel``)
        ///     for those kinds only. Default: none.
        ///   - redactor: Removes secrets from every string before it is logged.
        ///   - messagePrefix: The log message's prefix.
        ///   - repeats: Holds back repeats of a record at `info` or above (default: a tracker with a 10 s window
        ///     on the continuous clock); `nil` logs every event.
        public init(
            levels: [ResilienceEventKind: Logger.Level] = [:],
            redactor: Redactor = .standard,
            messagePrefix: String = "resilience",
            repeats: ErrorFrequencyTracker? = ErrorFrequencyTracker(window: .seconds(10))
        ) {
            self.levels = levels
            self.redactor = redactor
            self.messagePrefix = messagePrefix
            self.repeats = repeats
        }

        /// The defaults.
        public static var standard: Configuration { Configuration() }
    }

    /// The logger events go to.
    public let logger: Logger
    /// How events become log records.
    public let configuration: Configuration

    /// Creates a sink that logs through `logger`.
    ///
    /// - Parameters:
    ///   - logger: The integrator's logger; its level, handler and metadata apply.
    ///   - configuration: Level overrides, redaction, the message prefix and how repeats are held back.
    public init(logger: Logger, configuration: Configuration = .standard) {
        self.logger = logger
        self.configuration = configuration
    }

    /// The level `event` is logged at.
    public func level(of event: ResilienceEvent) -> Logger.Level {
        configuration.levels[event.kind] ?? Logger.Level(event.logLevel)
    }

    /// Logs `event` if the logger's level lets it through.
    public func receive(_ event: ResilienceEvent) {
        let level = level(of: event)
        guard level >= logger.logLevel else { return }
        var suppressed = 0
        if let repeats = configuration.repeats, level >= .info {
            let code = event.classification?.code ?? Self.noCode
            guard case .report(let count) = repeats.record(code, key: event.kind.rawValue + " " + event.key) else {
                return
            }
            suppressed = count
        }
        var metadata: Logger.Metadata = [:]
        for attribute in SemanticAttribute.describing(event, redactor: configuration.redactor, includingKind: false) {
            metadata[attribute.key] = Logger.MetadataValue(attribute.value)
        }
        if suppressed > 0 { metadata[SemanticAttribute.Name.suppressed] = .stringConvertible(suppressed) }
        logger.log(level: level, "\(configuration.messagePrefix) \(event.kind.rawValue)", metadata: metadata)
    }

    /// The code an event without a failure is tracked under.
    private static let noCode = FailureCode(rawValue: "")
}

extension Logger.Level {
    /// The swift-log level with the same name as `level`.
    ///
    /// - Parameter level: The ResilienceKit level to convert.
    public init(_ level: LogLevel) {
        switch level {
        case .trace: self = .trace
        case .debug: self = .debug
        case .info: self = .info
        case .notice: self = .notice
        case .warning: self = .warning
        case .error: self = .error
        case .critical: self = .critical
        }
    }
}

extension Logger.MetadataValue {
    /// The metadata value for an attribute: text as `.string`, numbers and flags as `.stringConvertible`.
    ///
    /// - Parameter value: The semantic attribute value to convert.
    public init(_ value: SemanticAttribute.Value) {
        switch value {
        case .string(let text): self = .string(text)
        case .int(let number): self = .stringConvertible(number)
        case .double(let number): self = .stringConvertible(number)
        case .bool(let flag): self = .stringConvertible(flag)
        }
    }
}
