import ResilienceCore

/// A bounded, lock-protected record of recent events, with statistics, health and exporters working off
/// snapshots of it.
///
/// ``receive(_:)`` is an O(1) append under a small lock (plus the pruning of expired records, amortised
/// O(1)): it never waits for a consumer, so a slow exporter never slows a request. The ring holds at most
/// ``Configuration/capacity`` records (1,000 by default) from the last ``Configuration/window`` (one hour by
/// default, on the injected clock). Strings are interned and details truncated, so 1,000 records take about
/// 72 KB plus their short details (see ``memoryFootprint()``). Details, keys and operations are redacted
/// before they are stored; failure messages are not stored at all.
///
/// ```swift
/// let recorder = TelemetryRecorder(clock: clock)
/// let stats = recorder.statistics()
/// let text = PrometheusExporter().render(recorder.metrics())
/// ```
public final class TelemetryRecorder: TelemetrySink {
    /// How much the recorder keeps.
    public struct Configuration: Sendable, Hashable {
        /// The most records held (oldest are overwritten).
        public var capacity: Int = 1000
        /// How long records are kept.
        public var window: Duration = .seconds(3600)
        /// The most UTF-8 bytes of an event's detail that are kept.
        public var maximumDetailLength: Int = 48
        /// The most distinct keys, operations, kinds, categories and codes tracked; later ones count as
        /// `"other"`.
        public var maximumDistinctNames: Int = 1024
        /// The redactor applied before anything is stored.
        public var redactor: Redactor = .standard

        /// Creates a configuration.
        public init() {}

        /// 1,000 records, one hour (seed 000 §4.4).
        public static let standard = Configuration()
    }

    private struct KeyCounters: Sendable {
        var eventCounts: [UInt16: UInt64] = [:]
        var failureCounts: [UInt16: UInt64] = [:]
        var latency = LatencyHistogram()
        var breakerState: UInt8 = StoredRecord.noState
    }

    private struct State: Sendable {
        var ring: RecordRing
        var names: InternTable
        var counters: [UInt16: KeyCounters] = [:]
        var eventsReceived: UInt64 = 0
        var evicted: UInt64 = 0
    }

    /// The configuration.
    public let configuration: Configuration
    /// The clock that decides which records are inside the window.
    public let clock: ResilienceClock
    private let state: LockedState<State>

    /// Creates a recorder. `clock` should be the clock your pipelines use (the default is the documented
    /// `ContinuousClock`-backed one).
    public init(configuration: Configuration = .standard, clock: ResilienceClock = .continuous) {
        self.configuration = configuration
        self.clock = clock
        state = LockedState(
            initialState: State(
                ring: RecordRing(capacity: configuration.capacity),
                names: InternTable(capacity: configuration.maximumDistinctNames)))
    }

    /// Records `event`: redacted, compacted, appended in O(1).
    public func receive(_ event: ResilienceEvent) {
        let detail = event.detail.map { truncate(configuration.redactor.redact($0)) }
        let redactor = configuration.redactor
        let windowNanoseconds = StoredRecord.nanoseconds(configuration.window)
        let time = StoredRecord.nanoseconds(event.time.offset)
        state.withLock { state in
            var record = StoredRecord(
                timeNanoseconds: time,
                durationNanoseconds: event.duration.map(StoredRecord.nanoseconds) ?? StoredRecord.noneDuration,
                openForNanoseconds: event.transition?.openFor.map(StoredRecord.nanoseconds)
                    ?? StoredRecord.noneDuration,
                detail: detail, attempt: Int32(clamping: event.attempt), count: StoredRecord.clamp32(event.count),
                total: StoredRecord.clamp32(event.total),
                kind: state.names.id(for: event.kind.rawValue, redactor: nil),
                key: state.names.id(for: event.key, redactor: redactor),
                operation: state.names.id(for: event.operation, redactor: redactor), category: 0, code: 0,
                httpStatus: Int16(clamping: event.classification?.httpStatus ?? 0),
                fromState: StoredRecord.stateCode(event.transition?.from),
                toState: StoredRecord.stateCode(event.transition?.to))
            if let classification = event.classification {
                record.category = state.names.id(for: classification.category.rawValue, redactor: nil)
                record.code = state.names.id(for: classification.code.rawValue, redactor: nil)
            }
            state.eventsReceived &+= 1
            _ = state.ring.removeOlder(thanNanoseconds: time &- windowNanoseconds)
            if state.ring.append(record) { state.evicted &+= 1 }
            Self.count(record, event: event, into: &state.counters)
        }
    }

