import ResilienceCore

/// One alert rule: looks at a ``HealthInput`` and returns an alert when its condition holds.
///
/// Rules are values; a rule set is an array of them. Build the standard set with ``standard(_:)``, drop or
/// replace rules, or add your own with ``init(id:severity:evaluate:)``.
public struct HealthRule: Sendable {
    /// The rule's identifier, unique in a set.
    public var id: String
    /// The severity of the alerts it raises.
    public var severity: HealthSeverity
    /// The condition; returns an alert when it holds.
    public var evaluate: @Sendable (HealthInput) -> HealthAlert?

    /// Creates a rule.
    ///
    /// - Parameters:
    ///   - id: The rule's identifier, unique in a set.
    ///   - severity: The severity of the alerts it raises.
    ///   - evaluate: The condition; returns an alert when it holds.
    public init(id: String, severity: HealthSeverity, evaluate: @escaping @Sendable (HealthInput) -> HealthAlert?) {
        self.id = id
        self.severity = severity
        self.evaluate = evaluate
    }

    /// The standard rules with `thresholds`: three critical, four warning, three info.
    public static func standard(_ thresholds: HealthThresholds = .standard) -> [HealthRule] {
        [
            .allSourcesFailing(for: thresholds.allSourcesFailingFor),
            .errorRate(
                above: thresholds.criticalErrorRate, for: thresholds.criticalErrorRateFor, severity: .critical,
                minimumAttempts: thresholds.minimumAttempts),
            .everyBreakerOpen(),
            .sourcesFailing(for: thresholds.sourceFailingFor),
            .errorRate(
                above: thresholds.warningErrorRate, for: thresholds.warningErrorRateFor, severity: .warning,
                minimumAttempts: thresholds.minimumAttempts),
            .retrySuccessRate(
                below: thresholds.minimumRetrySuccessRate, over: thresholds.ratioWindow,
                minimumRetries: thresholds.minimumRetries),
            .partialFailureRate(
                above: thresholds.maximumPartialFailureRate, over: thresholds.ratioWindow,
                minimumFetches: thresholds.minimumFetches),
            .breakerOpened(within: thresholds.recentWindow),
            .insecureTransportBlocked(within: thresholds.recentWindow),
            .retrySucceededAfterFailures(within: thresholds.recentWindow),
        ]
    }

    /// Critical: every source that was tried has had no success for longer than `duration`. When each started
    /// failing comes from ``HealthInput/failingSince(of:statistics:)``: the recorder's cumulative state, so the
    /// rule fires however little of the streak the ring still holds (a busy server's ring may hold seconds).
    public static func allSourcesFailing(for duration: Duration) -> HealthRule {
        HealthRule(id: "all-sources-failing", severity: .critical) { input in
            let sources = input.triedSources()
            guard !sources.isEmpty else { return nil }
            let limit = input.now.advanced(by: .zero - duration)
            let failing = sources.filter { key, source in
                input.failingSince(of: key, statistics: source).map { $0 <= limit } ?? false
            }
            guard failing.count == sources.count else { return nil }
            return HealthAlert(
                rule: "all-sources-failing", severity: .critical,
                message: "All \(sources.count) sources have been failing for more than \(describe(duration))",
                keys: Array(sources.keys))
        }
    }

    /// Warning: some (not every) source whose last fetch failed has had no success since, for at least
    /// `duration`. With every source failing, ``allSourcesFailing(for:)`` speaks instead.
    public static func sourcesFailing(for duration: Duration) -> HealthRule {
        HealthRule(id: "sources-failing", severity: .warning) { input in
            let sources = input.triedSources()
            let limit = input.now.advanced(by: .zero - duration)
            let failing = sources.filter { key, source in
                (source.sourceFailures > 0 || input.fetchFailingKeys.contains(key))
                    && (input.failingSince(of: key, statistics: source).map { $0 <= limit } ?? false)
            }
            guard !failing.isEmpty, failing.count < sources.count else { return nil }
            let keys = failing.keys.sorted()
            return HealthAlert(
                rule: "sources-failing", severity: .warning,
                message: "\(failing.count) of \(sources.count) sources are failing: \(keys.joined(separator: ", "))",
                keys: keys)
        }
    }

    /// Fires when the error rate stays above `threshold` for `duration`: over the whole trailing window and
    /// in each of its halves (so a short burst does not count as sustained). Counts come from
    /// ``HealthInput/ratioCounts(over:endingBefore:)``, so the rule holds at any event rate.
    public static func errorRate(
        above threshold: Double, for duration: Duration, severity: HealthSeverity, minimumAttempts: Int
    ) -> HealthRule {
        let id = "error-rate-\(severity)"
        return HealthRule(id: id, severity: severity) { input in
            let whole = input.ratioCounts(over: duration)
            let half = duration / 2
            let early = input.ratioCounts(over: half, endingBefore: half)
            let late = input.ratioCounts(over: half)
            guard let rate = whole.errorRate, let earlyRate = early.errorRate, let lateRate = late.errorRate,
                whole.attempts >= minimumAttempts, rate > threshold, earlyRate > threshold,
                lateRate > threshold
            else { return nil }
            let failing = whole.attemptsByKey.keys.filter { (whole.errorRate(of: $0) ?? 0) > threshold }.sorted()
            return HealthAlert(
                rule: id, severity: severity,
                message:
                    "Error rate \(percent(rate)) over the last \(describe(duration)) (limit \(percent(threshold)))",
                keys: failing, value: rate)
        }
    }

