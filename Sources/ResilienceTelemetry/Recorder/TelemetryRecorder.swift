import ResilienceCore

/// A bounded, lock-protected record of recent events, with statistics, health and exporters working off
/// snapshots of it.
///
/// ``receive(_:)`` is an O(1) append under a small lock (plus the pruning of expired records, amortised
/// O(1)): it never waits for a consumer, so a slow exporter never slows a request. The ring holds at most
/// ``Configuration/capacity`` records (1,000 by default) from the last ``Configuration/window`` (one hour by
/// default, on the injected clock). Strings are interned and details truncated, so 1,000 records take about
/// 72 KB plus their short details (see ``memoryFootprint()``). Details, keys and operations are redacted
/// before they are stored; failure messages are not stored at all. A key's breaker state is its transition with
/// the largest ``BreakerTransition/sequence`` (see ``TelemetryStatistics``), whatever order transitions arrive in.
/// Beside the ring, the recorder counts finished attempts, failures, retries and fetches in fixed time buckets
/// over ``Configuration/rateWindow`` (``recentCounts()``), which the ratio health rules read at any event rate.
///
/// ```swift
/// let recorder = TelemetryRecorder(clock: clock)
/// let stats = recorder.statistics()
/// let text = PrometheusExporter().render(recorder.metrics())
/// ```
public final class TelemetryRecorder: TelemetrySink {
    /// How much the recorder keeps.
    public struct Configuration: Sendable, Hashable {
        /// The most records held (oldest are overwritten), clamped to 1...1,000,000 (the ring is allocated up
        /// front, 72 bytes a record).
        public var capacity: Int = 1000
        /// How long records are kept.
        public var window: Duration = .seconds(3600)
        /// The most UTF-8 bytes of an event's detail that are kept (zero or less keeps only the `…`).
        public var maximumDetailLength: Int = 48
        /// The most distinct keys tracked, and separately the most distinct operations and the most distinct
        /// failure codes (each has a table of its own); later ones count as `"other"`, which has no breaker state.
        /// (Kinds and categories: 64 each, the library's own kinds among them from the start.) Each key costs about 4 KB of cumulative counters and histogram.
        public var maximumDistinctNames: Int = 1024
        /// The redactor applied before anything is stored.
        public var redactor: Redactor = .standard
        /// How far back the recorder counts finished attempts and failures (per key), retries and fetches for
        /// the ratio health rules, in 60 buckets (``RecentCounts``): 15 minutes by default (15-second buckets),
        /// the longest window of ``HealthThresholds/standard``. These counts cover the whole span at any event
        /// rate, however little of it the ring's ``capacity`` records hold; set it to your longest ratio window
        /// (taken between one second and one hour).
        public var rateWindow: Duration = .seconds(900)

        /// Creates a configuration.
        public init() {}

        /// 1,000 records, one hour.
        public static let standard = Configuration()
    }

    /// Distinct event kinds and failure categories tracked (each has its own small table, so per-key
    /// counters are flat arrays indexed by id).
    static let smallTableCapacity = 64

    private struct KeyCounters: Sendable {
        var eventCounts = [UInt64](repeating: 0, count: TelemetryRecorder.smallTableCapacity)
        var failureCounts = [UInt64](repeating: 0, count: TelemetryRecorder.smallTableCapacity)
        var retryCounts = [UInt64](repeating: 0, count: TelemetryRecorder.smallTableCapacity)
        /// Rejections, indexed like `MetricSchema.rejectionKinds`.
        var rejectionCounts = [UInt64](repeating: 0, count: MetricSchema.rejectionKinds.count)
        var latency = LatencyHistogram()
        /// The breaker's latest transition: the one with the largest sequence since the key's pipeline was last
        /// created (`BreakerTransition.supersedes`).
        var breakerTransition: BreakerTransition?
        /// The first failure since the last succeeded attempt (nanoseconds), or `noneDuration`.
        var failingSince = StoredRecord.noneDuration
        /// The latest finished attempt or `source-failed` event (nanoseconds), or `noneDuration`.
        var lastTried = StoredRecord.noneDuration
        /// Whether a `source-failed` event came after the last succeeded attempt.
        var lastFetchFailed = false
        /// Finished attempts and failures over the last `rateWindow` (`RecentCounts.KeyField`).
        var recent = CountBuckets(fields: RecentCounts.KeyField.count)
    }

    private struct State: Sendable {
        var ring: RecordRing
        var tables: NameTables
        var counters: [KeyCounters] = []
        /// Retries and fetches over the last `rateWindow` (`RecentCounts.GlobalField`).
        var recent = CountBuckets(fields: RecentCounts.GlobalField.count)
        var eventsReceived: UInt64 = 0
        var evicted: UInt64 = 0
    }

