/// An ordered composition of strategies that executes an operation.
///
/// Feature modules that run operations (a transport, a source, a sync engine) depend on this protocol only;
/// ResiliencePolicies builds concrete pipelines with a result builder, and the composition root hands each
/// key its own.
///
/// ## Contract
/// - Stages run outermost first in ``stages`` order; the operation runs innermost.
/// - A pipeline with no stages calls the operation once with the context unchanged.
/// - Errors that leave the pipeline are either the operation's own or a ``ResilienceError``; cancellation
///   always surfaces as cancellation.
public protocol ResiliencePipeline: Sendable {
    /// Runs `operation` through the stages.
    func execute<Output: Sendable>(
        _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output

    /// The stages, outermost first.
    var stages: [StageDescription] { get }
}

extension ResiliencePipeline {
    /// `retry(…) → circuit-breaker(…) → …`, one line.
    public var pipelineDescription: String {
        stages.isEmpty ? "(no stages)" : stages.map(\.description).joined(separator: " → ")
    }

    /// Whether a stage is a circuit breaker (its description is named
    /// ``StageDescription/circuitBreakerName``).
    public var hasCircuitBreaker: Bool { stages.contains { $0.name == StageDescription.circuitBreakerName } }

    /// Whether a stage waits for the network path while the device is offline (its description is named
    /// ``StageDescription/connectivityWaitName``).
    public var waitsForConnectivity: Bool { stages.contains { $0.name == StageDescription.connectivityWaitName } }

    /// Tells `sink` that this pipeline now serves `key`: emits ``ResilienceEventKind/pipelineCreated``, with
    /// a closed → closed `transition` when the pipeline has a circuit breaker, so metrics show the breaker's
    /// state series from the start. A registry calls it when it builds or installs a key's pipeline.
    ///
    /// - Parameters:
    ///   - key: The key the pipeline serves.
    ///   - sink: Where the event goes; nothing is built when it is `nil` or disabled.
    ///   - clock: The clock that stamps the event.
    public func announceCreation(key: String, to sink: (any TelemetrySink)?, clock: ResilienceClock) {
        guard let sink, sink.isEnabled else { return }
        var event = ResilienceEvent(kind: .pipelineCreated, key: key, time: clock.now())
        if hasCircuitBreaker { event.transition = BreakerTransition(from: .closed, to: .closed, sequence: 0) }
        event.detail = pipelineDescription
        sink.receive(event)
    }
}

/// A pipeline with no stages: runs the operation once, unchanged. The default where no policy is set.
public struct PassthroughPipeline: ResiliencePipeline {
    /// Creates the pipeline.
    public init() {}

    /// Calls `operation` once.
    @inlinable
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        try await operation(context)
    }

    /// No stages.
    public var stages: [StageDescription] { [] }
}

extension ResiliencePipeline where Self == PassthroughPipeline {
    /// A pipeline with no stages.
    public static var passthrough: PassthroughPipeline { PassthroughPipeline() }
}
