import ResilienceCore

/// Counts failures by code and says whether a repeat should be suppressed.
///
/// ``record(_:key:)-(FailureCode,_)`` counts the code and returns ``Verdict/report(suppressedSinceLastReport:)``
/// the first time a (key, code) pair is seen within ``window`` and ``Verdict/suppress`` for repeats inside it, so
/// logs and notifications show each distinct problem once per window with a count of what was suppressed. Memory
/// is bounded: at most ``maximumEntries`` (key, code) pairs are tracked; the least recently reported is evicted.
/// Time comes from the injected clock. Thread-safe; O(1) per call apart from eviction.
public final class ErrorFrequencyTracker: Sendable {
    /// What to do with one occurrence.
    public enum Verdict: Hashable, Sendable {
        /// Report it; `suppressedSinceLastReport` repeats were swallowed since the last report.
        case report(suppressedSinceLastReport: Int)
        /// A repeat inside the window: count it but do not report it.
        case suppress
    }

    private struct Entry: Sendable {
        var lastReported: ResilienceInstant
        var suppressed: Int
    }

    private struct Pair: Hashable, Sendable {
        var key: String
        var code: FailureCode
    }

    private struct State: Sendable {
        var counts: [FailureCode: Int] = [:]
        var entries: [Pair: Entry] = [:]
    }

    /// How long repeats are suppressed after a report.
    public let window: Duration
    /// The most (key, code) pairs and codes tracked.
    public let maximumEntries: Int
    private let clock: ResilienceClock
    private let state = LockedState(initialState: State())

    /// Creates a tracker suppressing repeats within `window` (one minute by default).
    ///
    /// - Parameters:
    ///   - window: How long repeats are suppressed after a report. Default: `.seconds(60)`.
    ///   - maximumEntries: The most (key, code) pairs and codes tracked. Default: `1024`.
    ///   - clock: The clock the window is measured on. Default: `.continuous`.
    public init(window: Duration = .seconds(60), maximumEntries: Int = 1024, clock: ResilienceClock = .continuous) {
        self.window = window
        self.maximumEntries = max(1, maximumEntries)
        self.clock = clock
    }

    /// Counts one occurrence of `code` for `key` and says whether to report it.
    @discardableResult
    public func record(_ code: FailureCode, key: String = "") -> Verdict {
        let now = clock.now()
        let limit = maximumEntries
        let window = window
        return state.withLock { state in
            if state.counts[code] != nil || state.counts.count < limit { state.counts[code, default: 0] += 1 }
            let pair = Pair(key: key, code: code)
            if var entry = state.entries[pair], entry.lastReported.duration(to: now) < window {
                entry.suppressed += 1
                state.entries[pair] = entry
                return .suppress
            }
            let suppressed = state.entries[pair]?.suppressed ?? 0
            if state.entries[pair] == nil && state.entries.count >= limit,
                let oldest = state.entries.min(by: { $0.value.lastReported < $1.value.lastReported })?.key
            {
                state.entries[oldest] = nil
            }
            state.entries[pair] = Entry(lastReported: now, suppressed: 0)
            return .report(suppressedSinceLastReport: suppressed)
        }
    }

    /// Counts `classification`'s code for `key`.
    @discardableResult
    public func record(_ classification: FailureClassification, key: String = "") -> Verdict {
        record(classification.code, key: key)
    }

    /// How often each code occurred since creation.
    public var counts: [FailureCode: Int] { state.withLock { $0.counts } }

    /// The codes by descending frequency (ties alphabetically), at most `limit`.
    public func mostFrequent(_ limit: Int = 5) -> [TelemetryStatistics.CodeCount] {
        counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key.rawValue < $1.key.rawValue }
            .prefix(max(limit, 0)).map { TelemetryStatistics.CodeCount(code: $0.key, count: $0.value) }
    }
}