    /// The configuration.
    public let configuration: Configuration
    /// The clock that decides which records are inside the window.
    public let clock: ResilienceClock
    private let state: LockedState<State>
    /// The width of the rate buckets, in nanoseconds.
    private let bucketWidth: Int64

    /// Creates a recorder. `clock` should be the clock your pipelines use (the default is the documented
    /// `ContinuousClock`-backed one).
    ///
    /// - Parameters:
    ///   - configuration: Ring capacity, retention window, detail and name limits, and the redactor.
    ///     Default: `.standard`.
    ///   - clock: The clock that decides which records are inside the window. Default: `.continuous`.
    public init(configuration: Configuration = .standard, clock: ResilienceClock = .continuous) {
        self.configuration = configuration
        self.clock = clock
        bucketWidth = RecentCounts.widthNanoseconds(spanning: configuration.rateWindow)
        // The library's own kinds hold their places from the start, so third-party kinds filling the table
        // never turn an attempt's end into "other" (which would leave its start counted in flight for ever).
        var kinds = InternTable(capacity: Self.smallTableCapacity)
        for kind in ResilienceEventKind.predefined { _ = kinds.id(for: kind.rawValue, redactor: nil) }
        state = LockedState(
            initialState: State(
                ring: RecordRing(capacity: configuration.capacity),
                tables: NameTables(
                    keys: InternTable(capacity: configuration.maximumDistinctNames),
                    operations: InternTable(capacity: configuration.maximumDistinctNames),
                    codes: InternTable(capacity: configuration.maximumDistinctNames),
                    kinds: kinds,
                    categories: InternTable(capacity: Self.smallTableCapacity))))
    }

    /// Records `event`: redacted, compacted, appended in O(1).
    public func receive(_ event: ResilienceEvent) {
        let detail = event.detail.map { truncate(configuration.redactor.redact($0)) }
        let redactor = configuration.redactor
        let windowNanoseconds = StoredRecord.nanoseconds(configuration.window)
        let time = StoredRecord.nanoseconds(event.time.offset)
        let bucketWidth = bucketWidth
        state.withLock { state in
            var record = StoredRecord(
                timeNanoseconds: time,
                durationNanoseconds: event.duration.map(StoredRecord.nanoseconds) ?? StoredRecord.noneDuration,
                openForNanoseconds: event.transition?.openFor.map(StoredRecord.nanoseconds)
                    ?? StoredRecord.noneDuration,
                detail: detail, attempt: Int32(clamping: event.attempt), count: StoredRecord.clamp32(event.count),
                total: StoredRecord.clamp32(event.total),
                kind: state.tables.kinds.id(for: event.kind.rawValue, redactor: nil),
                key: state.tables.keys.id(for: event.key, redactor: redactor),
                operation: state.tables.operations.id(for: event.operation, redactor: redactor), category: 0,
                code: 0,
                httpStatus: Int16(clamping: event.classification?.httpStatus ?? 0),
                fromState: StoredRecord.stateCode(event.transition?.from),
                toState: StoredRecord.stateCode(event.transition?.to))
            record.sequence = event.transition?.sequence
            if let classification = event.classification {
                record.category = state.tables.categories.id(for: classification.category.rawValue, redactor: nil)
                record.code = state.tables.codes.id(for: classification.code.rawValue, redactor: nil)
            }
            // A failed attempt an emitter did not classify fails as unknown, as MetricsTelemetrySink counts it.
            let failureCategory =
                event.kind != .attemptFailed
                ? nil
                : event.classification == nil
                    ? state.tables.categories.id(for: FailureClassification.unknown.category.rawValue, redactor: nil)
                    : record.category
            let retryCategory =
                event.kind == .retryScheduled
                ? state.tables.categories.id(
                    for: event.classification?.category.rawValue ?? MetricSchema.noCategory, redactor: nil) : nil
            // Keys past the name limit share the overflow entry, and one state cannot say many breakers' states:
            // they have none, in the counters or in the records the statistics replay (a key named "other" that
            // got the entry keeps its own).
            let keepsBreaker =
                record.key != 1 || (event.transition == nil && event.kind != .pipelineCreated)
                || redactor.redact(event.key) == InternTable.overflowName
            if !keepsBreaker { record.forgetTransition() }
            state.eventsReceived &+= 1
            _ = state.ring.removeOlder(thanNanoseconds: time &- windowNanoseconds)
            if state.ring.append(record) { state.evicted &+= 1 }
            Self.count(
                record, event: event, failureCategory: failureCategory, retryCategory: retryCategory,
                keepsBreaker: keepsBreaker, into: &state.counters)
            Self.countRecent(
                event, key: Int(record.key), bucket: CountBuckets.index(time, width: bucketWidth), into: &state)
        }
    }

