import ResilienceCore

/// Renders a recorder's cumulative metrics in the Prometheus text exposition format (version 0.0.4), ready
/// to serve on `/metrics` with ``contentType``.
///
/// Families (with the default namespace `resilience`):
/// - `resilience_events_total{source,kind}` counter;
/// - `resilience_failures_total{source,category}` counter;
/// - `resilience_breaker_open{source}` gauge (1 when open or isolated);
/// - `resilience_attempt_duration_seconds{source}` histogram (`_bucket{le=…}`, `_sum`, `_count`); bucket
///   counts come from the log-bucketed ``LatencyHistogram`` (within its 12.5 % resolution);
/// - `resilience_recorder_events_received_total`, `resilience_recorder_records_evicted_total` counters and
///   `resilience_recorder_records` gauge.
///
/// Output is sorted, so equal metrics render identically. Label values are redacted and escaped.
public struct PrometheusExporter: Sendable {
    /// The `Content-Type` to serve the text with.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The metric name prefix.
    public var namespace: String
    /// The histogram's upper bounds in seconds, ascending (`+Inf` is added).
    public var latencyBuckets: [Double]
    /// The redactor applied to label values.
    public var redactor: Redactor

    /// Creates an exporter.
    ///
    /// - Parameters:
    ///   - namespace: The metric name prefix. Default: `"resilience"`.
    ///   - latencyBuckets: The histogram's upper bounds in seconds, ascending (`+Inf` is added).
    ///   - redactor: The redactor applied to label values. Default: `.standard`.
    public init(
        namespace: String = "resilience",
        latencyBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        redactor: Redactor = .standard
    ) {
        self.namespace = namespace
        self.latencyBuckets = latencyBuckets.filter { $0.isFinite && $0 >= 0 }.sorted()
        self.redactor = redactor
    }

    /// The exposition text for `metrics`, ending in a newline.
    public func render(_ metrics: TelemetryMetrics) -> String {
        var out = ""
        let sources = metrics.sources.sorted { $0.key < $1.key }
        family(&out, "events_total", "counter", "Resilience events by source and kind.")
        for (source, value) in sources {
            for (kind, count) in value.eventCounts.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                sample(&out, "events_total", [("source", source), ("kind", kind.rawValue)], "\(count)")
            }
        }
        family(&out, "failures_total", "counter", "Failed attempts and sources by category.")
        for (source, value) in sources {
            for (category, count) in value.failureCounts.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                sample(&out, "failures_total", [("source", source), ("category", category.rawValue)], "\(count)")
            }
        }
        family(&out, "breaker_open", "gauge", "1 when the source's circuit breaker is open or isolated.")
        for (source, value) in sources where value.breakerState != nil {
            let open = value.breakerState == .open || value.breakerState == .isolated
            sample(&out, "breaker_open", [("source", source)], open ? "1" : "0")
        }
        family(&out, "attempt_duration_seconds", "histogram", "Attempt latency in seconds.")
        for (source, value) in sources where value.latency.totalCount > 0 {
            histogram(&out, source: source, value.latency)
        }
        family(&out, "recorder_events_received_total", "counter", "Events received by the recorder.")
        sample(&out, "recorder_events_received_total", [], "\(metrics.eventsReceived)")
        family(&out, "recorder_records_evicted_total", "counter", "Records overwritten because the ring was full.")
        sample(&out, "recorder_records_evicted_total", [], "\(metrics.recordsEvicted)")
        family(&out, "recorder_records", "gauge", "Records currently held by the recorder.")
        sample(&out, "recorder_records", [], "\(metrics.recordsHeld)")
        return out
    }

    private func histogram(_ out: inout String, source: String, _ latency: LatencyHistogram) {
        let name = "attempt_duration_seconds"
        for bound in latencyBuckets {
            let limit = UInt64(max(0, (bound * 1_000_000).rounded(.down)))
            let count = latency.count(atOrBelowMicroseconds: limit)
            sample(&out, name + "_bucket", [("source", source), ("le", Self.number(bound))], "\(count)")
        }
        sample(&out, name + "_bucket", [("source", source), ("le", "+Inf")], "\(latency.totalCount)")
        sample(&out, name + "_sum", [("source", source)], Self.number(Double(latency.sumMicroseconds) / 1_000_000))
        sample(&out, name + "_count", [("source", source)], "\(latency.totalCount)")
    }

    private func family(_ out: inout String, _ name: String, _ type: String, _ help: String) {
        out += "# HELP \(namespace)_\(name) \(TextEscaping.prometheusHelp(help))\n"
        out += "# TYPE \(namespace)_\(name) \(type)\n"
    }

    private func sample(_ out: inout String, _ name: String, _ labels: [(String, String)], _ value: String) {
        out += "\(namespace)_\(name)"
        if !labels.isEmpty {
            let rendered = labels.map { "\($0.0)=\"\(TextEscaping.prometheusLabel(redactor.redact($0.1)))\"" }
            out += "{" + rendered.joined(separator: ",") + "}"
        }
        out += " \(value)\n"
    }

    /// A float as Prometheus expects it (`0.005`, `1`, `2.5`).
    static func number(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
