import ResilienceCore

/// A ``Source`` test double that answers from a script: one step per call, in order, the last step repeating.
///
/// Each step returns items or throws, optionally after a delay slept on the injected clock (a `ManualClock`
/// in tests), so timing, deadlines and cancellation are deterministic. It counts calls and records queries.
///
/// ```swift
/// let source = ScriptedSource<String>(id: "a", steps: [.failure(URLError(.timedOut)), .items(["x"])])
/// ```
public final class ScriptedSource<Item: Sendable>: Source, Sendable {
    /// One scripted answer.
    public struct Step: Sendable {
        /// What to return or throw.
        public var result: Result<[Item], any Error>
        /// How long to sleep on the clock first.
        public var delay: Duration?

        /// Creates a step.
        ///
        /// - Parameters:
        ///   - result: What to return or throw.
        ///   - delay: How long to sleep on the clock first.
        public init(result: Result<[Item], any Error>, delay: Duration? = nil) {
            self.result = result
            self.delay = delay
        }

        /// Returns `items`, after `delay` if given.
        public static func items(_ items: [Item], after delay: Duration? = nil) -> Step {
            Step(result: .success(items), delay: delay)
        }

        /// Throws `error`, after `delay` if given.
        public static func failure(_ error: any Error, after delay: Duration? = nil) -> Step {
            Step(result: .failure(error), delay: delay)
        }
    }

    /// The stable identifier.
    public let id: SourceID
    /// The kind.
    public let kind: SourceKind
    /// A name for people.
    public let displayName: String
    private let steps: [Step]
    private let clock: ResilienceClock
    private let state = LockedBox<(calls: Int, queries: [SourceQuery])>((0, []))

    /// Creates a source answering with `steps` (an empty script returns no items), sleeping on `clock`.
    ///
    /// - Parameters:
    ///   - id: The stable identifier.
    ///   - kind: The kind. Default: `"scripted"`.
    ///   - displayName: A name for people; the identifier's raw value when `nil`.
    ///   - steps: One answer per call, in order; the last repeats, and an empty script returns no items.
    ///   - clock: The clock delayed steps sleep on (a `ManualClock` in tests). Default: `.continuous`.
    public init(
        id: SourceID, kind: SourceKind = "scripted", displayName: String? = nil, steps: [Step],
        clock: ResilienceClock = .continuous
    ) {
        self.id = id
        self.kind = kind
        self.displayName = displayName ?? id.rawValue
        self.steps = steps
        self.clock = clock
    }

    /// Creates a source that always returns `items`.
    ///
    /// - Parameters:
    ///   - id: The stable identifier.
    ///   - items: The items every call returns.
    ///   - delay: How long each call sleeps on the clock before answering; `nil` for no delay.
    ///   - clock: The clock delayed steps sleep on (a `ManualClock` in tests). Default: `.continuous`.
    public convenience init(id: SourceID, items: [Item], delay: Duration? = nil, clock: ResilienceClock = .continuous) {
        self.init(id: id, steps: [.items(items, after: delay)], clock: clock)
    }

    /// How many times `fetch` was called.
    public var callCount: Int { state.value.calls }
    /// The queries received, in order.
    public var queries: [SourceQuery] { state.value.queries }

    /// Plays the next step.
    public func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [Item] {
        let index = state.mutate { state -> Int in
            state.calls += 1
            state.queries.append(query)
            return state.calls - 1
        }
        try Task.checkCancellation()
        guard !steps.isEmpty else { return [] }
        let step = steps[min(index, steps.count - 1)]
        if let delay = step.delay { try await clock.sleep(for: delay) }
        try Task.checkCancellation()
        return try step.result.get()
    }
}
