/// The logical requests clients want to make.
public struct Workload: Hashable, Sendable {
    /// Poisson arrivals per second over ``duration`` (0 for none).
    public var requestsPerSecond: Double = 0
    /// How long new requests keep arriving.
    public var duration: Duration = .zero
    /// Requests that all start at time zero (AWS's contending clients).
    public var batchSize: Int = 0
    /// The simulation stops at this time; requests still open then count as unfinished.
    public var horizon: Duration = .seconds(60)
    /// The number of independent clients; each has its own breaker, budget and limiter.
    public var clients: Int = 10
    /// Requests started before this run normally (policies learn from them) but are left out of the totals,
    /// so the measurements describe a system in its steady state, not one starting cold.
    public var warmUp: Duration = .zero

    /// A workload with no requests; set the fields you need.
    public init() {}

    /// An open-loop Poisson workload.
    public static func steady(
        requestsPerSecond: Double, for duration: Duration, clients: Int, horizon: Duration,
        warmUp: Duration = .seconds(5)
    ) -> Workload {
        var workload = Workload()
        workload.warmUp = warmUp
        workload.requestsPerSecond = requestsPerSecond
        workload.duration = duration
        workload.clients = clients
        workload.horizon = horizon
        return workload
    }

    /// `count` requests from `count` clients, all starting at time zero.
    public static func batch(count: Int, horizon: Duration) -> Workload {
        var workload = Workload()
        workload.batchSize = count
        workload.clients = count
        workload.horizon = horizon
        return workload
    }
}
