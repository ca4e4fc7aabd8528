import ResilienceCore

/// Renders an event as one plain, greppable, redacted log line:
///
/// `+12.500 warning attempt-failed source=greenhouse op=fetch attempt=2 duration=1.200 category=timeout
/// code=NET_002 status=504 detail="…"`
///
/// The level is the classification's ``LogLevel`` for failures, `notice` for breaker transitions and
/// `info` otherwise.
public struct LogLineFormatter: Sendable {
    /// The redactor applied to the whole line.
    public var redactor: Redactor

    /// Creates a formatter.
    ///
    /// - Parameter redactor: The redactor applied to the whole line. Default: `.standard`.
    public init(redactor: Redactor = .standard) {
        self.redactor = redactor
    }

    /// The level an event is logged at: ``ResilienceEvent/logLevel``.
    public func level(of event: ResilienceEvent) -> LogLevel {
        event.logLevel
    }

    /// The line for `event`, without a trailing newline.
    public func line(for event: ResilienceEvent) -> String {
        let event = redactor.redact(event)
        var parts = ["+" + TextEscaping.seconds(event.time.offset), level(of: event).description, event.kind.rawValue]
        parts.append("source=" + Self.value(event.key))
        if !event.operation.isEmpty { parts.append("op=" + Self.value(event.operation)) }
        if event.attempt > 0 { parts.append("attempt=\(event.attempt)") }
        if let duration = event.duration { parts.append("duration=" + TextEscaping.seconds(duration)) }
        if let classification = event.classification {
            parts.append("category=" + classification.category.rawValue)
            parts.append("code=" + classification.code.rawValue)
            if let status = classification.httpStatus { parts.append("status=\(status)") }
            if let message = classification.message { parts.append("message=" + Self.value(message)) }
        }
        if let transition = event.transition { parts.append("breaker=\(transition.from)->\(transition.to)") }
        if let count = event.count, let total = event.total {
            parts.append("succeeded=\(count)/\(total)")
        } else if let count = event.count {
            parts.append("count=\(count)")
        }
        if let detail = event.detail { parts.append("detail=" + Self.value(detail)) }
        return redactor.redact(parts.joined(separator: " "))
    }

    /// A value as is when it has no spaces or quotes, otherwise quoted with escapes; newlines are escaped.
    static func value(_ text: String) -> String {
        let needsQuotes = text.isEmpty || text.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }
        return needsQuotes ? TextEscaping.json(text) : text
    }
}
