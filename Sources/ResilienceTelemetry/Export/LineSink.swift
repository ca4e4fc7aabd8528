import ResilienceCore

/// A sink that formats each event as one redacted line (plain log line or JSON) and hands it to `write`.
///
/// `write` runs synchronously on the emitting task, so it must be fast and non-blocking (append to a
/// buffer, enqueue to a logger that does its own I/O). For slow consumers, record with a
/// ``TelemetryRecorder`` and export its snapshots off the hot path.
public struct LineSink: TelemetrySink {
    /// The line format.
    public enum Format: Sendable, Hashable {
        /// ``LogLineFormatter``.
        case logLine
        /// ``JSONLinesExporter``.
        case jsonLines
    }

    /// The format.
    public let format: Format
    /// The least severe level written (failures carry their classification's level).
    public let minimumLevel: LogLevel
    private let write: @Sendable (String) -> Void
    private let logFormatter: LogLineFormatter
    private let jsonExporter: JSONLinesExporter

    /// Creates a sink writing lines of `format` at `minimumLevel` or above to `write`.
    ///
    /// - Parameters:
    ///   - format: The format. Default: `.logLine`.
    ///   - minimumLevel: The least severe level written (failures carry their classification's level). Default:
    ///     `.trace`.
    ///   - redactor: Removes secrets (headers, query parameters) from each line. Default: `.standard`.
    ///   - write: Receives each formatted line, synchronously on the emitting task: keep it fast and non-blocking.
    public init(
        format: Format = .logLine, minimumLevel: LogLevel = .trace, redactor: Redactor = .standard,
        write: @escaping @Sendable (String) -> Void
    ) {
        self.format = format
        self.minimumLevel = minimumLevel
        self.write = write
        logFormatter = LogLineFormatter(redactor: redactor)
        jsonExporter = JSONLinesExporter(redactor: redactor)
    }

    /// Formats and writes `event` if its level is high enough.
    public func receive(_ event: ResilienceEvent) {
        guard logFormatter.level(of: event) >= minimumLevel else { return }
        switch format {
        case .logLine: write(logFormatter.line(for: event))
        case .jsonLines: write(jsonExporter.line(for: event))
        }
    }
}
