import CoreMetrics
import Metrics
import ResilienceCore

/// A ``TelemetrySink`` that turns ResilienceKit's events into swift-metrics counters, timers and gauges.
///
/// | metric | type | dimensions | from |
/// |---|---|---|---|
/// | `resilience_attempts_total` | counter | `key`, `category`, `outcome` | every finished attempt |
/// | `resilience_attempt_duration_seconds` | timer | `key`, `outcome` | every finished attempt's latency |
/// | `resilience_retries_total` | counter | `key`, `category` | every scheduled retry |
/// | `resilience_rejections_total` | counter | `key`, `category`, `reason` | breaker rejections, rate limiting, an exhausted retry budget |
/// | `resilience_breaker_state` | gauge | `key` | every breaker transition: 0 closed, 1 half-open, 2 open, 3 isolated |
/// | `resilience_events_total` | counter | `key`, `kind` | every event |
/// | `resilience_operations_total` | counter | `key`, `category`, `outcome` | ``MetricsStrategy`` |
/// | `resilience_operation_duration_seconds` | timer | `key`, `outcome` | ``MetricsStrategy`` |
///
/// `outcome` is `success`, `failure` or `cancelled`; `category` is the failure's category (`timeout`,
/// `server-error` …) or `none` for a success. The prefix `resilience` is ``Configuration/prefix``.
///
/// **Bounded cardinality.** The first ``Configuration/maximumKeys`` distinct keys (100 by default) keep their
/// names; later keys are counted under ``Configuration/overflowLabel`` (`other`). Categories and event kinds,
/// both open sets, are capped the same way (``Configuration/maximumCategories``,
/// ``Configuration/maximumKinds``). So the number of series is bounded whatever the traffic, and the handles
/// the sink caches are too. Keys are redacted before they become labels.
///
/// `receive` looks up a cached handle under a small lock and increments it; the backend's handle does the rest.
///
/// ```swift
/// let metrics = MetricsTelemetrySink()              // MetricsSystem.factory, bootstrapped by the app
/// var root = CompositionRoot<Job>(.interactive, telemetry: metrics)
/// let pipeline = Pipeline { MetricsStrategy(sink: metrics); RetryStrategy(policy: .standard) }
/// ```
public final class MetricsTelemetrySink: TelemetrySink {
    /// Names and bounds.
    public struct Configuration: Sendable {
        /// The metric names' prefix (`resilience` gives `resilience_attempts_total`).
        public var prefix: String
        /// The most distinct keys with a label of their own (default 100).
        public var maximumKeys: Int
        /// The most distinct failure categories with a label of their own (default 32).
        public var maximumCategories: Int
        /// The most distinct event kinds with a label of their own (default 64).
        public var maximumKinds: Int
        /// The label value that stands for every value over a cap.
        public var overflowLabel: String
        /// Removes secrets from keys before they become labels.
        public var redactor: Redactor

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - prefix: The metric names' prefix.
        ///   - maximumKeys: The most distinct keys with a label of their own.
        ///   - maximumCategories: The most distinct failure categories with a label of their own.
        ///   - maximumKinds: The most distinct event kinds with a label of their own.
        ///   - overflowLabel: The label value for everything over a cap.
        ///   - redactor: Removes secrets from keys before they become labels.
        public init(
            prefix: String = "resilience", maximumKeys: Int = 100, maximumCategories: Int = 32,
            maximumKinds: Int = 64, overflowLabel: String = "other", redactor: Redactor = .standard
        ) {
            self.prefix = prefix
            self.maximumKeys = maximumKeys
            self.maximumCategories = maximumCategories
            self.maximumKinds = maximumKinds
            self.overflowLabel = overflowLabel
            self.redactor = redactor
        }

        /// The defaults.
        public static var standard: Configuration { Configuration() }
    }

    /// Names and bounds.
    public let configuration: Configuration
    private let factory: any MetricsFactory
    private let keys: LabelBudget
    private let categories: LabelBudget
    private let kinds: LabelBudget
    private let handles = LockedState(initialState: [HandleKey: any MetricHandle]())

    /// A cached handle's identity: its type (counter, timer, gauge), its name's suffix and its label values.
    private struct HandleKey: Hashable {
        var type: ObjectIdentifier
        var name: String
        var labels: [String]
    }

    /// Creates a sink.
    ///
    /// - Parameters:
    ///   - configuration: Metric names and cardinality caps.
    ///   - factory: The metrics backend; by default the one bootstrapped in `MetricsSystem`.
    public init(configuration: Configuration = .standard, factory: any MetricsFactory = MetricsSystem.factory) {
        self.configuration = configuration
        self.factory = factory
        keys = LabelBudget(limit: configuration.maximumKeys, overflow: configuration.overflowLabel)
        categories = LabelBudget(limit: configuration.maximumCategories, overflow: configuration.overflowLabel)
        kinds = LabelBudget(limit: configuration.maximumKinds, overflow: configuration.overflowLabel)
    }

