import ResilienceCore

/// Renders a recorder's cumulative metrics in the Prometheus text exposition format (version 0.0.4), ready
/// to serve on `/metrics` with ``contentType``.
///
/// The families, names and labels are ``MetricSchema``'s, the same the swift-metrics integration emits
/// (`Docs/Telemetry.md` lists them): every family fed by events (`resilience_events_total{key,kind}`,
/// `resilience_attempts_total{key,category,outcome}`, the `resilience_attempt_duration_seconds{key}`
/// histogram, `resilience_attempts_in_flight{key}`, `resilience_retries_total{key,category}`,
/// `resilience_rejections_total{key,reason}`, `resilience_breaker_state{key,state}`) and the recorder's own.
/// The operation families need the swift-metrics integration's operation stage and are not rendered.
///
/// A key's breaker has four series, 1 for its current state and 0 for the others, from its pipeline's
/// creation (``ResilienceEventKind/pipelineCreated``) or its first transition; the keys past the recorder's name
/// limit, counted as `other`, have none. Histogram bucket counts come
/// from the log-bucketed ``LatencyHistogram`` (within its 12.5 % resolution).
///
/// Output is sorted, so equal metrics render identically. Label values are redacted and escaped.
public struct PrometheusExporter: Sendable {
    /// The `Content-Type` to serve the text with.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The metric name prefix. Each character a Prometheus metric name cannot hold (anything but ASCII letters,
    /// digits, `_` and `:`, or a leading digit) becomes `_`, whether passed to the initializer or set here, as
    /// swift-prometheus writes the swift-metrics sink's names: `job-board` renders `job_board_events_total`.
    public var namespace: String {
        didSet { namespace = Self.metricName(namespace) }
    }
    /// The histogram's upper bounds in seconds, ascending (`+Inf` is added). Bounds that are not finite or are
    /// negative are dropped and the rest sorted, whether passed to the initializer or set here.
    public var latencyBuckets: [Double] {
        didSet { latencyBuckets = Self.usableBounds(latencyBuckets) }
    }
    /// The redactor applied to label values.
    public var redactor: Redactor

    /// Creates an exporter.
    ///
    /// - Parameters:
    ///   - namespace: The metric name prefix (characters a metric name cannot hold become `_`). Default:
    ///     `"resilience"`.
    ///   - latencyBuckets: The histogram's upper bounds in seconds, ascending (`+Inf` is added).
    ///   - redactor: The redactor applied to label values. Default: `.standard`.
    public init(
        namespace: String = "resilience",
        latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        redactor: Redactor = .standard
    ) {
        self.namespace = Self.metricName(namespace)
        self.latencyBuckets = Self.usableBounds(latencyBuckets)
        self.redactor = redactor
    }

    /// The exposition text for `metrics`, ending in a newline.
    public func render(_ metrics: TelemetryMetrics) -> String {
        var out = ""
        let keys = metrics.sources.sorted { $0.key < $1.key }
        counters(&out, MetricSchema.events, keys, by: \.eventCounts)
        family(&out, MetricSchema.attempts)
        for (key, value) in keys {
            for (category, outcome, count) in Self.attemptRows(value) where count > 0 {
                sample(&out, MetricSchema.attempts, [key, category, outcome], "\(count)")
            }
        }
        family(&out, MetricSchema.attemptDuration)
        for (key, value) in keys where value.latency.totalCount > 0 {
            histogram(&out, key: key, value.latency)
        }
        family(&out, MetricSchema.attemptsInFlight)
        for (key, value) in keys where value.eventCounts[.attemptStarted] != nil {
            sample(&out, MetricSchema.attemptsInFlight, [key], "\(value.attemptsInFlight)")
        }
        counters(&out, MetricSchema.retries, keys, by: \.retryCounts)
        family(&out, MetricSchema.rejections)
        for (key, value) in keys {
            for kind in MetricSchema.rejectionKinds.sorted(by: { $0.rawValue < $1.rawValue }) {
                guard let count = value.rejectionCounts[kind] else { continue }
                sample(&out, MetricSchema.rejections, [key, kind.rawValue], "\(count)")
            }
        }
        family(&out, MetricSchema.breakerState)
        for (key, value) in keys {
            guard let current = value.breakerState else { continue }
            let states = BreakerState.allCases.map { (MetricSchema.breakerStateLabel($0), $0 == current) }
            for (state, isCurrent) in states.sorted(by: { $0.0 < $1.0 }) {
                sample(&out, MetricSchema.breakerState, [key, state], isCurrent ? "1" : "0")
            }
        }
        family(&out, MetricSchema.recorderEventsReceived)
        sample(&out, MetricSchema.recorderEventsReceived, [], "\(metrics.eventsReceived)")
        family(&out, MetricSchema.recorderRecordsEvicted)
        sample(&out, MetricSchema.recorderRecordsEvicted, [], "\(metrics.recordsEvicted)")
        family(&out, MetricSchema.recorderRecords)
        sample(&out, MetricSchema.recorderRecords, [], "\(metrics.recordsHeld)")
        return out
    }

