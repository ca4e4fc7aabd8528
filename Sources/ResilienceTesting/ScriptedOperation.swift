/// An operation that fails or succeeds in a given sequence, counting calls: the stand-in for a transport or
/// a source when testing stages and pipelines.
///
/// After the script runs out the last step repeats; an empty script throws ``EmptyScript``. Steps may first sleep on a clock (use a
/// ``ManualClock`` and advance it), and every call's context is recorded.
///
/// ```swift
/// let operation = ScriptedOperation<String>([.failure(URLError(.timedOut)), .success("ok")])
/// let value = try await pipeline.execute(context, operation.callAsFunction)
/// #expect(operation.callCount == 2)
/// ```
public final class ScriptedOperation<Output: Sendable>: Sendable {
    /// One scripted call.
    public indirect enum Step: Sendable {
        /// Return the value.
        case success(Output)
        /// Throw the error.
        case failure(any Error)
        /// Sleep for the duration on the operation's clock, then do the step.
        case delayed(Duration, Step)
        /// Sleep until the context's deadline (as a transport honouring it would), then throw the error.
        case untilDeadline(any Error)
    }

    private struct State {
        var steps: [Step]
        var calls = 0
        var contexts: [ResilienceContext] = []
        var inFlight = 0
        var maximumInFlight = 0
    }

    private let state: LockedState<State>
    private let clock: ResilienceClock?

    /// Creates an operation that performs `steps` in order; `clock` is used by delayed steps (the context's
    /// clock when `nil`).
    ///
    /// - Parameters:
    ///   - steps: What each call does, in order.
    ///   - clock: The clock delayed steps sleep on; the context's clock when `nil`.
    public init(_ steps: [Step], clock: ResilienceClock? = nil) {
        state = LockedState(initialState: State(steps: steps))
        self.clock = clock
    }

    /// Creates an operation whose delayed steps sleep on `manualClock`.
    ///
    /// - Parameters:
    ///   - steps: What each call does, in order.
    ///   - manualClock: The manual clock delayed steps sleep on; advance it to release them.
    public convenience init(_ steps: [Step], manualClock: ManualClock) {
        self.init(steps, clock: .manual(manualClock))
    }

    /// How many times the operation was called.
    public var callCount: Int { state.withLock { $0.calls } }

    /// The contexts of every call, in order.
    public var contexts: [ResilienceContext] { state.withLock { $0.contexts } }

    /// The attempt numbers seen, in call order.
    public var attempts: [Int] { contexts.map(\.attempt) }

    /// The most calls that were running at the same time.
    public var maximumConcurrentCalls: Int { state.withLock { $0.maximumInFlight } }

    /// The error an operation with an empty script throws.
    public struct EmptyScript: Error, Hashable {}

    /// Performs the next step (an empty script throws ``EmptyScript``).
    public func callAsFunction(_ context: ResilienceContext) async throws -> Output {
        let step = state.withLock { state -> Step in
            let index = min(state.calls, state.steps.count - 1)
            state.calls += 1
            state.contexts.append(context)
            state.inFlight += 1
            state.maximumInFlight = max(state.maximumInFlight, state.inFlight)
            return index >= 0 ? state.steps[index] : .failure(EmptyScript())
        }
        defer { state.withLock { $0.inFlight -= 1 } }
        return try await perform(step, context)
    }

    private func perform(_ step: Step, _ context: ResilienceContext) async throws -> Output {
        switch step {
        case .success(let value):
            return value
        case .failure(let error):
            throw error
        case .delayed(let duration, let then):
            try await (clock ?? context.clock).sleep(for: duration)
            return try await perform(then, context)
        case .untilDeadline(let error):
            if let deadline = context.deadline {
                try await (clock ?? context.clock).sleep(until: deadline)
            }
            throw error
        }
    }
}
