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
/// Non-isolated jobs run without isolation (on the task executor only), so a task that calls a non-isolated
/// async function keeps running instead of going back to the end of the queue; jobs of an actor that uses
/// the executor as its serial executor run isolated to it. The run queue is touched without a lock by the
/// driving thread; only jobs from other threads take a lock.
///
/// A job enqueued from another thread while the simulation runs means work escaped to another executor and
/// came back (an unstructured `Task {}`, `Task.detached`, a continuation resumed by a real timer or a
/// real socket): the executor counts it in ``foreignEnqueues`` and the simulation reports it.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public final class SimulationExecutor: TaskExecutor, SerialExecutor, Sendable {
    /// One queued job and whether it runs isolated to the serial executor.
    private struct Entry {
        var job: UnownedJob
        var isolated: Bool
    }

    /// The serial-executor face of the simulation executor: jobs enqueued through it run isolated.
    private final class Isolation: SerialExecutor, Sendable {
        /// Set once, right after the owner's initialiser, before anybody can enqueue.
        nonisolated(unsafe) weak var owner: SimulationExecutor?
        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            guard let owner else { preconditionFailure("a job reached a simulation executor that no longer exists") }
            owner.add(Entry(job: job, isolated: true))
        }
        func checkIsolated() {
            precondition(owner?.isCurrentThreadDriver == true, "not on the simulation's driving thread")
        }
    }

    private struct Foreign: ~Copyable {
        var jobs: [Entry] = []
        var count = 0
    }

    /// The driving thread's identity (0 when no thread drives the executor).
    private let driver = Atomic<UInt>(0)
    /// Jobs from other threads.
    private let foreign = Mutex(Foreign())
    /// Whether `foreign` holds jobs (read without the lock by the driver).
    private let hasForeignJobs = Atomic<Bool>(false)
    /// The run queue; only the driving thread touches it (jobs enqueued before the run starts, from the thread
    /// that then drives it, count as the driver's).
    @exclusivity(unchecked) private nonisolated(unsafe) var queue: [Entry] = []
    @exclusivity(unchecked) private nonisolated(unsafe) var head = 0
    @exclusivity(unchecked) private nonisolated(unsafe) var ran = 0
    private let jobsRunTotal = Atomic<Int>(0)
    private let isolation = Isolation()

    /// Creates an executor with an empty run queue.
    public init() {
        isolation.owner = self
        queue.reserveCapacity(1024)
    }

    /// Adds `job` to the end of the run queue (to run without isolation, on this task executor).
    public func enqueue(_ job: consuming ExecutorJob) {
        add(Entry(job: UnownedJob(job), isolated: false))
    }

    /// The serial executor that actors name as their `unownedExecutor` to run on the simulation.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: isolation)
    }

    private func add(_ entry: Entry) {
        let driver = driver.load(ordering: .relaxed)
        if driver != 0, driver == Self.currentThread() {
            queue.append(entry)
            return
        }
        foreign.withLock { state in
            if driver != 0 { state.count += 1 }
            state.jobs.append(entry)
        }
        hasForeignJobs.store(true, ordering: .releasing)
    }

    /// How many jobs arrived from a thread other than the simulation's while it ran: nonzero means some
    /// work ran on another executor, and the run is not guaranteed to be reproducible.
    public var foreignEnqueues: Int { foreign.withLock { $0.count } }

    /// How many jobs the executor has run.
    public var jobsRun: Int { jobsRunTotal.load(ordering: .relaxed) }

    /// Whether the calling thread is the one draining this executor.
    public var isCurrentThreadDriver: Bool {
        let driver = driver.load(ordering: .relaxed)
        return driver != 0 && driver == Self.currentThread()
    }

    /// Marks the calling thread as the driver (`true`) or clears it (`false`).
    func setDriver(_ active: Bool) {
        driver.store(active ? Self.currentThread() : 0, ordering: .relaxed)
        // Jobs enqueued before the run started (from any thread) join the run queue now, in their order.
        if active { takeForeignJobs() }
    }

    private func takeForeignJobs() {
        guard hasForeignJobs.load(ordering: .acquiring) else { return }
        let jobs = foreign.withLock { state -> [Entry] in
            hasForeignJobs.store(false, ordering: .relaxed)
            defer { state.jobs.removeAll(keepingCapacity: true) }
            return state.jobs
        }
        queue.append(contentsOf: jobs)
    }

    /// Runs every queued job, including jobs those jobs enqueue, until the queue is empty; returns how many ran.
    /// Only the driving thread may call it.
    @discardableResult
    func drain() -> Int {
        let serial = UnownedSerialExecutor(ordinary: isolation)
        let task = asUnownedTaskExecutor()
        var total = 0
        while true {
            while head < queue.count {
                let entry = queue[head]
                head += 1
                if entry.isolated {
                    entry.job.runSynchronously(isolatedTo: serial, taskExecutor: task)
                } else {
                    entry.job.runSynchronously(on: task)
                }
                total += 1
                if head > 4096, head * 2 > queue.count {
                    // A long drain: drop the jobs already run so the queue stays as large as its backlog.
                    queue.removeFirst(head)
                    head = 0
                }
            }
            queue.removeAll(keepingCapacity: true)
            head = 0
            takeForeignJobs()
            if queue.isEmpty { break }
        }
        jobsRunTotal.add(total, ordering: .relaxed)
        return total
    }

    /// Whether any job waits in the run queue.
    var hasQueuedJobs: Bool { head < queue.count || hasForeignJobs.load(ordering: .acquiring) }

    private static func currentThread() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }
}
