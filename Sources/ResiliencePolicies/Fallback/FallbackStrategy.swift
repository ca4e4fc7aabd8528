/// The fallback stage: when the operation fails, tries ordered alternatives chosen by failure category.
///
/// - The first alternative that handles the failure's category runs; if it throws, the next matching one
///   runs, and so on. The value of the first that succeeds is returned and a `fallbackUsed` event names it.
/// - No matching alternative: the original error is rethrown. Every matching alternative failed:
///   `ResilienceError(.fallbackExhausted)` carrying the original failure.
/// - Cancellation never falls back.
/// - Applies to operations whose output is `Value`; operations of any other type pass through untouched.
///
/// ```swift
/// FallbackStrategy<[Job]>(
///     .init("cache", when: [.networkUnreachable, .circuitOpen]) { _, _ in try await cache.jobs() },
///     .value("empty", when: [.notFound], []))
/// ```
public struct FallbackStrategy<Value: Sendable>: ResilienceStrategy {
    /// The alternatives, in order.
    public var alternatives: [FallbackAlternative<Value>]

    /// Creates the stage from ordered alternatives.
    ///
    /// - Parameter alternatives: The alternatives; after a failure, those that handle its category run in this order
    ///   until one succeeds.
    public init(_ alternatives: [FallbackAlternative<Value>]) {
        self.alternatives = alternatives
    }

    /// Creates the stage from ordered alternatives.
    ///
    /// - Parameter alternatives: The alternatives; after a failure, those that handle its category run in this order
    ///   until one succeeds.
    public init(_ alternatives: FallbackAlternative<Value>...) {
        self.alternatives = alternatives
    }

    /// Runs `next`; on failure runs the matching alternatives in order.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        do {
            return try await next(context)
        } catch {
            guard Output.self == Value.self else { throw error }
            let failure = context.classify(error)
            if failure.category == .cancelled || Task.isCancelled { throw error }
            var matched = false
            for alternative in alternatives where alternative.handles(failure) {
                matched = true
                do {
                    let value = try await alternative.produce(context, failure)
                    context.emit(.fallbackUsed) {
                        $0.detail = alternative.name
                        $0.classification = failure
                    }
                    if let output = value as? Output { return output }
                } catch {
                    if Task.isCancelled { throw CancellationError() }
                }
            }
            guard matched else { throw error }
            throw ResilienceError(.fallbackExhausted, key: context.key, underlying: failure)
        }
    }

    /// `fallback(alternatives: cache [network-unreachable], empty [any])`.
    public var stageDescription: StageDescription {
        let list = alternatives.map { alternative in
            let categories = alternative.categories.map { $0.map(\.rawValue).sorted().joined(separator: ", ") }
            return "\(alternative.name) [\(categories ?? "any")]"
        }
        return StageDescription(name: "fallback", settings: [.init("alternatives", list.joined(separator: "; "))])
    }
}
