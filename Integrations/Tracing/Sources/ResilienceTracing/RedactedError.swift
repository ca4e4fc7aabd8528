import ResilienceCore
import ResilienceTelemetry
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
    /// Records on the span how the work it covers ended after throwing `error`.
    ///
    /// A cancellation is marked (`resilience.cancelled`), not an error, unless it came at or after
    /// `context.deadline`: then a deadline enforced around the work cut it off, and the span failed with a
    /// timeout (`error.type` `NET_002`; see ``ResilienceContext/deadlineAware(_:)``). Any other failure sets
    /// `error.type` (the stable code), `http.response.status_code` when it has one, the error status, and records
    /// the error through a ``RedactedError``, so its description carries no secret.
    ///
    /// - Parameters:
    ///   - error: What the work threw.
    ///   - context: The context the work ran with (its classifier, clock and deadline).
    ///   - redactor: Removes secrets from the recorded error's description.
    ///   - includingCategory: Whether to set `resilience.error.category` too.
    func recordFailure(
        _ error: any Error, context: ResilienceContext, redactor: Redactor, includingCategory: Bool
    ) {
        let recorded = context.deadlineAware(error)
        let failure = context.classify(recorded)
        guard failure.category != .cancelled else {
            attributes.set("resilience.cancelled", value: .bool(true))
            return
        }
        attributes.set(SemanticAttribute.Name.errorType, value: .string(failure.code.rawValue))
        if includingCategory {
            attributes.set(SemanticAttribute.Name.category, value: .string(failure.category.rawValue))
        }
        if let status = failure.httpStatus {
            attributes.set(SemanticAttribute.Name.statusCode, value: .int64(Int64(status)))
        }
        recordError(RedactedError(recorded, redactor: redactor))
        setStatus(SpanStatus(code: .error, message: failure.code.rawValue))
    }
}
