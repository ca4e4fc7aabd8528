import ResilienceCore

/// Statistics over a window of recorded events: error rates per source, retry success,
/// category and code distribution, breaker behaviour and latency percentiles.
///
/// Computed from a snapshot, never on the hot path. Definitions:
/// - *error rate*: failed attempts ÷ finished attempts; *errors per minute*: failed attempts ÷ window minutes;
/// - *retry success rate*: of finished retry attempts (attempt number ≥ 2), the fraction that succeeded;
/// - *partial failure rate*: fetches that ended with some but not all sources (`fetch-completed` with
///   `count < total`, or `partial-results` when larger) ÷ fetches (`fetch-completed`);
/// - *breaker state, opens and time open*: from a key's transitions in the order its breaker made them, not
///   the order received (transitions are emitted after the breaker's lock is released, so they can arrive in
///   another order): by ``BreakerTransition/sequence``, equal ones and unnumbered ones in the order received.
///   A ``ResilienceEventKind/pipelineCreated`` event with a transition starts the key's breaker over (its
///   sequence restarts at 0): it ends an open period at its time, and the transitions received after it are
///   ordered among themselves, after every one received before it. Transitions name no breaker, so one of the
///   replaced breaker that arrives after the new pipeline's creation is taken as the new breaker's.
public struct TelemetryStatistics: Sendable, Hashable {
    /// A failure code and how often it occurred.
    public struct CodeCount: Sendable, Hashable {
        /// The code.
        public var code: FailureCode
        /// How often.
        public var count: Int
        /// Creates a pair.
        ///
        /// - Parameters:
        ///   - code: The failure code counted.
        ///   - count: How many events in the window carried it.
        public init(code: FailureCode, count: Int) {
            self.code = code
            self.count = count
        }
    }

    /// When the statistics were computed.
    public var now: ResilienceInstant
    /// The window they cover, ending at ``now``.
    public var window: Duration
    /// Per key.
    public var sources: [String: SourceStatistics] = [:]
    /// Finished retry attempts (attempt ≥ 2).
    public var retryAttempts = 0
    /// Retry attempts that succeeded.
    public var retrySuccesses = 0
    /// Failures by category.
    public var categoryDistribution: [FailureCategory: Int] = [:]
    /// Failures by code.
    public var errorCountsByCode: [FailureCode: Int] = [:]
    /// Fetches over all sources (`fetch-completed` events).
    public var fetches = 0
    /// Fetches with partial results.
    public var partialFetches = 0
    /// Blocked plaintext requests.
    public var insecureTransportBlocks = 0

    /// Computes the statistics of `events` inside `window` ending at `now`.
    ///
    /// - Parameters:
    ///   - events: The events to summarise; those outside the window are ignored.
    ///   - now: When the statistics were computed.
    ///   - window: The window they cover, ending at ``now``.
    public init(events: [ResilienceEvent], now: ResilienceInstant, window: Duration) {
        self.now = now
        self.window = window
        let start = now.advanced(by: .zero - window)
        var histograms: [String: LatencyHistogram] = [:]
        var transitions: [String: [ResilienceEvent]] = [:]
        var partialEvents = 0
        var partialCompletions = 0
        let minuteCount = Self.minuteCount(window)
        for event in events where event.time >= start && event.time <= now {
            var source = sources[event.key] ?? SourceStatistics()
            switch event.kind {
            case .attemptSucceeded, .attemptFailed:
                let succeeded = event.kind == .attemptSucceeded
                source.attempts += 1
                if succeeded {
                    source.successes += 1
                    source.lastSuccess = event.time
                    source.failingSince = nil
                } else {
                    source.failures += 1
                    if source.failingSince == nil { source.failingSince = event.time }
                    countFailure(event.classification)
                    if source.failuresByMinute.isEmpty {
                        source.failuresByMinute = Array(repeating: 0, count: minuteCount)
                    }
                    let minutesAgo = Int(event.time.duration(to: now).components.seconds / 60)
                    if minutesAgo < minuteCount { source.failuresByMinute[minuteCount - 1 - minutesAgo] += 1 }
                }
                if event.attempt >= 2 {
                    retryAttempts += 1
                    if succeeded { retrySuccesses += 1 }
                }
                if let duration = event.duration { histograms[event.key, default: LatencyHistogram()].record(duration) }
            case .sourceFailed:
                source.sourceFailures += 1
                if source.failingSince == nil { source.failingSince = event.time }
            case .retryScheduled:
                source.retries += 1
            case .breakerTransition, .pipelineCreated:
                // A pipeline created without a breaker (no transition) ends the key's breaker state.
                if event.transition != nil || event.kind == .pipelineCreated {
                    transitions[event.key, default: []].append(event)
                }
            case .insecureTransportBlocked:
                insecureTransportBlocks += 1
            case .fetchCompleted:
                fetches += 1
                if let count = event.count, let total = event.total, count < total, count > 0 {
                    partialCompletions += 1
                }
            case .partialResults:
                partialEvents += 1
            default:
                break
            }
            sources[event.key] = source
        }
        for (key, received) in transitions {
            Self.replay(
                Self.inOrderMade(received), into: &sources[key, default: SourceStatistics()], from: start, to: now)
        }
        for (key, histogram) in histograms { sources[key]?.latency = LatencySummary(histogram) }
        let minutes = max(Double(window.components.seconds) / 60, 1.0 / 60)
        for key in Array(sources.keys) {
            let failures = sources[key]?.failures ?? 0
            sources[key]?.errorsPerMinute = Double(failures) / minutes
        }
        partialFetches = max(partialEvents, partialCompletions)
    }

