/// An error that knows its own classification.
///
/// Conform your module's error types to it and every classifier picks the classification up first, with no
/// registration. ``ResilienceError`` and the HTTP/transport errors of ResilienceKit conform.
public protocol ClassifiedError: Error {
    /// How policies and presenters should treat this error.
    var classification: FailureClassification { get }
}
