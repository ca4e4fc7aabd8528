import ResilienceCore

/// The error a chaos fault stage throws: classified as configured, so every stage and presenter treats it
/// as the real failure it stands for.
public struct ChaosFault: ClassifiedError, Hashable, CustomStringConvertible {
    /// How the injected failure is classified.
    public var classification: FailureClassification

    /// Creates the fault.
    ///
    /// - Parameter classification: How the injected failure is classified (a 503, a timeout, a reset).
    public init(_ classification: FailureClassification) {
        self.classification = classification
    }

    /// A server error (HTTP 503), transient.
    public static let serviceUnavailable = ChaosFault(
        FailureClassification(category: .serverError, code: "HTTP_503", httpStatus: 503, message: "chaos"))

    /// `chaos fault: server-error HTTP_503`.
    public var description: String { "chaos fault: \(classification.category) \(classification.code)" }
}
