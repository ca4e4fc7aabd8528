/// Runs `operation` in a child task and races it against `deadline` on `clock`: the one timer race of
/// ResilienceKit. Every place that bounds work by time (an enforced ``ResilienceDeadline``, a transport's
/// exchange, a coordination store call, a concurrency limiter's queued wait, a sync engine's drain on shutdown)
/// runs through it.
///
/// The outcome is decided by the operation's outcome and the clock alone, never by which child task the
/// executor happens to resume first:
///
/// - The operation returns a value: that value, even when it arrives after the deadline (a result wins a
///   tie with the timer, and a late result is not thrown away).
/// - The operation throws while the caller's task is cancelled: that error (the caller's cancellation is
///   never reported as the time running out).
/// - The operation throws and `clock` reads `deadline` or later: ``DeadlineExceededError``, carrying what
///   the operation threw.
/// - The operation throws before `deadline`: that error.
///
/// When `deadline` passes first, the operation is cancelled and awaited: the race is structured, so no task
/// outlives the call, and an operation that ignores cancellation delays the return until it ends. When the
/// deadline has already passed on entry, the operation is not started and ``DeadlineExceededError`` is
/// thrown at once. Cancelling the caller cancels the operation and the timer.
///
/// ```swift
/// let deadline = clock.now().advanced(by: .seconds(5))
/// do {
///     let page = try await withDeadline(until: deadline, clock: clock) { try await client.fetchPage() }
/// } catch let timeUp as DeadlineExceededError {
///     print("gave up at \(timeUp.deadline)")
/// }
/// ```
///
/// - Parameters:
///   - deadline: The instant on `clock` at which the operation is cancelled.
///   - clock: The clock the timer sleeps on and the deadline is measured on (a `ManualClock` in tests).
///   - operation: The work to bound; it runs in a child task and should honour cancellation.
/// - Returns: What the operation returned.
/// - Throws: ``DeadlineExceededError`` when the operation failed at or after `deadline` (or was never
///   started because `deadline` had passed); otherwise what the operation threw.
public func withDeadline<Output: Sendable>(
    until deadline: ResilienceInstant,
    clock: ResilienceClock,
    operation: @Sendable () async throws -> Output
) async throws -> Output {
    try await raceAgainstDeadline(until: deadline, clock: clock, operation)
}

/// Runs `operation` against a deadline `limit` from now on `clock`: ``withDeadline(until:clock:operation:)``
/// with `until` set to `clock.now() + limit` (a negative limit counts as zero, a limit beyond about 31 years as
/// that, so no input overflows the clock).
///
/// ```swift
/// let report = try await withDeadline(after: .seconds(10), clock: clock) { await engine.performSync() }
/// ```
///
/// - Parameters:
///   - limit: How long the operation may take from now.
///   - clock: The clock the timer sleeps on and the deadline is measured on.
///   - operation: The work to bound; it runs in a child task and should honour cancellation.
/// - Returns: What the operation returned.
/// - Throws: ``DeadlineExceededError`` when the operation failed once the time was up; otherwise what it threw.
public func withDeadline<Output: Sendable>(
    after limit: Duration,
    clock: ResilienceClock,
    operation: @Sendable () async throws -> Output
) async throws -> Output {
    let deadline = ResilienceDeadline(limit).end(from: clock.now())
    return try await raceAgainstDeadline(until: deadline, clock: clock, operation)
}

/// The time given to an operation raced by ``withDeadline(until:clock:operation:)`` ran out before it
/// succeeded.
///
/// Classifies itself as a ``FailureCategory/timeout`` with code ``FailureCode/timedOut`` (`NET_002`),
/// transient; the callers inside ResilienceKit turn it into their own typed timeout (an attempt's
/// ``ResilienceError``, a transport's timeout, a coordination store's `timedOut`).
public struct DeadlineExceededError: ClassifiedError, CustomStringConvertible {
    /// The instant, on the race's clock, at which the time ran out.
    public var deadline: ResilienceInstant
    /// What the operation threw after it was cancelled (usually `CancellationError`); `nil` when it was
    /// never started because the deadline had already passed.
    public var operationError: (any Error)?

