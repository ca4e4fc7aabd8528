import ResilienceCore
import ResilienceTelemetry
import Tracing

/// A pipeline stage that runs each operation in one span: put it outermost.
///
/// - The span is named after the context's key (`lever`: the pipeline's source or host, a name of bounded
///   cardinality; ``spanName`` chooses otherwise) and carries `resilience.key` and `resilience.operation`.
/// - Every retry, failed attempt, breaker rejection or transition, rate limit, exhausted budget, fallback,
///   hedge and timeout that happens inside becomes a span event (see ``SpanEventSink``); the stage installs
///   the sink in the context it passes inward and forwards every event to the context's own sink. When the span
///   records nothing (no tracer bootstrapped, a sampled-out trace) and the context's own sink is absent or
///   disabled, that sink is disabled too, so the stages inside build no events.
/// - When the operation ends the span gets `resilience.attempt`, the number of attempts made. The resend
///   count (`http.request.resend_count`) belongs to each attempt's client span (``TracingTransport``).
/// - A failure is recorded on the span (`recordError`, status `error`, `error.type` = the stable code);
///   cancellation is not an error: the span gets `resilience.cancelled = true` and no error status, unless it
///   came at or after the context's deadline (a deadline enforced outside the stage, such as an aggregated
///   source's, cut the operation off), which fails the span as a timeout (`error.type` `NET_002`). The
///   recorded error is a stand-in carrying the error's description through ``redactor``, never the error
///   itself (whose description may name a URL with its query string, or a header).
/// - Per-attempt client spans are ``TracingTransport``'s; they nest under this span because the operation
///   runs with the span's context as `InstrumentationContext.current`.
///
/// ```swift
/// let pipeline = Pipeline {
///     TracingStrategy()                        // InstrumentationSystem.tracer, bootstrapped by the app
///     RetryStrategy(policy: .standard)
///     CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard))
/// }
/// ```
public struct TracingStrategy: ResilienceStrategy {
    /// The tracer; `nil` means `InstrumentationSystem.tracer` at the time of each execution.
    public var tracer: (any Tracer)?
    /// The span's kind.
    public var kind: SpanKind
    /// The event kinds that become span events.
    public var eventKinds: Set<ResilienceEventKind>
    /// Removes secrets from span names, attribute values and the recorded error's description.
    public var redactor: Redactor
    /// The span's name for an execution's context (redacted afterwards).
    public var spanName: @Sendable (ResilienceContext) -> String

    /// Names a span after the context's key: the pipeline's source or host.
    public static let keyName: @Sendable (ResilienceContext) -> String = { $0.key }

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - tracer: The tracer; by default `InstrumentationSystem.tracer` at the time of each execution.
    ///   - kind: The span's kind (default `.internal`: the client spans below it are `.client`).
    ///   - eventKinds: The event kinds that become span events.
    ///   - redactor: Removes secrets from span names, attribute values and the recorded error's description.
    ///   - spanName: The span's name for an execution's context; by default its key (``keyName``).
    public init(
        tracer: (any Tracer)? = nil, kind: SpanKind = .internal,
        eventKinds: Set<ResilienceEventKind> = SpanEventSink.defaultKinds, redactor: Redactor = .standard,
        spanName: @escaping @Sendable (ResilienceContext) -> String = keyName
    ) {
        self.tracer = tracer
        self.kind = kind
        self.eventKinds = eventKinds
        self.redactor = redactor
        self.spanName = spanName
    }

    /// Runs `next` inside a span.
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let tracer = self.tracer ?? InstrumentationSystem.tracer
        let span = tracer.startSpan(
            redactor.redact(spanName(context)), context: InstrumentationContext.current ?? .topLevel, ofKind: kind,
            at: DefaultTracerClock.now, function: #function, file: #fileID, line: #line)
        defer { span.end() }
        span.attributes.set(SemanticAttribute.Name.key, value: .string(redactor.redact(context.key)))
        span.attributes.set(SemanticAttribute.Name.operation, value: .string(redactor.redact(context.operation)))
        let sink = SpanEventSink(span: span, downstream: context.telemetry, kinds: eventKinds, redactor: redactor)
        var inner = context
        inner.telemetry = sink
        do {
            let output = try await InstrumentationContext.$current.withValue(span.context) {
                try await next(inner)
            }
            finish(span, attempts: sink.attempts)
            return output
        } catch {
            finish(span, attempts: sink.attempts)
            span.recordFailure(error, context: context, redactor: redactor, includingCategory: true)
            throw error
        }
    }

    private func finish(_ span: any Span, attempts: Int) {
        guard attempts > 0 else { return }
        span.attributes.set(SemanticAttribute.Name.attempt, value: .int64(Int64(attempts)))
    }

    /// `tracing`.
    public var stageDescription: StageDescription { StageDescription(name: "tracing") }
}

/// A pipeline that runs another pipeline's operations inside a ``TracingStrategy`` span: wraps a pipeline you
/// did not build yourself (a composition root's, a registry's).
///
/// ```swift
/// let traced = TracedPipeline(wrapping: registry.pipeline(for: "lever"))
/// ```
public struct TracedPipeline: ResiliencePipeline {
    /// The pipeline whose operations are traced.
    public let base: any ResiliencePipeline
    /// The tracing stage around it.
    public let strategy: TracingStrategy

    /// Creates the pipeline.
    ///
    /// - Parameters:
    ///   - base: The pipeline whose operations are traced.
    ///   - strategy: The tracing stage (default: `InstrumentationSystem.tracer`, default event kinds).
    public init(wrapping base: any ResiliencePipeline, strategy: TracingStrategy = TracingStrategy()) {
        self.base = base
        self.strategy = strategy
    }

    /// Runs `operation` through ``base`` inside a span.
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await strategy.execute(context) { try await base.execute($0, operation) }
    }

    /// `tracing` followed by the base pipeline's stages.
    public var stages: [StageDescription] { [strategy.stageDescription] + base.stages }
}
