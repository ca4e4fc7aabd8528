/// Request coalescing: concurrent calls with the same key share one run of the operation.
///
/// The first caller for a key starts the operation in a task of its own; callers that arrive while it runs
/// wait for the same result, and every caller gets it (or the error it threw). Each caller's wait is its
/// own: a cancelled caller stops waiting and throws `CancellationError` at once, while the others keep
/// waiting; the operation itself is cancelled only when every caller has gone. The key's entry leaves the
/// table as soon as the operation ends or its last caller leaves, so a later call starts a fresh run.
///
/// Calls that return different output types, or that run at different ``RequestPriority`` levels (a run is
/// admitted, shed and retried at its first caller's priority), never share a run, even under the same key.
/// Coalesce only what may be shared: idempotent reads, keyed by everything that can change the answer (for
/// HTTP: the method, the URL, the headers that vary the response and the credentials).
///
/// ```swift
/// let flights = SingleFlight<String>()
/// let (profile, shared) = try await flights.run("profile/42") { try await api.profile(42) }
/// ```
public final class SingleFlight<Key: Hashable & Sendable>: Sendable {
    private let table = LockedState(initialState: FlightTable())
    /// The task executor the runs prefer (`any TaskExecutor`, on platforms that have it), or `nil`.
    private let taskExecutor: (any Sendable)?

    /// Creates an empty table of calls in flight, whose runs execute on the global executor.
    public init() {
        taskExecutor = nil
    }

