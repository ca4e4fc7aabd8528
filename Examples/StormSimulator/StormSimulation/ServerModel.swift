/// The simulated server: capacity, latency, queueing, and the faults it suffers.
///
/// Requests travel to the server with a one-way network delay, wait in a FIFO queue for one of `workers`
/// workers, take a service time, and travel back. The server keeps working on a request whose client has
/// already timed out (the wasted work that sustains metastable failures). With `workers == 0` capacity is
/// unlimited (no queueing). With `contention` the server is the single optimistic-concurrency resource of
/// AWS's backoff study instead: a write succeeds only if nobody wrote since the same attempt's read.
public struct ServerModel: Hashable, Sendable {
    /// Parallel workers; 0 (or less) means unlimited capacity.
    public var workers: Int = 30
    /// Mean service time of a normal request.
    public var serviceTime: Duration = .milliseconds(100)
    /// Service times vary uniformly by ± this fraction of ``serviceTime``.
    public var serviceSpread: Double = 0.1
    /// The share of responses that are slow (tail latency).
    public var slowFraction: Double = 0
    /// The shortest slow service time.
    public var slowServiceMinimum: Duration = .milliseconds(100)
    /// The mean of the exponential tail added to ``slowServiceMinimum`` (zero: every slow response takes
    /// exactly the minimum).
    public var slowServiceTailMean: Duration = .milliseconds(300)
    /// Requests that may wait for a worker; beyond it the server sheds load with an immediate 503.
    public var queueLimit: Int = 3_000
    /// Mean one-way network delay.
    public var networkDelay: Duration = .milliseconds(10)
    /// One-way delays vary uniformly by ± this much.
    public var networkDelaySpread: Duration = .milliseconds(2)
    /// Independent probability that any request fails (outside and inside fault windows).
    public var failureProbability: Double = 0
    /// Outages and brownouts.
    public var faults: [FaultWindow] = []
    /// True for AWS's optimistic-concurrency contention model.
    public var contention: Bool = false

    /// A server with the default settings (30 workers × 100 ms = 300 requests per second).
    public init() {}

    /// Requests per second the server completes when saturated (infinite when `workers <= 0`).
    public var capacity: Double {
        guard workers > 0 else { return .infinity }
        let mean =
            serviceTime.seconds * (1 - slowFraction) + slowFraction
            * (slowServiceMinimum.seconds + slowServiceTailMean.seconds)
        return Double(workers) / mean
    }
}
