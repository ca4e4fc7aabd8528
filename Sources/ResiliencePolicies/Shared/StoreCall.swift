import ResilienceCore

/// Runs one coordination store call within `deadline` on `clock`, through Core's timer race
/// (`withDeadline(after:clock:operation:)`).
///
/// The call runs in a child task and is cancelled when the deadline passes; a call that then fails answers
/// ``CoordinationStoreError/timedOut(_:)``, so a stalled store that honours cancellation can never hang a
/// policy (the race is structured: a call that ignores cancellation is awaited until it ends). Cancelling the
/// caller cancels the call and answers ``CoordinationStoreError/unavailable(_:)``.
func callStore<Value: Sendable>(
    clock: ResilienceClock, deadline: Duration,
    _ operation: @escaping @Sendable () async throws(CoordinationStoreError) -> Value
) async -> Result<Value, CoordinationStoreError> {
    do {
        return .success(try await withDeadline(after: deadline, clock: clock) { try await operation() })
    } catch is DeadlineExceededError {
        return .failure(.timedOut(deadline))
    } catch let error as CoordinationStoreError where !Task.isCancelled {
        return .failure(error)
    } catch {
        return .failure(.unavailable("cancelled"))
    }
}
