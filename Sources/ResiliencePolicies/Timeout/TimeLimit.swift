/// The shared engine of ``TimeoutStrategy`` and ``TotalDeadlineStrategy``.
struct TimeLimit: Sendable {
    let limit: Duration
    let mode: TimeoutMode
    let code: ResilienceError.Code

    /// Runs `next` with the deadline narrowed to now + ``limit``; a failure once that instant has passed
    /// becomes a ``ResilienceError`` with ``code``, unless the caller cancelled.
    func run<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        let clock = context.clock
        let deadline = clock.now().advanced(by: DurationArithmetic.clamp(limit))
        var inner = context
        inner.narrowDeadline(to: deadline)
        do {
            if mode == .enforced {
                return try await enforce(inner, deadline: deadline, next: next)
            }
            return try await next(inner)
        } catch {
            if Task.isCancelled { throw error }
            if let own = error as? ResilienceError, own.code == code { throw error }
            guard clock.now() >= deadline else { throw error }
            let underlying = context.classify(error)
            inner.emit(.timedOut) {
                $0.duration = limit
                $0.detail = code.rawValue
            }
            throw ResilienceError(
                code, key: context.key, underlying: underlying.category == .cancelled ? nil : underlying)
        }
    }

    private func enforce<Output: Sendable>(
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
