/// What a ``PipelinePreset`` builds for one of its parts: a named recipe, so every pipeline gets its own
/// instance. ``BreakerChoice`` and ``LimiterChoice`` are its two kinds.
///
/// ```swift
/// preset.breaker = .custom("mine") { _ in MyBreaker() }
/// ```
public struct PresetChoice<Component>: Sendable, CustomStringConvertible {
    /// A short name for descriptions.
    public let description: String
    private let build: @Sendable (SharedRandomSource) -> Component

    /// A part built by `make`, which receives the pipeline's random source.
    ///
    /// - Parameters:
    ///   - name: A short name for pipeline descriptions.
    ///   - make: Builds a new part for each pipeline, from the pipeline's random source (for jitter).
    public static func custom(
        _ name: String, _ make: @escaping @Sendable (SharedRandomSource) -> Component
    ) -> PresetChoice {
        PresetChoice(description: name, build: make)
    }

    /// Builds a new part from the pipeline's random source.
    public func make(random: SharedRandomSource) -> Component {
        build(random)
    }
}
