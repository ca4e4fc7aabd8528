/// Asks an ordered list of classifiers; the first that recognises the error wins.
///
/// Before consulting the list it applies the rules that hold everywhere: cancellation (`CancellationError`,
/// `URLError.cancelled`) is always ``FailureCategory/cancelled``, and a ``ClassifiedError`` classifies
/// itself. Errors nobody recognises get `fallback`.
///
/// ```swift
/// let classifier = CompositeErrorClassifier([myAPIClassifier, HTTPErrorClassifier()])
/// let classification = classifier.classification(of: error)
/// ```
public struct CompositeErrorClassifier: ErrorClassifier {
    /// The classifiers, in the order they are asked.
    public var classifiers: [any ErrorClassifier]
    /// The classification for errors nobody recognises.
    public var fallback: FailureClassification

    /// Creates a composite of `classifiers`, asked in order.
    public init(_ classifiers: [any ErrorClassifier] = [], fallback: FailureClassification = .unknown) {
        self.classifiers = classifiers
        self.fallback = fallback
    }

    /// Always returns a classification (never `nil`).
    public func classify(_ error: any Error) -> FailureClassification? {
        classification(of: error)
    }

    /// The classification of `error`: cancellation first, then ``ClassifiedError``, then the list, then
    /// `fallback`.
    public func classification(of error: any Error) -> FailureClassification {
        if let universal = Self.universalClassification(of: error) { return universal }
        for classifier in classifiers {
            if let classification = classifier.classify(error) { return classification }
        }
        return fallback
    }

    /// The rules every classifier shares: cancellation, then self-classifying errors.
    public static func universalClassification(of error: any Error) -> FailureClassification? {
        if CancellationDetection.isCancellation(error) { return .cancelled }
        if let classified = error as? any ClassifiedError { return classified.classification }
        return nil
    }

    /// A composite with no classifiers: only the universal rules and the fallback.
    public static let standard = CompositeErrorClassifier()
}
