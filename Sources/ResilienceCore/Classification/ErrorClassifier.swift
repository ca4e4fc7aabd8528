/// Maps an error to a ``FailureClassification``.
///
/// ## Contract
/// - Return `nil` for errors you do not recognise, so an ordered ``CompositeErrorClassifier`` can ask the
///   next classifier. Never guess.
/// - Be pure and fast: no I/O, no locks held across calls, no allocation for common errors. Classification
///   runs on every failure.
/// - You never need to handle cancellation or ``ClassifiedError``: ``CompositeErrorClassifier`` and
///   ``ResilienceContext/classify(_:)`` apply those rules first, so cancellation is always `cancelled`.
/// - Never crash on hostile input (a body with wrong member types, a huge header): return a classification
///   or `nil`.
public protocol ErrorClassifier: Sendable {
    /// The classification of `error`, or `nil` when this classifier does not recognise it.
    func classify(_ error: any Error) -> FailureClassification?
}
