/// The one deadline primitive: a time limit, what passing it is called, and how it is enforced.
///
/// Every stage that limits time runs through it (the per-attempt timeout, the total deadline, an
/// aggregator's per-source timeout), and sources check it between network calls:
///
/// - **check**: ``ResilienceContext/checkDeadline()`` throws once `context.deadline` has passed;
/// - **remaining**: ``ResilienceContext/remaining(now:)`` is the time left;
/// - **race**: ``run(_:startingAt:_:)`` narrows the context's deadline, runs the operation (racing it
///   against a timer when ``isEnforced``), and reports a failure after the deadline as a
///   ``ResilienceError`` with ``code``.
///
/// ```swift
/// let limit = ResilienceDeadline(.seconds(10), code: .attemptTimedOut)
/// let page = try await limit.run(context) { context in try await transport.send(request, context: context) }
/// ```
public struct ResilienceDeadline: Sendable, Hashable {
    /// How long the operation may take, from when it starts.
    public var limit: Duration
    /// The error code a failure after the deadline becomes (`attemptTimedOut` for one attempt,
    /// `deadlineExceeded` for a whole operation).
    public var code: ResilienceError.Code
    /// Whether to race the operation against a timer and cancel it when the time is up (for operations that
    /// ignore `context.deadline` but honour cancellation). Costs a task group per call; the default,
    /// cooperative, narrows the deadline and trusts the operation to honour it.
    public var isEnforced: Bool

    /// Creates a deadline.
    ///
    /// - Parameters:
    ///   - limit: How long the operation may take; negative limits count as zero.
    ///   - code: The error code a failure after the deadline becomes.
    ///   - isEnforced: Whether to cancel the operation when the time is up instead of trusting it to honour
    ///     `context.deadline`.
    @inlinable
    public init(_ limit: Duration, code: ResilienceError.Code = .deadlineExceeded, isEnforced: Bool = false) {
        self.limit = limit
        self.code = code
        self.isEnforced = isEnforced
    }

    /// The limit clamped to what an instant can safely be advanced by (zero to about 31 years).
    @inlinable
    var clampedLimit: Duration {
        let maximum = Duration.seconds(1_000_000_000)
        return limit.isLess(than: .inlinedZero) ? .inlinedZero : (maximum.isLess(than: limit) ? maximum : limit)
    }

    /// Runs `operation` with the context's deadline narrowed to `now + limit`; a failure once that instant
    /// has passed becomes a ``ResilienceError`` with ``code`` (never the caller's cancellation). A success
    /// that arrives late is returned.
    ///
    /// - Parameters:
    ///   - context: The execution's context; the operation gets a copy with the narrower deadline.
    ///   - now: The current instant if the caller has just read it (no suspension since), else `nil` and
    ///     the context's clock is read.
    ///   - operation: The work to limit.
    @inlinable @inline(__always)
    public func run<Output: Sendable>(
        _ context: ResilienceContext,
        startingAt now: ResilienceInstant? = nil,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var inner = context
        let deadline = end(from: now ?? context.clock.now())
        inner.narrowDeadline(to: deadline)
        do {
            if isEnforced {
                return try await Self.race(inner, until: deadline, operation)
            }
            return try await operation(inner)
        } catch {
            throw translate(error, context: inner, deadline: deadline)
        }
    }

    /// The instant a deadline started at `start` passes: `start + limit`, a negative limit counting as zero and
    /// one beyond about 31 years as that, so no limit overflows the clock.
    ///
    /// ```swift
    /// let shutdownEnds = ResilienceDeadline(.seconds(10)).end(from: clock.now())
    /// ```
    ///
    /// - Parameter start: When the limited operation started.
    /// - Returns: The instant on `start`'s clock at which the time is up.
    @inlinable
    public func end(from start: ResilienceInstant) -> ResilienceInstant {
        start.advanced(by: clampedLimit)
    }

    /// The error to rethrow: a ``ResilienceError`` with ``code`` when `deadline` has passed (and the caller
    /// did not cancel), else `error` unchanged. Emits `timedOut` when it translates.
    ///
    /// - Parameters:
    ///   - error: What the operation threw.
    ///   - context: The context the operation was given.
    ///   - deadline: The instant this deadline passed or passes (``end(from:)``).
    @usableFromInline
    package func translate(_ error: any Error, context: ResilienceContext, deadline: ResilienceInstant) -> any Error {
        guard let now = expiry(of: error, context: context, deadline: deadline) else { return error }
        return timeoutError(after: context.classify(error), context: context, at: now)
    }