    /// One key's transitions (`breaker-transition` and `pipeline-created` events, as received) in the order its
    /// breakers made them: split where a pipeline was created, each part ordered by sequence; equal sequences
    /// and unnumbered transitions keep the order received.
    private static func inOrderMade(_ received: [ResilienceEvent]) -> [ResilienceEvent] {
        var ordered = received
        var partStart = 0
        for index in received.indices.dropFirst() where received[index].kind == .pipelineCreated {
            orderBySequence(&ordered, in: partStart..<index)
            partStart = index
        }
        orderBySequence(&ordered, in: partStart..<received.count)
        return ordered
    }

    /// Orders the numbered transitions in `range` by sequence among the places they hold (stable), leaving the
    /// unnumbered ones and a leading `pipeline-created` event where they are.
    private static func orderBySequence(_ events: inout [ResilienceEvent], in range: Range<Int>) {
        let first = range.first.map { events[$0].kind == .pipelineCreated ? $0 + 1 : $0 } ?? range.lowerBound
        var numbered: [(sequence: UInt64, place: Int)] = []
        for place in first..<range.upperBound {
            if let sequence = events[place].transition?.sequence { numbered.append((sequence, place)) }
        }
        let byOrderMade = numbered.sorted { ($0.sequence, $0.place) < ($1.sequence, $1.place) }.map { events[$0.place] }
        for (slot, event) in zip(numbered, byOrderMade) { events[slot.place] = event }
    }

    /// Sets `source`'s breaker state, opens and time open (within `start...now`) from its transitions in the
    /// order made.
    private static func replay(
        _ transitions: [ResilienceEvent], into source: inout SourceStatistics, from start: ResilienceInstant,
        to now: ResilienceInstant
    ) {
        var openSince: ResilienceInstant?
        func endOpenPeriod(at end: ResilienceInstant) {
            // Events stamped before their breaker's lock was taken can be a little out of time order.
            source.timeOpen += max(.zero, (openSince ?? start).duration(to: end))
            openSince = nil
        }
        for event in transitions {
            let startsOver = event.kind == .pipelineCreated
            if startsOver && openSince != nil { endOpenPeriod(at: event.time) }
            guard let transition = event.transition else {
                // A pipeline without a breaker: no state until a breaker's transition comes.
                source.breakerState = nil
                continue
            }
            let wasOpen = !startsOver && (transition.from == .open || transition.from == .isolated)
            let isOpen = transition.to == .open || transition.to == .isolated
            if wasOpen && !isOpen {
                endOpenPeriod(at: event.time)
            } else if isOpen && !wasOpen {
                openSince = event.time
            }
            if transition.to == .open && transition.from != .open { source.breakerOpens += 1 }
            source.breakerState = transition.to
        }
        if openSince != nil { endOpenPeriod(at: now) }
    }

    private static func minuteCount(_ window: Duration) -> Int {
        // At most a day of minutes: a window near `.seconds(Int64.max)` must not overflow rounding up.
        let seconds = min(max(window.components.seconds, 1), 1440 * 60)
        return Int((seconds + 59) / 60)
    }

    private mutating func countFailure(_ classification: FailureClassification?) {
        guard let classification, classification.category != .cancelled else { return }
        categoryDistribution[classification.category, default: 0] += 1
        errorCountsByCode[classification.code, default: 0] += 1
    }

    /// Of finished retry attempts, the fraction that succeeded; `nil` without retries.
    public var retrySuccessRate: Double? {
        retryAttempts == 0 ? nil : Double(retrySuccesses) / Double(retryAttempts)
    }

    /// Failed attempts ÷ finished attempts over every key; `nil` without attempts.
    public var errorRate: Double? {
        let attempts = sources.values.reduce(0) { $0 + $1.attempts }
        let failures = sources.values.reduce(0) { $0 + $1.failures }
        return attempts == 0 ? nil : Double(failures) / Double(attempts)
    }

    /// Partial fetches ÷ fetches; `nil` without fetches.
    public var partialFailureRate: Double? {
        fetches == 0 ? nil : Double(min(partialFetches, fetches)) / Double(fetches)
    }

    /// The most frequent failure code (ties broken alphabetically), if any failed.
    public var mostFrequentError: CodeCount? {
        errorCountsByCode.max { lhs, rhs in
            lhs.value != rhs.value ? lhs.value < rhs.value : lhs.key.rawValue > rhs.key.rawValue
        }.map { CodeCount(code: $0.key, count: $0.value) }
    }
}
