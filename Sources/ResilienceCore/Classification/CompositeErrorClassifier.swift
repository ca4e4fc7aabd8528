/// Asks an ordered list of classifiers; the first that recognises the error wins.
///
/// Before consulting the list it applies the rules that hold everywhere: cancellation (`CancellationError`,
/// `URLError.cancelled`) is always ``FailureCategory/cancelled``, and a ``ClassifiedError`` classifies
/// itself. Following the ``ErrorClassifier`` contract, ``classify(_:)`` returns `nil` for an error nobody
/// recognises, so a composite can sit inside another composite or in front of a context's classifier;
/// ``classification(of:)`` gives such errors `fallback` instead.
///
/// ```swift
/// let classifier = CompositeErrorClassifier([myAPIClassifier, TransportErrorClassifier()])
/// let classification = classifier.classification(of: error)
/// ```
public struct CompositeErrorClassifier: ErrorClassifier {
    /// The classifiers, in the order they are asked.
    public var classifiers: [any ErrorClassifier]
    /// The classification for errors nobody recognises.
    public var fallback: FailureClassification

    /// Creates a composite of `classifiers`, asked in order.
    ///
    /// - Parameters:
    ///   - classifiers: The classifiers, in the order they are asked.
    ///   - fallback: What ``classification(of:)`` returns for errors nobody recognises.
    public init(_ classifiers: [any ErrorClassifier] = [], fallback: FailureClassification = .unknown) {
        self.classifiers = classifiers
        self.fallback = fallback
    }

    /// The classification of `error` by the universal rules or the first classifier that recognises it;
    /// `nil` when nobody does.
    public func classify(_ error: any Error) -> FailureClassification? {
        if let universal = Self.universalClassification(of: error) { return universal }
        for classifier in classifiers {
            if let classification = classifier.classify(error) { return classification }
        }
        return nil
    }

    /// The classification of `error`: cancellation first, then ``ClassifiedError``, then the list, then
    /// `fallback`.
    public func classification(of error: any Error) -> FailureClassification {
        classify(error) ?? fallback
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
