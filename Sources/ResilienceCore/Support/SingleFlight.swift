/// Request coalescing: concurrent calls with the same key share one run of the operation.
///
/// The first caller for a key starts the operation in a task of its own; callers that arrive while it runs
/// wait for the same result, and every caller gets it (or the error it threw). Each caller's wait is its
/// own: a cancelled caller stops waiting and throws `CancellationError` at once, while the others keep
/// waiting; the operation itself is cancelled only when every caller has gone. The key's entry leaves the
/// table as soon as the operation ends or its last caller leaves, so a later call starts a fresh run.
///
/// Calls that return different output types never share a run, even under the same key. Coalesce only what
/// may be shared: idempotent reads, keyed by everything that can change the answer (for HTTP: the method,
/// the URL, the headers that vary the response and the credentials).
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
    /// - Returns: The callers waiting, over every output type.
    public func callerCount(for key: Key) -> Int {
        table.withLock { table in
            table.flights.reduce(0) { $0 + ($1.key.key == key ? $1.value.waiters.count : 0) }
        }
    }

    /// Runs `operation` for `key`, or joins the run already in flight for `key`.
    ///
    /// - Parameters:
    ///   - key: What identifies the call: runs with equal keys (and the same output type) are shared.
    ///   - operation: The work; runs in a task of its own, at most once for all the callers that joined.
    /// - Returns: The operation's output, and whether this caller joined a run another caller started.
    /// - Throws: The operation's error, or `CancellationError` when this caller was cancelled.
    public func run<Output: Sendable>(
        _ key: Key, _ operation: @escaping @Sendable () async throws -> Output
    ) async throws -> (output: Output, shared: Bool) {
        do {
            let (output, role) = try await join(key, operation)
            return (output, role.isShared)
        } catch {
            throw error.error
        }
    }

    /// Runs `operation` for `key`, or joins the run already in flight for `key`, when `operation` may not
    /// outlive this call (a pipeline stage's `next`).
    ///
    /// As ``run(_:_:)``, except that the caller whose call started the run returns only once the operation
    /// has ended, even when it was cancelled earlier (it then throws `CancellationError` and the others get
    /// the result). Callers that joined leave at once when cancelled.
    ///
    /// - Parameters:
    ///   - key: What identifies the call: runs with equal keys (and the same output type) are shared.
    ///   - operation: The work; runs in a task of its own while this call waits, at most once for all the
    ///     callers that joined.
    /// - Returns: The operation's output, and whether this caller joined a run another caller started.
    /// - Throws: The operation's error, or `CancellationError` when this caller was cancelled.
    public func runBorrowing<Output: Sendable>(
        _ key: Key, _ operation: () async throws -> Output
    ) async throws -> (output: Output, shared: Bool) {
        try await withoutActuallyEscaping(operation) { escapable in
            let borrowed = BorrowedOperation(escapable)
            let result: Result<Output, any Error>
            let role: FlightRole
            do {
                let (output, joinedAs) = try await join(key) { try await borrowed.operation() }
                result = .success(output)
                role = joinedAs
            } catch let failure as FlightFailure {
                result = .failure(failure.error)
                role = failure.role
            }
            // The run borrows `operation`: it must end before this call returns.
            if case .started(let task) = role { await task.value }
            return (try result.get(), role.isShared)
        }
    }

    /// Waits for the run for `key` (starting it if there is none) and says how this caller took part.
    private func join<Output: Sendable>(
        _ key: Key, _ operation: @escaping @Sendable () async throws -> Output
    ) async throws(FlightFailure) -> (Output, FlightRole) {
        let flightKey = FlightKey(key: key, output: ObjectIdentifier(Output.self))
        let waiter = table.withLock { table in
            table.nextWaiter &+= 1
            return table.nextWaiter
        }
        let box = RoleBox()
        do {
            let value = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<any Sendable, any Error>) in
                    let admission = table.withLock { table -> Admission in
                        if Task.isCancelled { return .cancelled }
                        if let flight = table.flights[flightKey] {
                            flight.waiters[waiter] = continuation
                            return .joined
                        }
                        let flight = Flight()
                        flight.waiters[waiter] = continuation
                        table.flights[flightKey] = flight
                        return .started(flight)
                    }
                    switch admission {
                    case .cancelled:
                        continuation.resume(throwing: CancellationError())
                    case .joined:
                        box.role = .joined
                    case .started(let flight):
                        let task = startTask { [self] in
                            let result: Result<any Sendable, any Error>
                            do { result = .success(try await operation()) } catch { result = .failure(error) }
                            finish(flight, key: flightKey, with: result)
                        }
                        box.role = .started(task)
                        let abandoned = table.withLock { _ in
                            flight.task = task
                            return flight.abandoned
                        }
                        if abandoned { task.cancel() }
                    }
                }
            } onCancel: {
                leave(waiter, key: flightKey)
            }
            // The table is keyed by the output type, so every value in this flight is an `Output`.
            return (value as! Output, box.role)
        } catch {
            throw FlightFailure(error: error, role: box.role)
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

    /// Hands `result` to every caller still waiting for `flight`, and clears its entry.
    private func finish(_ flight: Flight, key: FlightKey, with result: Result<any Sendable, any Error>) {
        let waiters = table.withLock { table in
            if table.flights[key] === flight { table.flights[key] = nil }
            let waiters = flight.waiters
            flight.waiters = [:]
            return waiters
        }
        for continuation in waiters.values { continuation.resume(with: result) }
    }

    /// Ends `waiter`'s wait with `CancellationError`; cancels the run when it was the last caller waiting.
    private func leave(_ waiter: UInt64, key: FlightKey) {
        let (continuation, orphaned) = table.withLock {
            table -> (CheckedContinuation<any Sendable, any Error>?, Task<Void, Never>?) in
            guard let flight = table.flights[key], let continuation = flight.waiters.removeValue(forKey: waiter) else {
                return (nil, nil)
            }
            guard flight.waiters.isEmpty else { return (continuation, nil) }
            table.flights[key] = nil
            flight.abandoned = true
            return (continuation, flight.task)
        }
        continuation?.resume(throwing: CancellationError())
        orphaned?.cancel()
    }
}

extension SingleFlight {
    /// A key and the output type its callers expect.
    private struct FlightKey: Hashable {
        var key: Key
        var output: ObjectIdentifier
    }

    /// The runs in flight and the last waiter number handed out.
    private struct FlightTable {
        var flights: [FlightKey: Flight] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// One run of an operation and the callers waiting for it. Changed only under the table's lock.
    private final class Flight: @unchecked Sendable {
        var waiters: [UInt64: CheckedContinuation<any Sendable, any Error>] = [:]
        var task: Task<Void, Never>?
        var abandoned = false
    }

    /// What a caller found when it asked for a key.
    private enum Admission {
        case cancelled
        case joined
        case started(Flight)
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

    /// The role a caller took, set inside the continuation's body before it suspends.
    private final class RoleBox: @unchecked Sendable {
        var role = FlightRole.none
    }

    /// A caller's failure and the role it took.
    private struct FlightFailure: Error {
        var error: any Error
        var role: FlightRole
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
