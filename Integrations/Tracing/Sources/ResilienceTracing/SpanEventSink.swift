import Foundation
import ResilienceCore
import ResilienceTelemetry
import Tracing

/// A ``TelemetrySink`` that adds events to one span as span events, then forwards every event downstream.
///
/// ``TracingStrategy`` installs one for each operation's span; use it directly to bridge events into a span
/// of your own. Span events are named after the event's kind (`retry-scheduled`, `breaker-rejected`,
/// `fallback-used`) and carry the event's attributes under OpenTelemetry's semantic-convention names
/// (`error.type`, `http.response.status_code`, `http.request.resend_count` of the attempt …), redacted.
///
/// It also remembers the highest attempt number it saw, so the span can carry the number of attempts.
public final class SpanEventSink: TelemetrySink, @unchecked Sendable {
    /// The span events are added to.
    public let span: any Span
    /// Where every event goes afterwards, if anywhere.
    public let downstream: (any TelemetrySink)?
    /// The event kinds that become span events.
    public let kinds: Set<ResilienceEventKind>
    /// Removes secrets from attribute values.
    public let redactor: Redactor
    /// Whether ``span`` was recording when the sink was made.
    private let spanIsRecording: Bool
    private let lock = NSLock()
    private var highestAttempt = 0  // guarded by `lock`

    /// The kinds a span records by default: everything that changes the course of an operation (retries,
    /// failed attempts, breaker rejections and transitions, rate limiting, an exhausted budget, fallbacks,
    /// hedges launched and withheld, timeouts, credential refreshes, blocked plaintext requests), not per-attempt
    /// starts and successes, which belong to the transport's own spans.
    public static let defaultKinds: Set<ResilienceEventKind> = [
        .attemptFailed, .retryScheduled, .breakerTransition, .breakerRejected, .rateLimited, .budgetExhausted,
        .fallbackUsed, .hedgeLaunched, .hedgeWithheld, .timedOut, .credentialRefreshed, .insecureTransportBlocked,
        .sourceFailed,
    ]

    /// Creates a sink for `span`.
    ///
    /// - Parameters:
    ///   - span: The span events are added to.
    ///   - downstream: Where every event goes afterwards (the context's own sink).
    ///   - kinds: The event kinds that become span events.
    ///   - redactor: Removes secrets from attribute values.
    public init(
        span: any Span, downstream: (any TelemetrySink)? = nil, kinds: Set<ResilienceEventKind> = defaultKinds,
        redactor: Redactor = .standard
    ) {
        self.span = span
        self.spanIsRecording = span.isRecording
        self.downstream = downstream
        self.kinds = kinds
        self.redactor = redactor
    }

    /// Adds `event` to the span if its kind is one of ``kinds``, then forwards it.
    public func receive(_ event: ResilienceEvent) {
        lock.withLock { highestAttempt = max(highestAttempt, event.attempt) }
        if kinds.contains(event.kind), span.isRecording {
            span.addEvent(
                SpanEvent(
                    name: event.kind.rawValue,
                    attributes: SpanAttributes(
                        SemanticAttribute.describing(event, redactor: redactor, includingKind: false))))
        }
        if let downstream, downstream.isEnabled { downstream.receive(event) }
    }

    /// Whether emitters should build events: when the span records (it was recording when the sink was made) or
    /// the downstream sink is enabled. A span that records nothing (no tracer bootstrapped, a sampled-out
    /// trace) with nobody listening downstream costs the operation no events.
    public var isEnabled: Bool { spanIsRecording || downstream?.isEnabled == true }

    /// The highest attempt number among the events received (0 before any).
    public var attempts: Int { lock.withLock { highestAttempt } }
}

extension SpanAttributes {
    /// Attributes from ResilienceKit's semantic attributes.
    ///
    /// - Parameter attributes: The attributes to convert, each under its semantic name.
    public init(_ attributes: [SemanticAttribute]) {
        self.init()
        for attribute in attributes { set(attribute.key, value: SpanAttribute(attribute.value)) }
    }
}

extension SpanAttribute {
    /// The span attribute for a ResilienceKit attribute value.
    ///
    /// - Parameter value: The semantic attribute value to convert.
    public init(_ value: SemanticAttribute.Value) {
        switch value {
        case .string(let text): self = .string(text)
        case .int(let number): self = .int64(Int64(number))
        case .double(let number): self = .double(number)
        case .bool(let flag): self = .bool(flag)
        }
    }
}
