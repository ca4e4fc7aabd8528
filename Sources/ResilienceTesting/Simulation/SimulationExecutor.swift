import Synchronization

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A single-threaded task executor and serial executor with a first-in, first-out run queue, driven by a
/// ``Simulation``.
///
/// Tasks started with `Task(executorPreference:)` or inside `withTaskExecutorPreference(_:operation:)` run
/// their non-isolated code here, and so do their child tasks (task groups, `async let`) and actors with a
/// default executor that they call. An actor can also name it as its own executor
/// (`nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }`).
/// Jobs run only when ``Simulation/run(timeLimit:_:)`` drains the queue, on the thread that called it, in
/// the order they were enqueued, so the interleaving of every task is a function of the code alone.
///
/// A job enqueued from another thread while the simulation runs means work escaped to another executor and
/// came back (an unstructured `Task {}`, `Task.detached`, a continuation resumed by a real timer or a
/// real socket): the executor counts it in ``foreignEnqueues`` and the simulation reports it.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public final class SimulationExecutor: TaskExecutor, SerialExecutor, Sendable {
    private struct State: ~Copyable {
        var jobs: [UnownedJob] = []
        var driver: pthread_t?
        var foreignEnqueues = 0
        var jobsRun = 0
    }

    private let state = Mutex(State())

    /// Creates an executor with an empty run queue.
    public init() {}

    /// Adds `job` to the end of the run queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let caller = pthread_self()
        state.withLock { state in
            if let driver = state.driver, pthread_equal(driver, caller) == 0 { state.foreignEnqueues += 1 }
            state.jobs.append(job)
        }
    }

    /// How many jobs arrived from a thread other than the simulation's while it ran: nonzero means some
    /// work ran on another executor, and the run is not guaranteed to be reproducible.
    public var foreignEnqueues: Int { state.withLock { $0.foreignEnqueues } }

    /// How many jobs the executor has run.
    public var jobsRun: Int { state.withLock { $0.jobsRun } }

    /// Whether the calling thread is the one draining this executor.
    public var isCurrentThreadDriver: Bool {
        let caller = pthread_self()
        return state.withLock { state in state.driver.map { pthread_equal($0, caller) != 0 } ?? false }
    }

    /// Marks the calling thread as the driver (`true`) or clears it (`false`).
    func setDriver(_ active: Bool) {
        let caller = pthread_self()
        state.withLock { $0.driver = active ? caller : nil }
    }

    /// Runs every queued job, including jobs those jobs enqueue, until the queue is empty; returns how many ran.
    @discardableResult
    func drain() -> Int {
        let serial = asUnownedSerialExecutor()
        let task = asUnownedTaskExecutor()
        var batch: [UnownedJob] = []
        var total = 0
        while true {
            // Swap the whole queue out under the lock and run it outside: jobs enqueued meanwhile form the next
            // batch, so the order stays first in, first out. The emptied buffer goes back, keeping its capacity.
            state.withLock { swap(&batch, &$0.jobs) }
            if batch.isEmpty { return total }
            for job in batch { job.runSynchronously(isolatedTo: serial, taskExecutor: task) }
            total += batch.count
            state.withLock { [count = batch.count] in $0.jobsRun += count }
            batch.removeAll(keepingCapacity: true)
        }
    }

    /// Whether any job waits in the run queue.
    var hasQueuedJobs: Bool { state.withLock { !$0.jobs.isEmpty } }
}
