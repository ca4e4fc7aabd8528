import CoreMetrics
import Metrics
import ResilienceCore

/// A ``TelemetrySink`` that turns ResilienceKit's events into swift-metrics counters, timers and gauges.
///
/// Names and labels are ``MetricSchema``'s, the same the core `PrometheusExporter` renders (`Docs/Telemetry.md`
/// lists them):
///
/// | metric | type | labels | from |
/// |---|---|---|---|
/// | `resilience_events_total` | counter | `key`, `kind` | every event |
/// | `resilience_attempts_total` | counter | `key`, `category`, `outcome` | every finished attempt |
/// | `resilience_attempt_duration_seconds` | timer | `key` | every succeeded or failed attempt's latency |
/// | `resilience_attempts_in_flight` | gauge | `key` | attempts started and not yet finished |
/// | `resilience_retries_total` | counter | `key`, `category` | every scheduled retry |
/// | `resilience_rejections_total` | counter | `key`, `reason` | breaker rejections, a limiter's refusals (not its waits), an exhausted retry budget |
/// | `resilience_breaker_state` | gauge | `key`, `state` | 1 for the current state (the transition with the largest ``BreakerTransition/sequence``, whatever order they arrive in), 0 for the others, from the pipeline's creation (keys past the cap have none; all 0 once a pipeline without a breaker replaces one) |
/// | `resilience_operations_total` | counter | `key`, `category`, `outcome` | ``MetricsStrategy`` |
/// | `resilience_operation_duration_seconds` | timer | `key`, `outcome` | ``MetricsStrategy`` |
///
/// Durations are recorded in nanoseconds; a negative one (a clock that stepped back) counts as zero.
/// `outcome` is `success`, `failure` or `cancelled`; `category` is the failure's category (`timeout`,
/// `server-error` …) or `none` for a success; `state` is `closed`, `half_open`, `open` or `isolated`. The prefix
/// `resilience` is ``Configuration/prefix``.
///
/// **Bounded cardinality.** The first ``Configuration/maximumKeys`` distinct keys (100 by default) keep their
/// names; later keys are counted under ``Configuration/overflowLabel`` (`other`). Categories and event kinds,
/// both open sets, are capped the same way (``Configuration/maximumCategories``,
/// ``Configuration/maximumKinds``). So the number of series is bounded whatever the traffic, and the handles
/// the sink caches are too. Keys are redacted before they become labels. A key past the cap has no
/// `resilience_breaker_state` series: one gauge cannot hold the states of many breakers (its transitions still
/// count in `resilience_events_total`).
///
/// `receive` looks up a cached handle under a small lock and increments it; the backend's handle does the rest.
/// An event whose key, kind, category and outcome were seen before allocates nothing: the key's label (redacted,
/// capped) is cached per key, and a handle is found by its label values without building an array. That cache
/// holds at most ``Configuration/maximumKeys`` × 2 + 64 keys of at most 256 UTF-8 bytes each; a key past either
/// bound is redacted again on each event (it still builds no array), so a stream of distinct keys cannot grow
/// the sink's memory.
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
    /// Attempts in flight per key label, with the number of the latest change to each.
    private let inFlight = LockedState(initialState: [String: GaugeValue<Int>]())
    /// The latest breaker transition per key label (keys past the cap have none; `nil` after a pipeline without a
    /// breaker), with the number of the latest change to each.
    private let breakerTransitions = LockedState(initialState: [String: GaugeValue<BreakerTransition?>]())
    /// The label of each key seen, so a key is redacted and checked against the cap once (bounded by
    /// `keyLabelCacheLimit` and `longestCachedKey`).
    private let keyLabels = LockedState(initialState: [String: String]())
    /// The most keys whose label is cached: `maximumKeys` × 2 + 64 (`Int.max` when that does not fit).
    let keyLabelCacheLimit: Int

    /// The longest key (in UTF-8 bytes) whose label is cached.
    static let longestCachedKey = 256

    /// A cached handle's identity: its type (counter, timer, gauge), its name's suffix and its label values.
    private struct HandleKey: Hashable {
        var type: ObjectIdentifier
        var name: String
        var labels: SeriesLabels
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
        // Saturated: a cap too large to double (`Int.max`, for no cap) must not trap.
        let keyCap = max(0, configuration.maximumKeys)
        keyLabelCacheLimit = keyCap > (Int.max - 64) / 2 ? .max : keyCap * 2 + 64
    }

    /// The full name of a metric: `prefix_suffix`.
    public func name(_ suffix: String) -> String {
        configuration.prefix.isEmpty ? suffix : configuration.prefix + "_" + suffix
    }

    /// The label `key` is counted under: itself (redacted) while under the cap, else the overflow label.
    public func keyLabel(_ key: String) -> String {
        if let cached = keyLabels.withLock({ $0[key] }) { return cached }
        let label = keys.label(for: configuration.redactor.redact(key))
        // A key's label never changes (the cap only admits), so caching it keeps the answer; the bounds keep a
        // stream of distinct keys from growing the cache.
        guard key.utf8.count <= Self.longestCachedKey else { return label }
        keyLabels.withLock { labels in
            if labels.count < keyLabelCacheLimit { labels[key] = label }
        }
        return label
    }

    /// How many keys have their label cached (at most `keyLabelCacheLimit`).
    var cachedKeyLabelCount: Int { keyLabels.withLock { $0.count } }

    /// How many distinct keys have a label of their own.
    public var distinctKeyCount: Int { keys.distinctCount }

    /// Updates the metrics for `event`.
    public func receive(_ event: ResilienceEvent) {
        let key = keyLabel(event.key)
        handle(Counter.self, MetricSchema.events, key, kinds.label(for: event.kind.rawValue)).increment()
        switch event.kind {
        case .attemptStarted:
            updateInFlight(key: key, by: 1)
        case .attemptSucceeded, .attemptFailed, .attemptCancelled:
            updateInFlight(key: key, by: -1)
            let failure: FailureClassification? =
                switch event.kind {
                case .attemptSucceeded: nil
                case .attemptCancelled: event.classification ?? .cancelled
                default: event.classification ?? .unknown
                }
            let (category, outcome) = labels(failure)
            handle(Counter.self, MetricSchema.attempts, key, category, outcome).increment()
            if event.kind != .attemptCancelled, let duration = event.duration {
                handle(Timer.self, MetricSchema.attemptDuration, key).record(duration: Self.timed(duration))
            }
        case .retryScheduled:
            handle(Counter.self, MetricSchema.retries, key, categoryLabel(event.classification?.category))
                .increment()
        case let kind where MetricSchema.rejectionKinds.contains(kind):
            guard MetricSchema.isRejection(event) else { break }
            handle(Counter.self, MetricSchema.rejections, key, kinds.label(for: kind.rawValue)).increment()
        case .breakerTransition, .pipelineCreated:
            // Keys past the cap share one label, and one gauge cannot say the states of many breakers: the last
            // transition of any of them would overwrite the others'. They have no breaker series.
            // A pipeline created without a breaker (no transition) leaves the key none.
            guard event.transition != nil || event.kind == .pipelineCreated, !isOverflow(key, of: event.key)
            else { break }
            updateBreakerState(key: key, to: event.transition, startsOver: event.kind == .pipelineCreated)
        default:
            break
        }
    }

    /// Whether `label` is the overflow label standing for `key` past the cap (not a key named like it).
    private func isOverflow(_ label: String, of key: String) -> Bool {
        label == configuration.overflowLabel && configuration.redactor.redact(key) != label
    }

    /// Every breaker state, made once (`allCases` builds a new array on each use).
    private static let breakerStates = BreakerState.allCases

    /// Counts an attempt in or out and sets the key's gauge.
    private func updateInFlight(key: String, by change: Int) {
        let latest = inFlight.withLock { counts in
            var count = counts[key, default: GaugeValue(value: 0)]
            count.value = max(0, count.value + change)
            count.change &+= 1
            counts[key] = count
            return count
        }
        let gauge = handle(Gauge.self, MetricSchema.attemptsInFlight, key)
        settle(inFlight, key: key, from: latest) { gauge.record($0) }
    }

    /// Takes `transition` as the key's breaker state unless a later one of the same breaker was taken already
    /// (transitions reach the sink in any order; ``BreakerTransition/sequence`` orders them), and sets the key's
    /// four state gauges. A new pipeline's breaker (`startsOver`) replaces whatever an earlier one left; a new
    /// pipeline without one (`transition` `nil`) sets every state's gauge to 0, if the key had any.
    private func updateBreakerState(key: String, to transition: BreakerTransition?, startsOver: Bool) {
        let taken = breakerTransitions.withLock { transitions -> GaugeValue<BreakerTransition?>? in
            let current = transitions[key]
            if let transition {
                if let shown = current?.value, !startsOver, !transition.supersedes(shown) { return nil }
            } else if current?.value == nil {
                return nil  // no breaker before it either: no series to clear
            }
            let next = GaugeValue(value: transition, change: (current?.change ?? 0) &+ 1)
            transitions[key] = next
            return next
        }
        guard let taken else { return }
        settle(breakerTransitions, key: key, from: taken) { transition in
            for state in Self.breakerStates {
                handle(Gauge.self, MetricSchema.breakerState, key, MetricSchema.breakerStateLabel(state))
                    .record(state == transition?.to ? 1 : 0)
            }
        }
    }

    /// Writes `latest` to the key's gauges with `write`, then again whatever was changed meanwhile, until no
    /// change came after the one written. Gauges are set after the lock is released, so two updates can land in
    /// the other order (or interleave, when a value takes several gauges); the values left after a burst are
    /// therefore the latest change's, never a stale or a mixed one.
    private func settle<Value>(
        _ values: LockedState<[String: GaugeValue<Value>]>, key: String, from latest: GaugeValue<Value>,
        _ write: (Value) -> Void
    ) {
        var latest = latest
        while true {
            write(latest.value)
            guard let newer = values.withLock({ $0[key].flatMap { $0.change == latest.change ? nil : $0 } }) else {
                return
            }
            latest = newer
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
        handle(Counter.self, MetricSchema.operations, key, category, outcome).increment()
        handle(Timer.self, MetricSchema.operationDuration, key, outcome).record(duration: Self.timed(duration))
    }

    /// What a timer records for `duration`: a negative one (a clock that stepped back, an emitter's bad value)
    /// as zero, as the core `LatencyHistogram` does, so a histogram's sum never goes down.
    static func timed(_ duration: Duration) -> Duration {
        duration < .zero ? .zero : duration
    }

    private func labels(_ failure: FailureClassification?) -> (category: String, outcome: String) {
        let (category, outcome) = MetricSchema.outcomeLabels(failure)
        return (failure == nil ? category : categories.label(for: category), outcome)
    }

    private func categoryLabel(_ category: FailureCategory?) -> String {
        guard let category else { return MetricSchema.noCategory }
        return categories.label(for: category.rawValue)
    }

    /// The handle of type `Handle` for `family` and its label values (one per label of the family), created
    /// through the factory on first use and cached for every later event with the same labels (the label budgets
    /// keep the cache bounded). Finding a cached handle allocates nothing.
    private func handle<Handle: MetricHandle>(
        _ type: Handle.Type, _ family: MetricFamily, _ first: String, _ second: String = "", _ third: String = ""
    ) -> Handle {
        let labels = SeriesLabels(first: first, second: second, third: third)
        let handleKey = HandleKey(type: ObjectIdentifier(type), name: family.suffix, labels: labels)
        return handles.withLock { handles in
            if let cached = handles[handleKey] as? Handle { return cached }
            let created = Handle(
                label: name(family.suffix), dimensions: Array(zip(family.labels, labels.values)), factory: factory)
            handles[handleKey] = created
            return created
        }
    }
}

/// A key's attempts in flight and the number of the latest change to it.
/// A key's value behind one or more gauges (attempts in flight, the breaker's latest transition).
private struct GaugeValue<Value> {
    /// The value the gauges should show.
    var value: Value
    /// Incremented on every change, so an update can tell whether another one came after it.
    var change = 0
}

/// A series' label values, at most three (every family's), held inline so that looking a handle up builds no
/// array; a family with fewer labels leaves the rest empty.
private struct SeriesLabels: Hashable {
    var first: String
    var second: String
    var third: String

    /// The values in order, for the factory (only when a handle is created; `zip` drops the unused ones).
    var values: [String] { [first, second, third] }
}

/// A swift-metrics handle (counter, timer, gauge) that ``MetricsTelemetrySink`` creates once per name and labels.
protocol MetricHandle: AnyObject {
    init(label: String, dimensions: [(String, String)], factory: any MetricsFactory)
}

extension Counter: MetricHandle {}
extension Timer: MetricHandle {}
extension Gauge: MetricHandle {}
