import ResilienceCore

/// A pipeline stage that times each whole operation (every attempt and retry delay included) and counts its
/// outcome in a ``MetricsTelemetrySink``: `resilience_operation_duration_seconds` and
/// `resilience_operations_total`.
///
/// Put it outermost, so the time covers what the caller waited for. A cancelled operation counts with
/// outcome `cancelled`, never as a failure, unless the cancellation came at or after the context's deadline: a
/// deadline enforced outside the stage (an aggregated source's) cut it off, and it counts as a `timeout`
/// failure.
///
/// ```swift
/// let pipeline = Pipeline {
///     MetricsStrategy(sink: metrics)
///     RetryStrategy(policy: .standard)
///     TimeoutStrategy(.seconds(5))
/// }
/// ```
public struct MetricsStrategy: ResilienceStrategy {
    /// Where the operation's metrics go.
    public let sink: MetricsTelemetrySink

    /// Creates the stage.
    ///
    /// - Parameter sink: Where the operation's metrics go (the same sink that receives the pipeline's events,
    ///   so both share one cardinality cap).
    public init(sink: MetricsTelemetrySink) {
        self.sink = sink
    }

    /// Runs `next`, then records the duration and outcome.
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let start = context.clock.now()
        do {
            let output = try await next(context)
            sink.recordOperation(key: context.key, duration: start.duration(to: context.clock.now()), failure: nil)
            return output
        } catch {
            sink.recordOperation(
                key: context.key, duration: start.duration(to: context.clock.now()),
                failure: context.classify(context.deadlineAware(error)))
            throw error
        }
    }

    /// `metrics`.
    public var stageDescription: StageDescription { StageDescription(name: "metrics") }
}
