import ResilienceCore

/// An in-memory ``TelemetrySink`` for tests, in the manner of swift-log's and swift-metrics' test kits: it keeps
/// every event it receives and answers questions about them (by kind and key, counts, order), and lets a test
/// wait for an event without sleeping.
///
/// ```swift
/// let sink = RecordingTelemetrySink()
/// let context = ResilienceContext.test(telemetry: sink)
/// _ = try await pipeline.execute(context) { _ in try await fetch() }
/// #expect(sink.count(.retryScheduled) == 2)
/// #expect(sink.containsInOrder([.attemptFailed, .retryScheduled, .attemptSucceeded]))
/// ```
///
/// Safe to share between tasks; every query sees a consistent snapshot.
public final class RecordingTelemetrySink: TelemetrySink {
    private struct Waiter {
        var id: UInt64
        var matches: @Sendable (ResilienceEvent) -> Bool
        /// Matching events still to come before the waiter resumes.
        var needed: Int
        var continuation: CheckedContinuation<ResilienceEvent, any Error>
    }

    private struct State {
        var events: [ResilienceEvent] = []
        var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0
        var isEnabled = true
    }

    private let state = LockedState(initialState: State())

    /// Creates an empty, enabled sink.
    public init() {}

    // MARK: TelemetrySink

    /// Keeps `event` and resumes every waiter it satisfies.
    public func receive(_ event: ResilienceEvent) {
        let resumed = state.withLock { state -> [CheckedContinuation<ResilienceEvent, any Error>] in
            state.events.append(event)
            var resumed: [CheckedContinuation<ResilienceEvent, any Error>] = []
            var index = state.waiters.startIndex
            while index < state.waiters.endIndex {
                if state.waiters[index].matches(event) {
                    state.waiters[index].needed -= 1
                    if state.waiters[index].needed <= 0 {
                        resumed.append(state.waiters.remove(at: index).continuation)
                        continue
                    }
                }
                index += 1
            }
            return resumed
        }
        for continuation in resumed { continuation.resume(returning: event) }
    }

    /// Whether emitters should build events (``setEnabled(_:)`` turns it off to test that they skip the work).
    public var isEnabled: Bool { state.withLock { $0.isEnabled } }

    /// Turns recording on or off.
    public func setEnabled(_ enabled: Bool) { state.withLock { $0.isEnabled = enabled } }

    // MARK: Queries

    /// Every event received, oldest first.
    public var events: [ResilienceEvent] { state.withLock { $0.events } }

    /// The kinds of every event received, oldest first.
    public var kinds: [ResilienceEventKind] { state.withLock { $0.events.map(\.kind) } }

    /// The events of `kind` (and of `key`, when given), oldest first.
    public func events(_ kind: ResilienceEventKind, key: String? = nil) -> [ResilienceEvent] {
        events { $0.kind == kind && (key == nil || $0.key == key) }
    }

    /// The events that satisfy `predicate`, oldest first.
    public func events(where predicate: (ResilienceEvent) -> Bool) -> [ResilienceEvent] {
        state.withLock { $0.events.filter(predicate) }
    }

    /// How many events of `kind` (and of `key`, when given) arrived.
    public func count(_ kind: ResilienceEventKind, key: String? = nil) -> Int {
        state.withLock { state in
            state.events.reduce(0) { $0 + ($1.kind == kind && (key == nil || $1.key == key) ? 1 : 0) }
        }
    }

    /// How many events arrived for each kind.
    public var countsByKind: [ResilienceEventKind: Int] {
        state.withLock { state in state.events.reduce(into: [:]) { $0[$1.kind, default: 0] += 1 } }
    }

    /// The oldest event of `kind` (and of `key`, when given).
    public func first(_ kind: ResilienceEventKind, key: String? = nil) -> ResilienceEvent? {
        events(kind, key: key).first
    }

    /// The newest event of `kind` (and of `key`, when given).
    public func last(_ kind: ResilienceEventKind, key: String? = nil) -> ResilienceEvent? {
        events(kind, key: key).last
    }

    /// Whether an event of `kind` (and of `key`, when given) arrived.
    public func contains(_ kind: ResilienceEventKind, key: String? = nil) -> Bool { count(kind, key: key) > 0 }

    /// Whether `kinds` occur in this order among the received events (other events may come between them).
    public func containsInOrder(_ kinds: [ResilienceEventKind], key: String? = nil) -> Bool {
        var remaining = kinds[...]
        for event in events where key == nil || event.key == key {
            guard let next = remaining.first else { break }
            if event.kind == next { remaining = remaining.dropFirst() }
        }
        return remaining.isEmpty
    }

    /// Forgets every received event (waiters keep waiting).
    public func removeAll() { state.withLock { $0.events.removeAll() } }

    // MARK: Expectations

    /// Throws ``ExpectationFailure`` unless exactly `expected` events of `kind` (and of `key`, when given) arrived.
    public func expectCount(
        _ kind: ResilienceEventKind, key: String? = nil, _ expected: Int
    ) throws(ExpectationFailure) {
        let actual = count(kind, key: key)
        guard actual == expected else {
            throw ExpectationFailure(
                "expected \(expected) \(kind) event(s)\(key.map { " for \($0)" } ?? ""), got \(actual): \(kinds)")
        }
    }

    /// Throws ``ExpectationFailure`` unless `kinds` occur in this order (other events may come between them).
    public func expectOrder(_ kinds: [ResilienceEventKind], key: String? = nil) throws(ExpectationFailure) {
        guard containsInOrder(kinds, key: key) else {
            throw ExpectationFailure("expected \(kinds) in this order, got \(self.kinds)")
        }
    }

    // MARK: Waiting

    /// The first event (already received or still to come) of `kind` that satisfies `predicate`. Suspends
    /// without sleeping until a matching event arrives; throws `CancellationError` when the waiting task is
    /// cancelled. Wrap it in your own deadline when the event may never come.
    public func next(
        _ kind: ResilienceEventKind, where predicate: @escaping @Sendable (ResilienceEvent) -> Bool = { _ in true }
    ) async throws -> ResilienceEvent {
        try await waitForEvent { $0.kind == kind && predicate($0) }
    }

    /// Suspends until `count` events of `kind` have arrived in total (counting those already received) and
    /// returns every event of `kind`; throws `CancellationError` when the waiting task is cancelled.
    public func waitForCount(_ kind: ResilienceEventKind, atLeast count: Int) async throws -> [ResilienceEvent] {
        _ = try await waitForEvent(occurrence: max(1, count)) { $0.kind == kind }
        return events(kind)
    }

    /// Suspends until the `occurrence`-th event satisfying `matches` has arrived and returns it.
    private func waitForEvent(
        occurrence: Int = 1, _ matches: @escaping @Sendable (ResilienceEvent) -> Bool
    ) async throws -> ResilienceEvent {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let outcome = state.withLock { state -> Result<ResilienceEvent, CancellationError>? in
                    var seen = 0
                    for event in state.events where matches(event) {
                        seen += 1
                        if seen == occurrence { return .success(event) }
                    }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters.append(
                        Waiter(id: id, matches: matches, needed: occurrence - seen, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}