    /// Critical: every source that was tried (or has a breaker) has its breaker open or isolated.
    public static func everyBreakerOpen() -> HealthRule {
        HealthRule(id: "every-breaker-open", severity: .critical) { input in
            let keys = Set(input.breakerStates.keys).union(input.triedSources().keys)
            guard !keys.isEmpty else { return nil }
            let open = keys.filter { input.breakerStates[$0] == .open || input.breakerStates[$0] == .isolated }
            guard open.count == keys.count else { return nil }
            return HealthAlert(
                rule: "every-breaker-open", severity: .critical,
                message: "The circuit breaker is open for all \(keys.count) sources", keys: Array(keys))
        }
    }

    /// Warning: fewer than `threshold` of at least `minimumRetries` retries succeeded within `window` (counted
    /// by ``HealthInput/ratioCounts(over:endingBefore:)``).
    public static func retrySuccessRate(
        below threshold: Double, over window: Duration, minimumRetries: Int
    )
        -> HealthRule
    {
        HealthRule(id: "retry-success-low", severity: .warning) { input in
            let stats = input.ratioCounts(over: window)
            guard stats.retryAttempts >= minimumRetries, let rate = stats.retrySuccessRate, rate < threshold
            else { return nil }
            return HealthAlert(
                rule: "retry-success-low", severity: .warning,
                message:
                    "Only \(percent(rate)) of \(stats.retryAttempts) retries succeeded (minimum \(percent(threshold)))",
                value: rate)
        }
    }

    /// Warning: more than `threshold` of at least `minimumFetches` fetches were partial within `window` (counted
    /// by ``HealthInput/ratioCounts(over:endingBefore:)``).
    public static func partialFailureRate(
        above threshold: Double, over window: Duration, minimumFetches: Int
    )
        -> HealthRule
    {
        HealthRule(id: "partial-failures-high", severity: .warning) { input in
            let stats = input.ratioCounts(over: window)
            guard stats.fetches >= minimumFetches, let rate = stats.partialFailureRate, rate > threshold
            else { return nil }
            return HealthAlert(
                rule: "partial-failures-high", severity: .warning,
                message:
                    "\(percent(rate)) of \(stats.fetches) fetches had partial results (limit \(percent(threshold)))",
                value: rate)
        }
    }

    /// Info: a breaker opened within `window`.
    public static func breakerOpened(within window: Duration) -> HealthRule {
        HealthRule(id: "breaker-opened", severity: .info) { input in
            let opened = input.statistics(over: window).sources.filter { $0.value.breakerOpens > 0 }
            guard !opened.isEmpty else { return nil }
            let total = opened.values.reduce(0) { $0 + $1.breakerOpens }
            return HealthAlert(
                rule: "breaker-opened", severity: .info,
                message: "Circuit breaker opened \(total) time(s) for \(opened.keys.sorted().joined(separator: ", "))",
                keys: Array(opened.keys), value: Double(total))
        }
    }

    /// Info: plaintext requests were blocked within `window`.
    public static func insecureTransportBlocked(within window: Duration) -> HealthRule {
        HealthRule(id: "insecure-transport-blocked", severity: .info) { input in
            let stats = input.statistics(over: window)
            guard stats.insecureTransportBlocks > 0 else { return nil }
            let keys = Set(
                input.events.filter { $0.kind == .insecureTransportBlocked && $0.time >= input.now - window }.map(
                    \.key))
            return HealthAlert(
                rule: "insecure-transport-blocked", severity: .info,
                message: "\(stats.insecureTransportBlocks) insecure (http://) request(s) blocked",
                keys: Array(keys), value: Double(stats.insecureTransportBlocks))
        }
    }

    /// Info: a retry succeeded after failures within `window`.
    public static func retrySucceededAfterFailures(within window: Duration) -> HealthRule {
        HealthRule(id: "retry-succeeded", severity: .info) { input in
            let stats = input.statistics(over: window)
            guard stats.retrySuccesses > 0 else { return nil }
            let keys = Set(
                input.events.filter { $0.kind == .attemptSucceeded && $0.attempt >= 2 && $0.time >= input.now - window }
                    .map(\.key))
            return HealthAlert(
                rule: "retry-succeeded", severity: .info,
                message: "\(stats.retrySuccesses) request(s) succeeded after retrying", keys: Array(keys),
                value: Double(stats.retrySuccesses))
        }
    }

    /// `value` as a whole percentage (`0.25` → `25%`); a configured threshold no `Int` holds (±1e300, ±infinity,
    /// NaN) is written as the `Double` it is, instead of trapping in the conversion.
    static func percent(_ value: Double) -> String {
        let scaled = (value * 100).rounded()
        guard scaled.magnitude < 1e15 else { return "\(scaled)%" }
        return "\(Int(scaled))%"
    }

    static func describe(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        if seconds >= 60 && seconds % 60 == 0 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }
}

extension ResilienceInstant {
    fileprivate static func - (lhs: ResilienceInstant, rhs: Duration) -> ResilienceInstant {
        lhs.advanced(by: .zero - rhs)
    }
}

/// A window long enough to cover every recorded event (a year).
private let everything: Duration = .seconds(31_536_000)

extension HealthInput {
    /// Every key tried (a finished attempt or a `source-failed` event) among ``events`` or in ``triedKeys``, with
    /// its statistics over the events (empty for a key they no longer hold).
    fileprivate func triedSources() -> [String: SourceStatistics] {
        var sources = statistics(over: everything).sources.filter {
            $0.value.attempts > 0 || $0.value.sourceFailures > 0
        }
        for key in triedKeys where sources[key] == nil { sources[key] = SourceStatistics() }
        return sources
    }
}
