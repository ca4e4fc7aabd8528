/// One experiment: a server, a workload, the clients' timeout, and how finely to record time.
public struct Scenario: Sendable {
    /// A short identifier (`outage`, `metastable` …).
    public var id: String
    /// A human-readable title.
    public var title: String
    /// The server.
    public var server: ServerModel
    /// The logical requests.
    public var workload: Workload
    /// The client's per-attempt timeout; `nil` waits forever.
    public var attemptTimeout: Duration?
    /// The width of one time-series bucket.
    public var bucket: Duration

    /// Creates a scenario.
    public init(
        id: String, title: String, server: ServerModel, workload: Workload, attemptTimeout: Duration?,
        bucket: Duration = .seconds(1)
    ) {
        self.id = id
        self.title = title
        self.server = server
        self.workload = workload
        self.attemptTimeout = attemptTimeout
        self.bucket = bucket
    }

    /// The span from the first fault's start to the last fault's end, if any.
    public var faultSpan: (start: Duration, end: Duration)? {
        guard let first = server.faults.map(\.start).min(), let last = server.faults.map(\.end).max() else {
            return nil
        }
        return (first, last)
    }
}
