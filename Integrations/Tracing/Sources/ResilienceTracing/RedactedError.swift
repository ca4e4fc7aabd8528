import ResilienceCore
import Tracing

/// What a span records in place of a thrown error: the error's description with secrets removed.
///
/// Tracers render a recorded error's description (OpenTelemetry's `exception.message`) and may reflect on its
/// fields; an error's description often names the URL it failed on (with its query string) or a header. The
/// stand-in keeps only the redacted text, never the error itself, so nothing unredacted reaches the exporter.
struct RedactedError: Error, CustomStringConvertible, CustomDebugStringConvertible {
    /// The original error's description, redacted.
    let description: String

    /// The original error's description, redacted.
    var debugDescription: String { description }

    init(_ error: any Error, redactor: Redactor) {
        description = redactor.redact(String(describing: error))
    }
}

extension Span {
    /// Records `error` on the span through a ``RedactedError``, so its description carries no secret.
    func recordRedactedError(_ error: any Error, redactor: Redactor) {
        recordError(RedactedError(error, redactor: redactor))
    }
}