    /// Creates an empty table of calls in flight, whose runs prefer `taskExecutor` (a simulation's executor).
    ///
    /// - Parameter taskExecutor: The executor the task of each run prefers; `nil` for the global executor.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    public init(taskExecutor: (any TaskExecutor)?) {
        self.taskExecutor = taskExecutor
    }

    /// How many keys have a call in flight now (zero once every call has ended).
    public var inFlightCount: Int { table.withLock { $0.flights.count } }

    /// How many callers wait for the run in flight for `key` (zero when none is).
    ///
    /// - Parameter key: The key.
    /// - Returns: The callers waiting, over every output type and priority.
    public func callerCount(for key: Key) -> Int {
        table.withLock { table in
            table.flights.reduce(0) { $0 + ($1.key.key == key ? $1.value.waiters.count : 0) }
        }
    }

    /// Runs `operation` for `key`, or joins the run already in flight for `key`.
    ///
    /// - Parameters:
    ///   - key: What identifies the call: runs with equal keys (and the same output type) are shared.
    ///   - priority: The caller's priority: only callers of the same priority share a run. Default: `.default`.
    ///   - operation: The work; runs in a task of its own, at most once for all the callers that joined.
    /// - Returns: The operation's output, and whether this caller joined a run another caller started.
    /// - Throws: The operation's error, or `CancellationError` when this caller was cancelled.
    public func run<Output: Sendable>(
        _ key: Key, priority: RequestPriority = .default, _ operation: @escaping @Sendable () async throws -> Output
    ) async throws -> (output: Output, shared: Bool) {
        let (result, shared) = await outcome(key, priority: priority, operation)
        return (try result.get(), shared)
    }

    /// ``run(_:priority:_:)``, with the outcome as a `Result`, so that a caller that got the run's error also
    /// learns whether it joined a run another caller started.
    package func outcome<Output: Sendable>(
        _ key: Key, priority: RequestPriority, _ operation: @escaping @Sendable () async throws -> Output
    ) async -> (result: Result<Output, any Error>, shared: Bool) {
        do {
            let (output, role) = try await join(FlightKey(key, priority, Output.self), operation)
            return (.success(output), role.isShared)
        } catch {
            return (.failure(error.error), error.role.isShared)
        }
    }

    /// Runs `operation` for `key`, or joins the run already in flight for `key`, when `operation` may not
    /// outlive this call (a pipeline stage's `next`).
    ///
    /// As ``run(_:priority:_:)``, except that the caller whose call started the run returns only once the
    /// operation has ended, even when it was cancelled earlier (it then throws `CancellationError` and the others
    /// get the result). Callers that joined leave at once when cancelled.
    ///
    /// - Parameters:
    ///   - key: What identifies the call: runs with equal keys (and the same output type) are shared.
    ///   - priority: The caller's priority: only callers of the same priority share a run. Default: `.default`.
    ///   - operation: The work; runs in a task of its own while this call waits, at most once for all the
    ///     callers that joined.
    /// - Returns: The operation's output, and whether this caller joined a run another caller started.
    /// - Throws: The operation's error, or `CancellationError` when this caller was cancelled.
    public func runBorrowing<Output: Sendable>(
        _ key: Key, priority: RequestPriority = .default, _ operation: () async throws -> Output
    ) async throws -> (output: Output, shared: Bool) {
        let (result, shared) = await borrowingOutcome(key, priority: priority, operation)
        return (try result.get(), shared)
    }

    /// ``runBorrowing(_:priority:_:)``, with the outcome as a `Result`, so that a caller that got the run's error
    /// also learns whether it joined a run another caller started.
    package func borrowingOutcome<Output: Sendable>(
        _ key: Key, priority: RequestPriority, _ operation: () async throws -> Output
    ) async -> (result: Result<Output, any Error>, shared: Bool) {
        await withoutActuallyEscaping(operation) { escapable in
            let borrowed = BorrowedOperation(escapable)
            let result: Result<Output, any Error>
            let role: FlightRole
            do throws(FlightFailure) {
                let (output, joinedAs) = try await join(FlightKey(key, priority, Output.self)) {
                    try await borrowed.operation()
                }
                result = .success(output)
                role = joinedAs
            } catch {
                result = .failure(error.error)
                role = error.role
            }
            // The run borrows `operation`: it must end before this call returns.
            if case .started(let task) = role { await task.value }
            return (result, role.isShared)
        }
    }

    /// Waits for the run for `key` (starting it if there is none) and says how this caller took part.
    private func join<Output: Sendable>(
        _ flightKey: FlightKey, _ operation: @escaping @Sendable () async throws -> Output
    ) async throws(FlightFailure) -> (Output, FlightRole) {
        let ticket: Ticket
        do {
            ticket = try admit(flightKey, operation)
        } catch {
            throw FlightFailure(error: error, role: .none)
        }
        do {
            // The table is keyed by the output type, so every value in this flight is an `Output`.
            return (try await wait(ticket) as! Output, ticket.role)
        } catch {
            throw FlightFailure(error: error, role: ticket.role)
        }
    }

    /// Takes `key`'s run in flight, or starts it, and places this caller among its waiters (before it waits,
    /// so that its role is known first).
    ///
    /// - Throws: `CancellationError` when the task is already cancelled (nothing joined, nothing started).
    private func admit<Output: Sendable>(
        _ flightKey: FlightKey, _ operation: @escaping @Sendable () async throws -> Output
    ) throws(CancellationError) -> Ticket {
        let admission = table.withLock { table -> (waiter: UInt64, flight: Flight, started: Bool)? in
            if Task.isCancelled { return nil }
            table.nextWaiter &+= 1
            let waiter = table.nextWaiter
            if let flight = table.flights[flightKey] {
                flight.waiters[waiter] = .admitted
                return (waiter, flight, false)
            }
            let flight = Flight()
            flight.waiters[waiter] = .admitted
            table.flights[flightKey] = flight
            return (waiter, flight, true)
        }
        guard let admission else { throw CancellationError() }
        let flight = admission.flight
        guard admission.started else {
            return Ticket(waiter: admission.waiter, key: flightKey, flight: flight, role: .joined)
        }
        let task = startTask { [self] in
            let result: Result<any Sendable, any Error>
            do { result = .success(try await operation()) } catch { result = .failure(error) }
            finish(flight, key: flightKey, with: result)
        }
        let abandoned = table.withLock { _ in
            flight.task = task
            return flight.abandoned
        }
        if abandoned { task.cancel() }
        return Ticket(waiter: admission.waiter, key: flightKey, flight: flight, role: .started(task))
    }

    /// Waits for the result of the run `ticket` was admitted to; a cancelled wait leaves the run.
    private func wait(_ ticket: Ticket) async throws -> any Sendable {
        // The continuation carries the run's `Result` and never throws: an error that passes through a throwing
        // continuation and the cancellation handler's generic rethrow comes out boxed a second time, and a boxed
        // error no longer classifies itself (a shared 503 classified as unknown, and was never retried).
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                let ready = table.withLock { _ -> Result<any Sendable, any Error>? in
                    switch ticket.flight.waiters[ticket.waiter] {
                    case .admitted?:
                        ticket.flight.waiters[ticket.waiter] = .waiting(continuation)
                        return nil
                    case .finished(let result)?:
                        ticket.flight.waiters[ticket.waiter] = nil
                        return result
                    case .waiting?, nil:
                        // Left already (cancelled, or its deadline passed).
                        return .failure(CancellationError())
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            leave(ticket)
        }
        switch outcome {
        case .success(let value): return value
        case .failure(let error): throw error
        }
    }

    /// Starts the task of a run, on ``taskExecutor`` when there is one.
    private func startTask(_ body: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *),
            let executor = taskExecutor as? any TaskExecutor
        {
            return Task(executorPreference: executor, operation: body)
        }
        return Task(operation: body)
    }

    /// Hands `result` to every caller still waiting for `flight` (keeps it for those admitted that do not wait
    /// yet), and clears its entry.
    private func finish(_ flight: Flight, key: FlightKey, with result: Result<any Sendable, any Error>) {
        let waiting = table.withLock { table in
            if table.flights[key] === flight { table.flights[key] = nil }
            var waiting: [Waiter] = []
            for (waiter, place) in flight.waiters {
                switch place {
                case .waiting(let continuation):
                    waiting.append(continuation)
                    flight.waiters[waiter] = nil
                case .admitted:
                    flight.waiters[waiter] = .finished(result)
                case .finished:
                    break
                }
            }
            return waiting
        }
        for continuation in waiting { continuation.resume(returning: result) }
    }

    /// Ends `ticket`'s wait with `CancellationError`; cancels the run when it was the last caller waiting.
    private func leave(_ ticket: Ticket) {
        let (continuation, orphaned) = table.withLock {
            table -> (Waiter?, Task<Void, Never>?) in
            let flight = ticket.flight
            guard let place = flight.waiters.removeValue(forKey: ticket.waiter) else { return (nil, nil) }
            var continuation: Waiter?
            switch place {
            case .finished: return (nil, nil)
            case .waiting(let waiting): continuation = waiting
            case .admitted: continuation = nil
            }
            guard flight.waiters.isEmpty, table.flights[ticket.key] === flight else { return (continuation, nil) }
            table.flights[ticket.key] = nil
            flight.abandoned = true
            return (continuation, flight.task)
        }
        continuation?.resume(returning: .failure(CancellationError()))
        orphaned?.cancel()
    }
}