    private static func count(
        _ record: StoredRecord, event: ResilienceEvent, into counters: inout [UInt16: KeyCounters]
    ) {
        counters[record.key, default: KeyCounters()].eventCounts[record.kind, default: 0] &+= 1
        if event.kind == .attemptSucceeded || event.kind == .attemptFailed, let duration = event.duration {
            counters[record.key, default: KeyCounters()].latency.record(duration)
        }
        if (event.kind == .attemptFailed || event.kind == .sourceFailed) && event.classification != nil {
            counters[record.key, default: KeyCounters()].failureCounts[record.category, default: 0] &+= 1
        }
        if record.toState != StoredRecord.noState {
            counters[record.key, default: KeyCounters()].breakerState = record.toState
        }
    }

    /// The events inside the window at the clock's current time, oldest first, as redacted copies.
    /// Classifications carry category, code and HTTP status only.
    public func snapshot() -> [ResilienceEvent] {
        let cutoff = StoredRecord.nanoseconds(clock.now().offset) &- StoredRecord.nanoseconds(configuration.window)
        return state.withLock { state in
            _ = state.ring.removeOlder(thanNanoseconds: cutoff)
            var events: [ResilienceEvent] = []
            events.reserveCapacity(state.ring.count)
            let names = state.names
            state.ring.forEach { events.append(Self.event(from: $0, names: names)) }
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
            for (key, counters) in state.counters {
                var metrics = SourceMetrics()
                for (kind, count) in counters.eventCounts {
                    metrics.eventCounts[ResilienceEventKind(rawValue: state.names.name(kind)), default: 0] += count
                }
                for (category, count) in counters.failureCounts {
                    metrics.failureCounts[FailureCategory(state.names.name(category)), default: 0] += count
                }
                metrics.latency = counters.latency
                metrics.breakerState = StoredRecord.state(counters.breakerState)
                sources[state.names.name(key)] = metrics
            }
            return TelemetryMetrics(
                sources: sources, eventsReceived: state.eventsReceived, recordsEvicted: state.evicted,
                recordsHeld: state.ring.count)
        }
    }

    /// How many records are held (including any that expired since the last append or snapshot).
    public var count: Int { state.withLock { $0.ring.count } }

    /// Forgets every record (cumulative metrics are kept).
    public func removeAllRecords() {
        state.withLock { $0.ring.removeAll() }
    }

    /// The memory the recorder's records use, computed from the actual contents: the ring's inline storage
    /// (`capacity × MemoryLayout<StoredRecord>.stride`), the heap storage of every stored detail string
    /// longer than 15 UTF-8 bytes (Swift's small-string limit), and the intern table's strings and indexes.
    public func memoryFootprint() -> Int {
        state.withLock { $0.ring.footprintBytes + $0.names.heapBytes }
    }

    /// The inline size of one stored record, in bytes.
    public static var recordStride: Int { MemoryLayout<StoredRecord>.stride }

    private func truncate(_ text: String) -> String {
        let limit = configuration.maximumDetailLength
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

    private static func event(from record: StoredRecord, names: InternTable) -> ResilienceEvent {
        var classification: FailureClassification?
        if record.code != 0 || record.category != 0 {
            classification = FailureClassification(
                category: FailureCategory(names.name(record.category)), code: FailureCode(names.name(record.code)),
                httpStatus: record.httpStatus == 0 ? nil : Int(record.httpStatus))
        }
        var transition: BreakerTransition?
        if let from = StoredRecord.state(record.fromState), let to = StoredRecord.state(record.toState) {
            transition = BreakerTransition(
                from: from, to: to,
                openFor: record.openForNanoseconds == StoredRecord.noneDuration
                    ? nil : .nanoseconds(record.openForNanoseconds))
        }
        return ResilienceEvent(
            kind: ResilienceEventKind(rawValue: names.name(record.kind)), key: names.name(record.key),
            operation: names.name(record.operation), attempt: Int(record.attempt),
            time: ResilienceInstant(offset: .nanoseconds(record.timeNanoseconds)),
            duration: record.durationNanoseconds == StoredRecord.noneDuration
                ? nil : .nanoseconds(record.durationNanoseconds),
            classification: classification, transition: transition, detail: record.detail,
            count: record.count == StoredRecord.none32 ? nil : Int(record.count),
            total: record.total == StoredRecord.none32 ? nil : Int(record.total))
    }
}