    /// The full name of a metric: `prefix_suffix`.
    public func name(_ suffix: String) -> String {
        configuration.prefix.isEmpty ? suffix : configuration.prefix + "_" + suffix
    }

    /// The label `key` is counted under: itself (redacted) while under the cap, else the overflow label.
    public func keyLabel(_ key: String) -> String { keys.label(for: configuration.redactor.redact(key)) }

    /// How many distinct keys have a label of their own.
    public var distinctKeyCount: Int { keys.distinctCount }

    /// Updates the metrics for `event`.
    public func receive(_ event: ResilienceEvent) {
        let key = keyLabel(event.key)
        handle(Counter.self, "events_total", [("key", key), ("kind", kinds.label(for: event.kind.rawValue))])
            .increment()
        switch event.kind {
        case .attemptSucceeded, .attemptFailed:
            let (category, outcome) = labels(event.kind == .attemptSucceeded ? nil : event.classification)
            handle(Counter.self, "attempts_total", [("key", key), ("category", category), ("outcome", outcome)])
                .increment()
            if let duration = event.duration {
                handle(Timer.self, "attempt_duration_seconds", [("key", key), ("outcome", outcome)]).record(
                    duration: duration)
            }
        case .retryScheduled:
            let category = categoryLabel(event.classification?.category)
            handle(Counter.self, "retries_total", [("key", key), ("category", category)]).increment()
        case .breakerRejected:
            rejection(key: key, category: .circuitOpen, reason: event.kind)
        case .rateLimited, .budgetExhausted:
            rejection(key: key, category: .throttled, reason: event.kind)
        case .breakerTransition:
            if let state = event.transition?.to {
                handle(Gauge.self, "breaker_state", [("key", key)]).record(Self.gaugeValue(of: state))
            }
        default:
            break
        }
    }

    /// The gauge value of a breaker state: 0 closed, 1 half-open, 2 open, 3 isolated.
    public static func gaugeValue(of state: BreakerState) -> Int {
        switch state {
        case .closed: 0
        case .halfOpen: 1
        case .open: 2
        case .isolated: 3
        }
    }

    /// Records one finished operation (used by ``MetricsStrategy``).
    ///
    /// - Parameters:
    ///   - key: The operation's key.
    ///   - duration: How long the whole operation took, retries included.
    ///   - failure: How it failed, or `nil` for a success.
    public func recordOperation(key: String, duration: Duration, failure: FailureClassification?) {
        let key = keyLabel(key)
        let (category, outcome) = labels(failure)
        handle(Counter.self, "operations_total", [("key", key), ("category", category), ("outcome", outcome)])
            .increment()
        handle(Timer.self, "operation_duration_seconds", [("key", key), ("outcome", outcome)]).record(
            duration: duration)
    }

    private func rejection(key: String, category: FailureCategory, reason: ResilienceEventKind) {
        handle(
            Counter.self,
            "rejections_total",
            [("key", key), ("category", categoryLabel(category)), ("reason", kinds.label(for: reason.rawValue))]
        ).increment()
    }

    private func labels(_ failure: FailureClassification?) -> (category: String, outcome: String) {
        guard let failure else { return ("none", "success") }
        return (categoryLabel(failure.category), failure.category == .cancelled ? "cancelled" : "failure")
    }

    private func categoryLabel(_ category: FailureCategory?) -> String {
        guard let category else { return "none" }
        return categories.label(for: category.rawValue)
    }

    /// The handle of type `Handle` for `suffix` and `dimensions`, created through the factory on first use and
    /// cached for every later event with the same labels (the label budgets keep the cache bounded).
    private func handle<Handle: MetricHandle>(
        _ type: Handle.Type, _ suffix: String, _ dimensions: [(String, String)]
    ) -> Handle {
        let handleKey = HandleKey(type: ObjectIdentifier(type), name: suffix, labels: dimensions.map(\.1))
        return handles.withLock { handles in
            if let cached = handles[handleKey] as? Handle { return cached }
            let created = Handle(label: name(suffix), dimensions: dimensions, factory: factory)
            handles[handleKey] = created
            return created
        }
    }
}

/// A swift-metrics handle (counter, timer, gauge) that ``MetricsTelemetrySink`` creates once per name and labels.
protocol MetricHandle: AnyObject {
    init(label: String, dimensions: [(String, String)], factory: any MetricsFactory)
}

extension Counter: MetricHandle {}
extension Timer: MetricHandle {}
extension Gauge: MetricHandle {}