extension SingleFlight {
    /// A key, the priority of its callers and the output type they expect.
    private struct FlightKey: Hashable, Sendable {
        var key: Key
        var priority: RequestPriority
        var output: ObjectIdentifier

        init<Output>(_ key: Key, _ priority: RequestPriority, _ output: Output.Type) {
            self.key = key
            self.priority = priority
            self.output = ObjectIdentifier(output)
        }
    }

    /// The runs in flight and the last waiter number handed out.
    private struct FlightTable {
        var flights: [FlightKey: Flight] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// One run of an operation and the callers waiting for it. Changed only under the table's lock.
    private final class Flight: @unchecked Sendable {
        var waiters: [UInt64: WaiterPlace] = [:]
        var task: Task<Void, Never>?
        var abandoned = false
    }

    /// A suspended caller, resumed with the run's outcome.
    private typealias Waiter = CheckedContinuation<Result<any Sendable, any Error>, Never>

    /// Where one caller of a run stands.
    private enum WaiterPlace {
        /// Admitted, not waiting yet.
        case admitted
        /// Suspended until the run ends.
        case waiting(Waiter)
        /// The run ended before it waited: what it will get.
        case finished(Result<any Sendable, any Error>)
    }

    /// A caller admitted to a run: its number among the waiters, the run and its role.
    private struct Ticket: Sendable {
        var waiter: UInt64
        var key: FlightKey
        var flight: Flight
        var role: FlightRole
    }

    /// How one caller took part in a run.
    private enum FlightRole: Sendable {
        /// Cancelled before it found a run.
        case none
        /// Joined a run another caller started.
        case joined
        /// Started the run, which `task` executes.
        case started(Task<Void, Never>)

        var isShared: Bool {
            if case .joined = self { return true }
            return false
        }
    }

    /// A caller's failure and the role it took.
    private struct FlightFailure: Error {
        var error: any Error
        var role: FlightRole
    }
}

extension ResilienceContext {
    /// Emits ``ResilienceEventKind/requestCoalesced`` (with `detail`) for a caller that joined a run another
    /// caller started and got its outcome: its value, or its error (whose classification the event carries). A
    /// caller that left before the run ended (`CancellationError`) got nothing, and emits nothing.
    package func emitCoalesced<Output>(_ result: Result<Output, any Error>, detail: String) {
        if case .failure(let error) = result, error is CancellationError { return }
        emit(.requestCoalesced) { event in
            event.detail = detail
            if case .failure(let error) = result { event.classification = classify(error) }
        }
    }
}

/// An operation borrowed from a caller that waits until the run using it has ended (``SingleFlight``'s
/// `runBorrowing`): it is never called concurrently with its owner, so it may cross into that run's task.
private struct BorrowedOperation<Output>: @unchecked Sendable {
    let operation: () async throws -> Output

    init(_ operation: @escaping () async throws -> Output) {
        self.operation = operation
    }
}
