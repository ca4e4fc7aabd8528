/// The shared engine of ``TimeoutStrategy`` and ``TotalDeadlineStrategy``.
@usableFromInline
struct TimeLimit: Sendable {
    @usableFromInline let limit: Duration
    @usableFromInline let mode: TimeoutMode
    @usableFromInline let code: ResilienceError.Code

    @usableFromInline
    init(limit: Duration, mode: TimeoutMode, code: ResilienceError.Code) {
        self.limit = limit
        self.mode = mode
        self.code = code
    }

    /// Runs `next` with the deadline narrowed to now + ``limit``; a failure once that instant has passed
    /// becomes a ``ResilienceError`` with ``code``, unless the caller cancelled.
    ///
    /// "Now" is the execution's known instant when an outer stage already read the clock: the success path
    /// reads the clock at most once per execution.
    @inlinable
    func run<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var inner = context
        let deadline = inner.currentInstant().advanced(by: DurationArithmetic.clamp(limit))
        inner.narrowDeadline(to: deadline)
        do {
            if mode == .enforced {
                return try await enforce(inner, deadline: deadline, next: next)
            }
            return try await next(inner)
        } catch {
            throw translate(error, context: inner, deadline: deadline)
        }
    }

    /// The error to rethrow: a ``ResilienceError`` with ``code`` when the deadline has passed (and the caller
    /// did not cancel), else `error` unchanged.
    @usableFromInline
    func translate(_ error: any Error, context: ResilienceContext, deadline: ResilienceInstant) -> any Error {
        if Task.isCancelled { return error }
        if let own = error as? ResilienceError, own.code == code { return error }
        let now = context.clock.now()
        guard now >= deadline else { return error }
        let underlying = context.classify(error)
        context.emit(.timedOut, at: now) {
            $0.duration = limit
            $0.detail = code.rawValue
        }
        return ResilienceError(
            code, key: context.key, underlying: underlying.category == .cancelled ? nil : underlying)
    }

    @usableFromInline
    func enforce<Output: Sendable>(
        _ context: ResilienceContext,
        deadline: ResilienceInstant,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let clock = context.clock
        return try await withoutActuallyEscaping(next) { escapable in
            let operation = UncheckedOperation(run: escapable)
            return try await withThrowingTaskGroup(of: RaceOutcome<Output>.self) { group in
                group.addTask {
                    do {
                        return .finished(.success(try await operation.run(context)))
                    } catch {
                        return .finished(.failure(error))
                    }
                }
                group.addTask {
                    do {
                        try await clock.sleep(until: deadline)
                        return .timerFired
                    } catch {
                        return .timerCancelled
                    }
                }
                while let outcome = try await group.next() {
                    switch outcome {
                    case .finished(let result):
                        group.cancelAll()
                        return try result.get()
                    case .timerFired:
                        group.cancelAll()
                    case .timerCancelled:
                        continue
                    }
                }
                throw CancellationError()
            }
        }
    }
}

/// What a child of a race reports.
enum RaceOutcome<Output: Sendable>: Sendable {
    case finished(Result<Output, any Error>)
    case timerFired
    case timerCancelled
}

/// Lets a non-escaping operation run in a child task of a task group that cannot outlive it.
///
/// Sound because the group is awaited before `withoutActuallyEscaping` returns, and the operation is
/// called from one child at a time (timeouts) or, for hedging, only when the context says it is safe to
/// repeat (callers of hedging promise the operation tolerates concurrent calls).
struct UncheckedOperation<Output>: @unchecked Sendable {
    let run: (ResilienceContext) async throws -> Output
}
