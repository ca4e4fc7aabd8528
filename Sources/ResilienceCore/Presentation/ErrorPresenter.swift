/// Turns a failure into a ``UserFacingError``.
///
/// ## Contract
/// - The message is true (never "something went wrong" when we know it was a rate limit) and actionable.
/// - Never put raw error text, stack traces, URLs with credentials or server dumps in `title` or `message`;
///   those go to ``UserFacingError/technicalDetails``.
/// - With a multi-source ``PresentationContext``, say what is shown and what is missing
///   ("Showing jobs from 4 of 6 sources").
/// - For a multi-source fetch, the presenter alone decides which failure to explain, from the whole
///   context (``present(_:)``); nothing upstream picks one for it.
/// - Pure and synchronous.
public protocol ErrorPresenter: Sendable {
    /// The message for `failure` in `context` (a single operation, or a failure already chosen).
    func present(_ failure: FailureClassification, context: PresentationContext) -> UserFacingError

    /// The one message for the multi-source fetch `context` describes, or `nil` when there is nothing to
    /// tell (every source delivered live and the completion policy was met). The presenter chooses which
    /// of the sources' failures to explain.
    func present(_ context: PresentationContext) -> UserFacingError?
}