    /// The `attempts_total` rows of one key: (category, outcome, count), sorted by category.
    private static func attemptRows(_ metrics: SourceMetrics) -> [(String, String, UInt64)] {
        var rows: [(String, String, UInt64)] = []
        rows.append(
            (MetricSchema.noCategory, MetricSchema.Outcome.success, metrics.eventCounts[.attemptSucceeded] ?? 0))
        for (category, count) in metrics.failureCounts {
            let outcome = category == .cancelled ? MetricSchema.Outcome.cancelled : MetricSchema.Outcome.failure
            rows.append((category.rawValue, outcome, count))
        }
        let cancelled = metrics.eventCounts[.attemptCancelled] ?? 0
        if cancelled > 0 {
            if let index = rows.firstIndex(where: { $0.0 == FailureCategory.cancelled.rawValue }) {
                rows[index].2 += cancelled
            } else {
                rows.append((FailureCategory.cancelled.rawValue, MetricSchema.Outcome.cancelled, cancelled))
            }
        }
        return rows.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
    }

    private func histogram(_ out: inout String, key: String, _ latency: LatencyHistogram) {
        let family = MetricSchema.attemptDuration
        for bound in latencyBuckets {
            // Bounds past UInt64.max microseconds (1e300) take every recorded latency.
            let microseconds = (bound * 1_000_000).rounded(.down)
            let limit = microseconds < 0x1p64 ? UInt64(max(0, microseconds)) : .max
            let count = latency.count(atOrBelowMicroseconds: limit)
            sample(&out, family, [key], "\(count)", suffix: "_bucket", le: Self.number(bound))
        }
        sample(&out, family, [key], "\(latency.totalCount)", suffix: "_bucket", le: "+Inf")
        sample(&out, family, [key], Self.number(Double(latency.sumMicroseconds) / 1_000_000), suffix: "_sum")
        sample(&out, family, [key], "\(latency.totalCount)", suffix: "_count")
    }

    /// `family` (labelled by key and one name) with each key's counts from `counts`, sorted by name.
    private func counters<Name: RawRepresentable>(
        _ out: inout String, _ family: MetricFamily, _ keys: [(key: String, value: SourceMetrics)],
        by counts: (SourceMetrics) -> [Name: UInt64]
    ) where Name.RawValue == String {
        self.family(&out, family)
        for (key, value) in keys {
            for (name, count) in counts(value).sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                sample(&out, family, [key, name.rawValue], "\(count)")
            }
        }
    }

    private func family(_ out: inout String, _ family: MetricFamily) {
        let name = family.name(prefix: namespace)
        out += "# HELP \(name) \(TextEscaping.prometheusHelp(family.help))\n"
        out += "# TYPE \(name) \(family.kind.rawValue)\n"
    }

    /// One sample of `family` with its labels' `values` (in the family's label order), and `le` for a bucket.
    private func sample(
        _ out: inout String, _ family: MetricFamily, _ values: [String], _ value: String, suffix: String = "",
        le: String? = nil
    ) {
        out += family.name(prefix: namespace) + suffix
        var labels = zip(family.labels, values).map { ($0, redactor.redact($1)) }
        if let le { labels.append(("le", le)) }
        if !labels.isEmpty {
            let rendered = labels.map { "\($0.0)=\"\(TextEscaping.prometheusLabel($0.1))\"" }
            out += "{" + rendered.joined(separator: ",") + "}"
        }
        out += " \(value)\n"
    }

    /// `name` with every character a metric name cannot hold replaced by `_`: a Prometheus server fails the whole
    /// scrape on one invalid name.
    private static func metricName(_ name: String) -> String {
        var result = ""
        for character in name {
            let valid =
                character.isASCII
                && (character.isLetter || character == "_" || character == ":"
                    || (character.isWholeNumber && !result.isEmpty))
            result.append(valid ? character : "_")
        }
        return result
    }

    /// `bounds` without the ones that are not finite or are negative, ascending.
    private static func usableBounds(_ bounds: [Double]) -> [Double] {
        bounds.filter { $0.isFinite && $0 >= 0 }.sorted()
    }

    /// A float as Prometheus expects it (`0.005`, `1`, `2.5`).
    static func number(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
