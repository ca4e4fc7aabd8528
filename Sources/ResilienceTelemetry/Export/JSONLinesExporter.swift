import ResilienceCore

/// Renders events as JSON Lines (one JSON object per line), redacted.
///
/// Fields: `time` (seconds on the pipeline clock), `kind`, `source`, `operation`, `attempt`, and when set
/// `duration_ms`, `category`, `code`, `http_status`, `transient`, `message`, `from`, `to`, `open_for_ms`,
/// `detail`, `count`, `total`. Every string is redacted before it is escaped, so the output is valid JSON
/// and carries no secrets.
public struct JSONLinesExporter: Sendable {
    /// The redactor applied to every string field.
    public var redactor: Redactor

    /// Creates an exporter.
    ///
    /// - Parameter redactor: The redactor applied to every string field. Default: `.standard`.
    public init(redactor: Redactor = .standard) {
        self.redactor = redactor
    }

    /// One line (without a trailing newline) for `event`.
    public func line(for event: ResilienceEvent) -> String {
        let event = redactor.redact(event)
        var fields: [String] = [
            "\"time\":\(TextEscaping.seconds(event.time.offset))",
            "\"kind\":\(TextEscaping.json(event.kind.rawValue))",
            "\"source\":\(TextEscaping.json(event.key))",
            "\"operation\":\(TextEscaping.json(event.operation))",
            "\"attempt\":\(event.attempt)",
        ]
        if let duration = event.duration { fields.append("\"duration_ms\":\(TextEscaping.milliseconds(duration))") }
        if let classification = event.classification {
            fields.append("\"category\":\(TextEscaping.json(classification.category.rawValue))")
            fields.append("\"code\":\(TextEscaping.json(classification.code.rawValue))")
            if let status = classification.httpStatus { fields.append("\"http_status\":\(status)") }
            fields.append("\"transient\":\(classification.isTransient)")
            if let message = classification.message { fields.append("\"message\":\(TextEscaping.json(message))") }
        }
        if let transition = event.transition {
            fields.append("\"from\":\(TextEscaping.json(transition.from.rawValue))")
            fields.append("\"to\":\(TextEscaping.json(transition.to.rawValue))")
            if let openFor = transition.openFor {
                fields.append("\"open_for_ms\":\(TextEscaping.milliseconds(openFor))")
            }
        }
        if let detail = event.detail { fields.append("\"detail\":\(TextEscaping.json(detail))") }
        if let count = event.count { fields.append("\"count\":\(count)") }
        if let total = event.total { fields.append("\"total\":\(total)") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// Every event on its own line, each line ending in `\n`.
    public func render(_ events: [ResilienceEvent]) -> String {
        events.map { line(for: $0) + "\n" }.joined()
    }
}
