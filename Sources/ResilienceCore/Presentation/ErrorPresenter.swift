/// Turns a failure into a ``UserFacingError``.
///
/// ## Contract
/// - The message is true (never "something went wrong" when we know it was a rate limit) and actionable.
/// - Never put raw error text, stack traces, URLs with credentials or server dumps in `title` or `message`;
///   those go to ``UserFacingError/technicalDetails``.
/// - With a multi-source ``PresentationContext``, say what is shown and what is missing
///   ("Showing jobs from 4 of 6 sources").
/// - Pure and synchronous.
public protocol ErrorPresenter: Sendable {
    /// The message for `failure` in `context`.
    func present(_ failure: FailureClassification, context: PresentationContext) -> UserFacingError
}
