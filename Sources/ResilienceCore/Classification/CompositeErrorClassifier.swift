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
        // A stage's own error first, by its concrete type: the commonest failure a stage classifies, and never
        // a cancellation. Its message is rendered from `error` when read.
        if let stageError = error as? ResilienceError { return stageError.classification(describing: error) }
        if CancellationDetection.isCancellation(error) { return .cancelled }
        return selfClassification(of: error)
    }

    /// The classification of an error that classifies itself, read through the error's concrete type: a cast
    /// to `any ClassifiedError` would copy an error larger than three words into a new heap box.
    private static func selfClassification<Failure: Error>(of error: Failure) -> FailureClassification? {
        if let classifiedType = Failure.self as? any ClassifiedError.Type {
            return classification(of: error, as: classifiedType)
        }
        // An object (an `NSError` bridged from a Swift error on Apple platforms) is cast as a reference, which
        // copies nothing and unwraps the Swift error inside.
        guard Failure.self is AnyObject.Type else { return nil }
        return (error as? any ClassifiedError)?.classification
    }

    /// `error`'s own classification; `Classified` is `error`'s dynamic type.
    private static func classification<Classified: ClassifiedError>(
        of error: some Error, as _: Classified.Type
    ) -> FailureClassification {
        // `Classified` is the error's own type, so the cast always succeeds.
        (error as? Classified)?.classification ?? .unknown
    }

    /// A composite with no classifiers: only the universal rules and the fallback.
    public static let standard = CompositeErrorClassifier()
}
