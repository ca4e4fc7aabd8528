/// One alternative of a ``FallbackStrategy``: a name, the failure categories it answers, and how it produces
/// a value (a cache, a simpler query, a secondary source, an empty result).
public struct FallbackAlternative<Value: Sendable>: Sendable {
    /// The name reported in `fallbackUsed` events.
    public var name: String
    /// The categories it handles; `nil` handles every failure (except cancellation, which never falls back).
    public var categories: Set<FailureCategory>?
    /// Produces the value, given the context and the failure that led here.
    public var produce: @Sendable (ResilienceContext, FailureClassification) async throws -> Value

    /// Creates an alternative.
    ///
    /// - Parameters:
    ///   - name: The name reported in `fallbackUsed` events.
    ///   - categories: The categories it handles; `nil` handles every failure (except cancellation, which never falls
    ///     back).
    ///   - produce: Produces the value, given the context and the failure that led here.
    public init(
        _ name: String,
        when categories: Set<FailureCategory>? = nil,
        produce: @escaping @Sendable (ResilienceContext, FailureClassification) async throws -> Value
    ) {
        self.name = name
        self.categories = categories
        self.produce = produce
    }

    /// An alternative that returns `value`.
    public static func value(
        _ name: String, when categories: Set<FailureCategory>? = nil, _ value: Value
    )
        -> FallbackAlternative
    {
        FallbackAlternative(name, when: categories) { _, _ in value }
    }

    /// Whether it handles `failure`.
    public func handles(_ failure: FailureClassification) -> Bool {
        guard failure.category != .cancelled else { return false }
        return categories?.contains(failure.category) ?? true
    }
}