    /// The instant `error` is found to have ended after `deadline`, or `nil` when it stays as it is: the caller
    /// cancelled, it already is this deadline's error, or the deadline has not passed yet.
    ///
    /// - Parameters:
    ///   - error: What the operation threw.
    ///   - context: The context the operation was given.
    ///   - deadline: The instant this deadline passed or passes (``end(from:)``).
    @usableFromInline
    package func expiry(
        of error: any Error, context: ResilienceContext, deadline: ResilienceInstant
    )
        -> ResilienceInstant?
    {
        // The time first: before the deadline (the common failure) nothing else needs asking, and the
        // cancellation check and the cast of `error` are the dearer questions.
        let now = context.clock.now()
        guard now >= deadline, !Task.isCancelled else { return nil }
        if let own = error as? ResilienceError, own.code == code { return nil }
        return now
    }

    /// The ``ResilienceError`` with ``code`` that a failure classified as `underlying` becomes when it ended
    /// after the deadline (found at `now`, an ``expiry(of:context:deadline:)``). Emits `timedOut`.
    ///
    /// - Parameters:
    ///   - underlying: The classification of what the operation threw.
    ///   - context: The context the operation was given.
    ///   - now: When the failure was found past the deadline.
    @usableFromInline
    package func timeoutError(
        after underlying: FailureClassification, context: ResilienceContext, at now: ResilienceInstant
    ) -> ResilienceError {
        context.emit(.timedOut, at: now) {
            $0.duration = limit
            $0.detail = code.rawValue
        }
        return ResilienceError(
            code, key: context.key, underlying: underlying.category == .cancelled ? nil : underlying)
    }

    /// Runs `operation` through ``withDeadline(until:clock:operation:)`` on the context's clock; when the time
    /// runs out, rethrows what the cancelled operation threw (``translate(_:context:deadline:)`` then makes it
    /// a ``ResilienceError`` with ``code``). A ``DeadlineExceededError`` of the operation's own (a race of its
    /// own that ran out before this one) is rethrown as it is: a timeout, not a cancellation.
    @usableFromInline
    static func race<Output: Sendable>(
        _ context: ResilienceContext,
        until deadline: ResilienceInstant,
        _ operation: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        do {
            return try await raceAgainstDeadline(until: deadline, clock: context.clock) { try await operation(context) }
        } catch let timeUp as DeadlineExceededError where timeUp.deadline == deadline {
            throw timeUp.operationError ?? CancellationError()
        }
    }
}

extension ResilienceContext {
    /// Throws `CancellationError` when the task is cancelled, and ``ResilienceError`` with code
    /// `deadlineExceeded` when ``deadline`` has passed: what a source checks before and between network
    /// calls.
    public func checkDeadline() throws {
        try Task.checkCancellation()
        if let deadline, clock.now() >= deadline {
            throw ResilienceError(.deadlineExceeded, key: key)
        }
    }
}

/// What a child of a race reports.
@usableFromInline
package enum RaceOutcome<Output: Sendable>: Sendable {
    case finished(Result<Output, any Error>)
    case timerFired
    case timerCancelled
}

/// What a race's loop decides on (`ThrowingTaskGroup.nextRaceEvent()`).
@usableFromInline
package enum RaceEvent<Output: Sendable>: Sendable {
    /// A child returned this value; the group's other children are already cancelled.
    case won(Output)
    /// A child threw this error.
    case failed(any Error)
    /// A timer child's sleep ended.
    case timerFired
}

/// Lets a non-escaping operation run in a child task of a task group that cannot outlive it.
///
/// Sound because the group is awaited before `withoutActuallyEscaping` returns, and the operation is
/// called from one child at a time (deadlines) or, for hedging, only when the context says it is
/// idempotent (callers of hedging promise the operation tolerates concurrent calls).
package struct UncheckedOperation<Output>: @unchecked Sendable {
    package let run: (ResilienceContext) async throws -> Output

    package init(run: @escaping (ResilienceContext) async throws -> Output) {
        self.run = run
    }
}
