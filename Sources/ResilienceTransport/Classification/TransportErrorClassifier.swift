/// The transport's classifier: ``HTTPStatusClassifier`` for rejected responses, then ``URLErrorClassifier``
/// for platform errors. (``TransportError`` and cancellation classify themselves before any classifier is
/// asked.) Put it in a ``CompositeErrorClassifier`` next to your own.
public struct TransportErrorClassifier: ErrorClassifier {
    /// Classifies ``HTTPStatusError``.
    public var statuses: HTTPStatusClassifier
    /// Classifies `URLError`.
    public var urlErrors: URLErrorClassifier

    /// Creates the classifier.
    ///
    /// - Parameters:
    ///   - statuses: Classifies ``HTTPStatusError``. Default: `HTTPStatusClassifier()`.
    ///   - urlErrors: Classifies `URLError`. Default: `.init()`.
    public init(statuses: HTTPStatusClassifier = HTTPStatusClassifier(), urlErrors: URLErrorClassifier = .init()) {
        self.statuses = statuses
        self.urlErrors = urlErrors
    }

    /// The first of the two that recognises `error`.
    public func classify(_ error: any Error) -> FailureClassification? {
        if let classified = error as? any ClassifiedError { return classified.classification }
        return statuses.classify(error) ?? urlErrors.classify(error)
    }

    /// The standard table with no overrides.
    public static let standard = TransportErrorClassifier()
}
