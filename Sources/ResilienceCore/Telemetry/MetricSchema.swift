/// One metric family of ResilienceKit's metrics schema: its name, type, labels and meaning.
///
/// Every exporter of ResilienceKit's metrics (the Prometheus text exporter, the swift-metrics sink) takes its
/// names and labels from ``MetricSchema``, so a dashboard built on one works on the other.
public struct MetricFamily: Hashable, Sendable, CustomStringConvertible {
    /// The family's metric type.
    public enum Kind: String, Hashable, Sendable {
        /// A monotonically increasing count (its name ends in `_total`).
        case counter
        /// A value that goes up and down.
        case gauge
        /// A distribution of observations (`_bucket`, `_sum`, `_count`; a swift-metrics timer).
        case histogram
    }

    /// What feeds a family's samples.
    public enum Feed: String, Hashable, Sendable {
        /// The pipeline's events (``ResilienceEvent``): every sink that receives them can emit the family.
        case events
        /// A pipeline stage that times whole operations (the swift-metrics integration's `MetricsStrategy`).
        case operationStage = "operation stage"
        /// The telemetry recorder's own bookkeeping (the Prometheus exporter only).
        case recorder
    }

    /// The name without the prefix (`attempts_total`); see ``name(prefix:)``.
    public var suffix: String
    /// The metric type.
    public var kind: Kind
    /// The label names, in the order they are emitted.
    public var labels: [String]
    /// What the family measures (a Prometheus `# HELP` line).
    public var help: String
    /// What feeds its samples.
    public var feed: Feed

    /// Creates a family.
    ///
    /// - Parameters:
    ///   - suffix: The name without the prefix, with its unit (`_seconds`) and, for a counter, `_total`.
    ///   - kind: The metric type.
    ///   - labels: The label names, in the order they are emitted.
    ///   - help: What the family measures.
    ///   - feed: What feeds its samples.
    public init(_ suffix: String, _ kind: Kind, labels: [String], help: String, feed: Feed = .events) {
        self.suffix = suffix
        self.kind = kind
        self.labels = labels
        self.help = help
        self.feed = feed
    }

    /// The full metric name: `prefix_suffix` (`resilience_attempts_total`), or the suffix alone for an empty
    /// prefix.
    ///
    /// - Parameter prefix: The namespace (default ``MetricSchema/defaultPrefix``).
    public func name(prefix: String = MetricSchema.defaultPrefix) -> String {
        prefix.isEmpty ? suffix : prefix + "_" + suffix
    }

    /// The full name with the default prefix.
    public var description: String { name() }
}

/// ResilienceKit's metrics schema: every metric family its exporters emit, with one set of names and labels.
///
/// Names follow Prometheus and OpenTelemetry conventions: snake case, a namespace prefix (`resilience`), the
/// unit in the name (`_seconds`), `_total` on counters. Labels: `key` (the ``ResilienceContext/key``, a
/// source id or host), `kind` (an event kind), `outcome` (``Outcome``), `category` (a failure category, or
/// `none`), `reason` (the event kind of a rejection), `state` (``breakerStateLabel(_:)``).
///
/// The breaker family has one series per state, 1 for the current state and 0 for the others, from the
/// moment the key's pipeline is created (``ResilienceEventKind/pipelineCreated``), so an alert on
/// `resilience_breaker_state{state="open"} == 1` works before the first transition.
public enum MetricSchema {
    /// The default namespace prefix.
    public static let defaultPrefix = "resilience"

    /// Label names.
    public enum Label {
        /// The key whose policies applied (source id or host).
        public static let key = "key"
        /// An event's kind (`retry-scheduled`).
        public static let kind = "kind"
        /// How an attempt or operation ended (``Outcome``).
        public static let outcome = "outcome"
        /// A failure's category (`timeout`), or ``MetricSchema/noCategory``.
        public static let category = "category"
        /// The event kind that rejected a call (`breaker-rejected`, `rate-limited`, `budget-exhausted`).
        public static let reason = "reason"
        /// A breaker state (``MetricSchema/breakerStateLabel(_:)``).
        public static let state = "state"
    }

    /// Values of the `outcome` label.
    public enum Outcome {
        /// It succeeded.
        public static let success = "success"
        /// It failed.
        public static let failure = "failure"
        /// It was cancelled (never a failure).
        public static let cancelled = "cancelled"
    }

    /// The `category` label of a success.
    public static let noCategory = "none"

