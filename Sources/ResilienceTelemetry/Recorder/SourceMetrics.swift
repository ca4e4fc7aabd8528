import ResilienceCore

/// Cumulative metrics for one key since the recorder was created: what a Prometheus scrape reports.
public struct SourceMetrics: Sendable, Hashable {
    /// Events by kind.
    public var eventCounts: [ResilienceEventKind: UInt64] = [:]
    /// Failed attempts by category (`unknown` for one reported without a classification).
    public var failureCounts: [FailureCategory: UInt64] = [:]
    /// Scheduled retries by the category of the failure that caused them (`none` when it had none).
    public var retryCounts: [FailureCategory: UInt64] = [:]
    /// Calls rejected before they were sent, by the kind of the event that rejected them
    /// (``MetricSchema/isRejection(_:)``: a limiter that made a call wait rejected nothing).
    public var rejectionCounts: [ResilienceEventKind: UInt64] = [:]
    /// Latencies of succeeded and failed attempts.
    public var latency = LatencyHistogram()
    /// The breaker's state after its latest transition, if any: the one with the largest
    /// ``BreakerTransition/sequence`` since the key's last ``ResilienceEventKind/pipelineCreated`` event, which
    /// starts the new breaker's sequence over (unnumbered transitions: the one received last); `nil` when that
    /// event announced a pipeline without a breaker.
    public var breakerState: BreakerState?
    /// The first failure (failed attempt or `source-failed`) since the key's last succeeded attempt, while it has
    /// had none since; `nil` when it has not failed since its last success. Kept since creation, whatever the
    /// ring has evicted, so a key failing for hours under load says so.
    public var failingSince: ResilienceInstant?
    /// When the key was last tried: its latest finished attempt or `source-failed` event. Kept since creation, so
    /// the health rules count a key that is called rarely among busy ones, whose events the ring no longer holds.
    public var lastTried: ResilienceInstant?
    /// Whether a `source-failed` event (a fetch that failed after its retries and fallbacks) came after the key's
    /// last succeeded attempt: its last fetch failed and it has not succeeded since. Kept since creation.
    public var lastFetchFailed = false

    /// Creates empty metrics.
    public init() {}

    /// Attempts started and not yet finished (succeeded, failed or cancelled).
    public var attemptsInFlight: UInt64 {
        let started = eventCounts[.attemptStarted, default: 0]
        let finished =
            eventCounts[.attemptSucceeded, default: 0] + eventCounts[.attemptFailed, default: 0]
            + eventCounts[.attemptCancelled, default: 0]
        return started > finished ? started - finished : 0
    }

    /// Adds `other`'s counts (used when keys beyond the recorder's name limit are folded into `"other"`).
    public mutating func merge(_ other: SourceMetrics) {
        // Failing since the earlier of two failing streaks; a succeeding part makes the whole one succeeding.
        failingSince =
            switch (failingSince, other.failingSince) {
            case (let mine?, let theirs?): min(mine, theirs)
            case (let mine?, nil): other.eventCounts[.attemptSucceeded] == nil ? mine : nil
            case (nil, let theirs?): eventCounts[.attemptSucceeded] == nil ? theirs : nil
            case (nil, nil): nil
            }
        // A fetch failed in the merged streak (a succeeding part ended the whole streak above).
        lastFetchFailed = failingSince != nil && (lastFetchFailed || other.lastFetchFailed)
        lastTried =
            switch (lastTried, other.lastTried) {
            case (let mine?, let theirs?): max(mine, theirs)
            case (let mine, let theirs): mine ?? theirs
            }
        eventCounts.merge(other.eventCounts, uniquingKeysWith: +)
        failureCounts.merge(other.failureCounts, uniquingKeysWith: +)
        retryCounts.merge(other.retryCounts, uniquingKeysWith: +)
        rejectionCounts.merge(other.rejectionCounts, uniquingKeysWith: +)
        latency.merge(other.latency)
        breakerState = other.breakerState ?? breakerState
    }
}

/// A point-in-time copy of the recorder's cumulative metrics.
public struct TelemetryMetrics: Sendable, Hashable {
    /// Metrics per key (source id or host).
    public var sources: [String: SourceMetrics]
    /// Events received since creation.
    public var eventsReceived: UInt64
    /// Records overwritten because the ring was full.
    public var recordsEvicted: UInt64
    /// Records currently held.
    public var recordsHeld: Int

    /// Creates a snapshot.
    ///
    /// - Parameters:
    ///   - sources: Metrics per key (source id or host).
    ///   - eventsReceived: Events received since creation.
    ///   - recordsEvicted: Records overwritten because the ring was full.
    ///   - recordsHeld: Records currently held.
    public init(sources: [String: SourceMetrics], eventsReceived: UInt64, recordsEvicted: UInt64, recordsHeld: Int) {
        self.sources = sources
        self.eventsReceived = eventsReceived
        self.recordsEvicted = recordsEvicted
        self.recordsHeld = recordsHeld
    }
}
