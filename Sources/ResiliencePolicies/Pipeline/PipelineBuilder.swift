/// Composes stages, outermost first, into one nested strategy.
///
/// ```swift
/// let pipeline = Pipeline {
///     TotalDeadlineStrategy(.seconds(30))
///     RetryStrategy(policy: .standard)
///     TimeoutStrategy(.seconds(10))
/// }
/// ```
/// Supports `if`, `if`/`else` and `#if` for stages chosen at build time.
@resultBuilder
public enum PipelineBuilder {
    /// An empty pipeline.
    public static func buildBlock() -> EmptyStrategy { EmptyStrategy() }

    /// The first stage.
    public static func buildPartialBlock<First: ResilienceStrategy>(first: First) -> First { first }

    /// The next stage, nested inside the ones before it.
    public static func buildPartialBlock<Accumulated: ResilienceStrategy, Next: ResilienceStrategy>(
        accumulated: Accumulated, next: Next
    ) -> ComposedStrategy<Accumulated, Next> {
        ComposedStrategy(outer: accumulated, inner: next)
    }

    /// An `if` without `else`.
    public static func buildOptional<Stage: ResilienceStrategy>(_ stage: Stage?) -> EitherStrategy<Stage, EmptyStrategy>
    {
        stage.map { .first($0) } ?? .second(EmptyStrategy())
    }

    /// The `if` branch of an `if`/`else`.
    public static func buildEither<First: ResilienceStrategy, Second: ResilienceStrategy>(
        first: First
    )
        -> EitherStrategy<First, Second>
    {
        .first(first)
    }

    /// The `else` branch of an `if`/`else`.
    public static func buildEither<First: ResilienceStrategy, Second: ResilienceStrategy>(
        second: Second
    )
        -> EitherStrategy<First, Second>
    {
        .second(second)
    }

    /// `#if` blocks.
    public static func buildLimitedAvailability<Stage: ResilienceStrategy>(_ stage: Stage) -> Stage { stage }

    /// The stages `stage` stands for, outermost first.
    public static func describe(_ stage: some ResilienceStrategy) -> [StageDescription] {
        if let list = stage as? any StageListProviding { return list.stageDescriptions }
        return [stage.stageDescription]
    }
}