    /// Creates the error.
    ///
    /// - Parameters:
    ///   - deadline: The instant, on the race's clock, at which the time ran out.
    ///   - operationError: What the operation threw after it was cancelled; `nil` when it never started.
    public init(deadline: ResilienceInstant, operationError: (any Error)? = nil) {
        self.deadline = deadline
        self.operationError = operationError
    }

    /// A transient ``FailureCategory/timeout`` with code ``FailureCode/timedOut``.
    public var classification: FailureClassification {
        FailureClassification(category: .timeout, code: .timedOut, message: description)
    }

    /// `deadline +5.0 seconds exceeded`.
    public var description: String { "deadline \(deadline) exceeded" }
}

/// ``withDeadline(until:clock:operation:)`` for an operation that is not `@Sendable`, for callers inside the
/// package that hand a stage's non-escaping `next` to the race.
///
/// Sound for the same reason as ``UncheckedOperation``: the operation runs in one child task, and the task
/// group is awaited before this function returns.
package func raceAgainstDeadline<Output: Sendable>(
    until deadline: ResilienceInstant,
    clock: ResilienceClock,
    _ operation: () async throws -> Output
) async throws -> Output {
    guard clock.now() < deadline else { throw DeadlineExceededError(deadline: deadline) }
    return try await withoutActuallyEscaping(operation) { escapable in
        let operation = UncheckedWork(run: escapable)
        return try await withThrowingTaskGroup(of: RaceOutcome<Output>.self) { group in
            group.addRacer { try await operation.run() }
            group.addTimer { try await clock.sleep(until: deadline) }
            while let event = try await group.nextRaceEvent() {
                switch event {
                case .won(let value):
                    return value
                case .failed(let error):
                    group.cancelAll()
                    if Task.isCancelled || clock.now() < deadline { throw error }
                    throw DeadlineExceededError(deadline: deadline, operationError: error)
                case .timerFired:
                    group.cancelAll()
                }
            }
            // Unreachable: the operation's child always reports how it finished.
            throw CancellationError()
        }
    }
}

/// A non-escaping, non-`Sendable` operation smuggled into the race's child task (see
/// ``raceAgainstDeadline(until:clock:_:)``).
private struct UncheckedWork<Output>: @unchecked Sendable {
    let run: () async throws -> Output
}

extension ThrowingTaskGroup {
    /// Adds a child that runs `work` and reports how it ended as ``RaceOutcome/finished(_:)``: the one way a
    /// race (a deadline, a hedge) runs its work in a child task. Inlinable, so a caller in another module
    /// (hedging) gets one closure context per child, as when it called `addTask` itself.
    @inlinable
    package mutating func addRacer<Output: Sendable>(
        _ work: @escaping @Sendable () async throws -> Output
    ) where ChildTaskResult == RaceOutcome<Output> {
        addTask {
            do {
                return .finished(.success(try await work()))
            } catch {
                return .finished(.failure(error))
            }
        }
    }

    /// Waits for the race's next event that needs a decision: the first success (the group's other children
    /// are cancelled before it is returned), a failure, or a timer that fired. A timer that the race cancelled
    /// is skipped. `nil` once every child has ended. The one loop step shared by every race (a deadline, a
    /// hedge); what a failure or a timer means is the caller's.
    @inlinable
    package mutating func nextRaceEvent<Output: Sendable>() async throws -> RaceEvent<Output>?
    where ChildTaskResult == RaceOutcome<Output> {
        while let outcome = try await next() {
            switch outcome {
            case .finished(.success(let value)):
                cancelAll()
                return .won(value)
            case .finished(.failure(let error)):
                return .failed(error)
            case .timerFired:
                return .timerFired
            case .timerCancelled:
                continue
            }
        }
        return nil
    }

    /// Adds a timer child that runs `sleep` and reports ``RaceOutcome/timerFired`` when it returns, or
    /// ``RaceOutcome/timerCancelled`` when it throws (the race cancelled it): the one timer of every race.
    @inlinable
    package mutating func addTimer<Output: Sendable>(
        _ sleep: @escaping @Sendable () async throws -> Void
    ) where ChildTaskResult == RaceOutcome<Output> {
        addTask {
            do {
                try await sleep()
                return .timerFired
            } catch {
                return .timerCancelled
            }
        }
    }
}