    /// Events by key and kind.
    public static let events = MetricFamily(
        "events_total", .counter, labels: [Label.key, Label.kind], help: "Resilience events by key and kind.")
    /// Finished attempts by outcome and failure category.
    public static let attempts = MetricFamily(
        "attempts_total", .counter, labels: [Label.key, Label.category, Label.outcome],
        help: "Finished attempts by outcome and failure category.")
    /// Latency of succeeded and failed attempts.
    public static let attemptDuration = MetricFamily(
        "attempt_duration_seconds", .histogram, labels: [Label.key],
        help: "Latency of succeeded and failed attempts, in seconds.")
    /// Attempts started and not yet finished.
    public static let attemptsInFlight = MetricFamily(
        "attempts_in_flight", .gauge, labels: [Label.key], help: "Attempts started and not yet finished.")
    /// Scheduled retries by the failure that caused them.
    public static let retries = MetricFamily(
        "retries_total", .counter, labels: [Label.key, Label.category],
        help: "Retries scheduled, by the failure category that caused them.")
    /// Calls rejected before they were sent.
    public static let rejections = MetricFamily(
        "rejections_total", .counter, labels: [Label.key, Label.reason],
        help:
            "Calls rejected before they were sent: open breaker, limiter refusal (not a wait), exhausted retry budget."
    )
    /// The circuit breaker's state, one series per state.
    public static let breakerState = MetricFamily(
        "breaker_state", .gauge, labels: [Label.key, Label.state],
        help: "1 for the circuit breaker's current state, 0 for the others.")
    /// Whole operations (every attempt and retry delay included) by outcome.
    public static let operations = MetricFamily(
        "operations_total", .counter, labels: [Label.key, Label.category, Label.outcome],
        help: "Finished operations, retries included, by outcome and failure category.", feed: .operationStage)
    /// How long whole operations took.
    public static let operationDuration = MetricFamily(
        "operation_duration_seconds", .histogram, labels: [Label.key, Label.outcome],
        help: "Duration of whole operations, retries included, in seconds.", feed: .operationStage)
    /// Events the telemetry recorder received.
    public static let recorderEventsReceived = MetricFamily(
        "recorder_events_received_total", .counter, labels: [], help: "Events received by the recorder.",
        feed: .recorder)
    /// Records the telemetry recorder overwrote.
    public static let recorderRecordsEvicted = MetricFamily(
        "recorder_records_evicted_total", .counter, labels: [],
        help: "Records overwritten because the recorder's ring was full.", feed: .recorder)
    /// Records the telemetry recorder holds.
    public static let recorderRecords = MetricFamily(
        "recorder_records", .gauge, labels: [], help: "Records currently held by the recorder.", feed: .recorder)

    /// Every family, in the order exporters emit them.
    public static let all: [MetricFamily] = [
        events, attempts, attemptDuration, attemptsInFlight, retries, rejections, breakerState, operations,
        operationDuration, recorderEventsReceived, recorderRecordsEvicted, recorderRecords,
    ]

    /// The event kinds counted in ``rejections``; the `reason` label is the kind's raw value. Only the events of
    /// these kinds for which ``isRejection(_:)`` holds are counted.
    public static let rejectionKinds: [ResilienceEventKind] = [.breakerRejected, .rateLimited, .budgetExhausted]

    /// Whether `event` rejected its call before it was sent: a breaker's rejection, an exhausted retry budget, or
    /// a limiter's refusal. A `rate-limited` event whose call waits for a permit (``ResilienceEvent/limiterWaiting``,
    /// ``ResilienceEvent/limiterQueued``) rejected nothing.
    ///
    /// - Parameter event: The event.
    public static func isRejection(_ event: ResilienceEvent) -> Bool {
        guard rejectionKinds.contains(event.kind) else { return false }
        guard event.kind == .rateLimited else { return true }
        return event.detail != ResilienceEvent.limiterWaiting && event.detail != ResilienceEvent.limiterQueued
    }

    /// The `state` label of a breaker state: `closed`, `half_open`, `open`, `isolated`.
    public static func breakerStateLabel(_ state: BreakerState) -> String {
        switch state {
        case .closed: "closed"
        case .halfOpen: "half_open"
        case .open: "open"
        case .isolated: "isolated"
        }
    }

    /// The `category` and `outcome` labels of a finished attempt or operation: `none`/`success` for `nil`,
    /// the category and `cancelled` for a cancellation, else the category and `failure`.
    ///
    /// - Parameter failure: How it failed, or `nil` for a success.
    public static func outcomeLabels(_ failure: FailureClassification?) -> (category: String, outcome: String) {
        guard let failure else { return (noCategory, Outcome.success) }
        return (failure.category.rawValue, failure.category == .cancelled ? Outcome.cancelled : Outcome.failure)
    }

    /// The schema as a Markdown table (name, type, labels, fed by, meaning), as `Docs/Telemetry.md` shows it.
    ///
    /// - Parameter prefix: The namespace prefix of the names shown.
    public static func markdownTable(prefix: String = defaultPrefix) -> String {
        var lines = ["| metric | type | labels | fed by | meaning |", "|---|---|---|---|---|"]
        for family in all {
            let labels = family.labels.isEmpty ? "" : family.labels.map { "`\($0)`" }.joined(separator: ", ")
            lines.append(
                "| `\(family.name(prefix: prefix))` | \(family.kind.rawValue) | \(labels) | \(family.feed.rawValue) "
                    + "| \(family.help) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