    /// Adds `event` to the rate buckets (finished attempts per key; retries and fetches overall): a few integer
    /// operations.
    @inline(__always)
    private static func countRecent(_ event: ResilienceEvent, key: Int, bucket: Int64, into state: inout State) {
        switch event.kind {
        case .attemptSucceeded, .attemptFailed:
            let failed = event.kind == .attemptFailed
            state.counters[key].recent.increment(
                RecentCounts.KeyField.attempts, and: RecentCounts.KeyField.failures, if: failed, at: bucket)
            if event.attempt >= 2 {
                state.recent.increment(
                    RecentCounts.GlobalField.retryAttempts, and: RecentCounts.GlobalField.retrySuccesses,
                    if: !failed, at: bucket)
            }
        case .fetchCompleted:
            var partial = false
            if let count = event.count, let total = event.total { partial = count > 0 && count < total }
            state.recent.increment(
                RecentCounts.GlobalField.fetches, and: RecentCounts.GlobalField.partialCompletions, if: partial,
                at: bucket)
        case .partialResults:
            state.recent.increment(RecentCounts.GlobalField.partialResults, at: bucket)
        default:
            break
        }
    }

    private static func count(
        _ record: StoredRecord, event: ResilienceEvent, failureCategory: UInt16?, retryCategory: UInt16?,
        keepsBreaker: Bool, into counters: inout [KeyCounters]
    ) {
        let key = Int(record.key)
        while counters.count <= key { counters.append(KeyCounters()) }
        counters[key].eventCounts[Int(record.kind)] &+= 1
        if event.kind == .attemptSucceeded || event.kind == .attemptFailed, let duration = event.duration {
            counters[key].latency.record(duration)
        }
        if let failureCategory { counters[key].failureCounts[Int(failureCategory)] &+= 1 }
        if event.kind == .attemptSucceeded || event.kind == .attemptFailed || event.kind == .sourceFailed {
            // The latest, whatever order events arrive in (`noneDuration` is below every time).
            counters[key].lastTried = max(counters[key].lastTried, record.timeNanoseconds)
        }
        if event.kind == .attemptSucceeded {
            counters[key].failingSince = StoredRecord.noneDuration
            counters[key].lastFetchFailed = false
        } else if event.kind == .attemptFailed || event.kind == .sourceFailed {
            if counters[key].failingSince == StoredRecord.noneDuration {
                counters[key].failingSince = record.timeNanoseconds
            }
            if event.kind == .sourceFailed { counters[key].lastFetchFailed = true }
        }
        if let retryCategory { counters[key].retryCounts[Int(retryCategory)] &+= 1 }
        if MetricSchema.isRejection(event), let index = MetricSchema.rejectionKinds.firstIndex(of: event.kind) {
            counters[key].rejectionCounts[index] &+= 1
        }
        guard keepsBreaker else { return }
        if let transition = event.transition {
            // Transitions reach the recorder in any order; a new pipeline's breaker starts its sequence over.
            let current = counters[key].breakerTransition
            if event.kind == .pipelineCreated || current.map(transition.supersedes) ?? true {
                counters[key].breakerTransition = transition
            }
        } else if event.kind == .pipelineCreated {
            // A pipeline without a breaker: the key has no breaker state, whatever an earlier one's breaker left.
            counters[key].breakerTransition = nil
        }
    }

    /// The events inside the window at the clock's current time, oldest first, as redacted copies.
    /// Classifications carry category, code and HTTP status only; the events of keys past
    /// ``Configuration/maximumDistinctNames``, keyed `"other"`, carry no breaker transition.
    public func snapshot() -> [ResilienceEvent] {
        let cutoff = StoredRecord.nanoseconds(clock.now().offset) &- StoredRecord.nanoseconds(configuration.window)
        return state.withLock { state in
            _ = state.ring.removeOlder(thanNanoseconds: cutoff)
            var events: [ResilienceEvent] = []
            events.reserveCapacity(state.ring.count)
            let tables = state.tables
            state.ring.forEach { events.append(Self.event(from: $0, tables: tables)) }
            return events
        }
    }

    /// Statistics over the last `window` (the whole recorder window by default).
    public func statistics(window: Duration? = nil) -> TelemetryStatistics {
        TelemetryStatistics(events: snapshot(), now: clock.now(), window: window ?? configuration.window)
    }

