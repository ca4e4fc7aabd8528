import ResilienceCore

/// Counts failures by code and says whether a repeat should be suppressed.
///
/// ``record(_:key:)-(FailureCode,_)`` counts the code and returns ``Verdict/report(suppressedSinceLastReport:)``
/// the first time a (key, code) pair is seen within ``window`` and ``Verdict/suppress`` for repeats inside it, so
/// logs and notifications show each distinct problem once per window with a count of what was suppressed.
///
/// Memory is bounded and no occurrence goes uncounted:
/// - at most ``maximumEntries`` (key, code) pairs are tracked; a new pair in a full table evicts the least
///   recently reported one. Repeats it was holding back are carried (for at most ``maximumEntries`` evicted
///   pairs, the longest carried giving way first) and added to its next report when the pair returns; those no
///   report can carry any more are counted in ``unattributedRepeats``;
/// - at most ``maximumEntries`` codes are counted in ``counts``; occurrences of codes seen after that are
///   counted in ``untrackedCodeOccurrences``.
///
/// Time comes from the injected clock. Thread-safe; O(1) per call, eviction included.
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
        var untrackedCodeOccurrences = 0
        /// The tracked pairs, least recently reported first.
        var entries = RecencyTable<Pair, Entry>()
        /// Repeats held back by evicted pairs, longest carried first.
        var carried = RecencyTable<Pair, Int>()
        var unattributedRepeats = 0
    }

    /// How long repeats are suppressed after a report.
    public let window: Duration
    /// The most (key, code) pairs tracked, evicted pairs carrying held-back repeats, and codes counted (each
    /// bounded separately).
    public let maximumEntries: Int
    private let clock: ResilienceClock
    private let state = LockedState(initialState: State())

    /// Creates a tracker suppressing repeats within `window` (one minute by default).
    ///
    /// - Parameters:
    ///   - window: How long repeats are suppressed after a report. Default: `.seconds(60)`.
    ///   - maximumEntries: The most (key, code) pairs tracked, evicted pairs carrying held-back repeats, and codes
    ///     counted (each bounded separately; at least 1). Default: `1024`.
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
            if state.counts[code] != nil || state.counts.count < limit {
                state.counts[code, default: 0] += 1
            } else {
                state.untrackedCodeOccurrences += 1
            }
            let pair = Pair(key: key, code: code)
            var suppressed = 0
            if var entry = state.entries[pair] {
                if entry.lastReported.duration(to: now) < window {
                    entry.suppressed += 1
                    state.entries.update(entry, for: pair)
                    return .suppress
                }
                suppressed = entry.suppressed
            } else {
                suppressed = state.carried.removeValue(for: pair) ?? 0
                if state.entries.count >= limit { Self.evictOldest(from: &state, limit: limit) }
            }
            state.entries.setNewest(Entry(lastReported: now, suppressed: 0), for: pair)
            return .report(suppressedSinceLastReport: suppressed)
        }
    }

    /// Evicts the least recently reported pair, carrying the repeats it held back; when `limit` pairs are carried
    /// already, the longest carried gives way and its repeats are counted as unattributed.
    private static func evictOldest(from state: inout State, limit: Int) {
        guard let oldest = state.entries.removeOldest(), oldest.value.suppressed > 0 else { return }
        if state.carried.count >= limit, let dropped = state.carried.removeOldest() {
            state.unattributedRepeats += dropped.value
        }
        state.carried.setNewest(oldest.value.suppressed, for: oldest.key)
    }

    /// Counts `classification`'s code for `key`.
    @discardableResult
    public func record(_ classification: FailureClassification, key: String = "") -> Verdict {
        record(classification.code, key: key)
    }

    /// How often each code occurred since creation, for the first ``maximumEntries`` distinct codes seen.
    public var counts: [FailureCode: Int] { state.withLock { $0.counts } }

    /// Occurrences of codes first seen after ``maximumEntries`` distinct codes were counted: they are in no entry
    /// of ``counts``, so its values and this add up to every occurrence recorded.
    public var untrackedCodeOccurrences: Int { state.withLock { $0.untrackedCodeOccurrences } }

    /// Held-back repeats that no report will carry: those of an evicted pair pushed out of the carried pairs
    /// (at most ``maximumEntries``) by later evictions before it returned. The counts reported, the repeats
    /// still held back and this add up to every repeat suppressed.
    public var unattributedRepeats: Int { state.withLock { $0.unattributedRepeats } }

    /// The codes by descending frequency (ties alphabetically), at most `limit`.
    public func mostFrequent(_ limit: Int = 5) -> [TelemetryStatistics.CodeCount] {
        counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key.rawValue < $1.key.rawValue }
            .prefix(max(limit, 0)).map { TelemetryStatistics.CodeCount(code: $0.key, count: $0.value) }
    }
}