    /// The cumulative metrics since creation (for Prometheus and dashboards).
    public func metrics() -> TelemetryMetrics {
        state.withLock { state in
            var sources: [String: SourceMetrics] = [:]
            for (key, counters) in state.counters.enumerated() where counters.eventCounts.contains(where: { $0 > 0 }) {
                var metrics = SourceMetrics()
                for (kind, count) in counters.eventCounts.enumerated() where count > 0 {
                    let name = state.tables.kinds.name(UInt16(kind))
                    metrics.eventCounts[ResilienceEventKind(rawValue: name), default: 0] += count
                }
                for (category, count) in counters.failureCounts.enumerated() where count > 0 {
                    metrics.failureCounts[
                        FailureCategory(state.tables.categories.name(UInt16(category))), default: 0] +=
                        count
                }
                for (category, count) in counters.retryCounts.enumerated() where count > 0 {
                    metrics.retryCounts[
                        FailureCategory(state.tables.categories.name(UInt16(category))), default: 0] += count
                }
                for (index, count) in counters.rejectionCounts.enumerated() where count > 0 {
                    metrics.rejectionCounts[MetricSchema.rejectionKinds[index], default: 0] += count
                }
                metrics.latency = counters.latency
                metrics.breakerState = counters.breakerTransition?.to
                if counters.failingSince != StoredRecord.noneDuration {
                    metrics.failingSince = ResilienceInstant(offset: .nanoseconds(counters.failingSince))
                }
                if counters.lastTried != StoredRecord.noneDuration {
                    metrics.lastTried = ResilienceInstant(offset: .nanoseconds(counters.lastTried))
                }
                metrics.lastFetchFailed = counters.lastFetchFailed
                sources[state.tables.keys.name(UInt16(key)), default: SourceMetrics()].merge(metrics)
            }
            return TelemetryMetrics(
                sources: sources, eventsReceived: state.eventsReceived, recordsEvicted: state.evicted,
                recordsHeld: state.ring.count)
        }
    }

    /// The counts the ratio health rules read: finished attempts and failures per key, retries and fetches, over
    /// the last ``Configuration/rateWindow`` at any event rate (records evicted from the ring still count).
    public func recentCounts() -> RecentCounts {
        state.withLock { state in
            var keys: [(name: String, buckets: CountBuckets)] = []
            keys.reserveCapacity(state.counters.count)
            for (key, counters) in state.counters.enumerated() {
                keys.append((state.tables.keys.name(UInt16(key)), counters.recent))
            }
            return RecentCounts(widthNanoseconds: bucketWidth, keys: keys, global: state.recent)
        }
    }

    /// How many records are held (including any that expired since the last append or snapshot).
    public var count: Int { state.withLock { $0.ring.count } }

    /// Forgets every record and the ``recentCounts()`` (cumulative metrics are kept).
    public func removeAllRecords() {
        state.withLock { state in
            state.ring.removeAll()
            state.recent.removeAll()
            for key in state.counters.indices { state.counters[key].recent.removeAll() }
        }
    }

    /// The memory the recorder's records use, computed from the actual contents: the ring's inline storage
    /// (`capacity × MemoryLayout<StoredRecord>.stride`), the heap storage of every stored detail string
    /// longer than 15 UTF-8 bytes (Swift's small-string limit), and the intern table's strings and indexes.
    public func memoryFootprint() -> Int {
        state.withLock { $0.ring.footprintBytes + $0.tables.heapBytes }
    }

    /// The inline size of one stored record, in bytes.
    public static var recordStride: Int { MemoryLayout<StoredRecord>.stride }

    private func truncate(_ text: String) -> String {
        let limit = max(0, configuration.maximumDetailLength)
        guard text.utf8.count > limit else { return text }
        var result = ""
        var used = 0
        for scalar in text.unicodeScalars {
            let size = String(scalar).utf8.count
            if used + size > max(limit - 3, 0) { break }
            result.unicodeScalars.append(scalar)
            used += size
        }
        return result + "…"
    }

    private static func event(from record: StoredRecord, tables: NameTables) -> ResilienceEvent {
        var classification: FailureClassification?
        if record.code != 0 || record.category != 0 {
            classification = FailureClassification(
                category: FailureCategory(tables.categories.name(record.category)),
                code: FailureCode(tables.codes.name(record.code)),
                httpStatus: record.httpStatus == 0 ? nil : Int(record.httpStatus))
        }
        var transition: BreakerTransition?
        if let from = StoredRecord.state(record.fromState), let to = StoredRecord.state(record.toState) {
            transition = BreakerTransition(
                from: from, to: to,
                openFor: record.openForNanoseconds == StoredRecord.noneDuration
                    ? nil : .nanoseconds(record.openForNanoseconds),
                sequence: record.sequence)
        }
        return ResilienceEvent(
            kind: ResilienceEventKind(rawValue: tables.kinds.name(record.kind)), key: tables.keys.name(record.key),
            operation: tables.operations.name(record.operation), attempt: Int(record.attempt),
            time: ResilienceInstant(offset: .nanoseconds(record.timeNanoseconds)),
            duration: record.durationNanoseconds == StoredRecord.noneDuration
                ? nil : .nanoseconds(record.durationNanoseconds),
            classification: classification, transition: transition, detail: record.detail,
            count: record.count == StoredRecord.none32 ? nil : Int(record.count),
            total: record.total == StoredRecord.none32 ? nil : Int(record.total))
    }
}
