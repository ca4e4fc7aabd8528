/// The five scenarios, with the parameters the report prints.
public enum StormScenarios {
    /// The backoff schedule of every scenario but AWS's: base 100 ms, cap 5 s, 4 attempts (3 retries).
    public static let standardSchedule = RetrySchedule(base: .milliseconds(100), cap: .seconds(5), maxAttempts: 4)
    /// AWS's backoff study: base 5 ms, cap 2 s, retry until success (bounded at 100 attempts).
    public static let awsSchedule = RetrySchedule(base: .milliseconds(5), cap: .seconds(2), maxAttempts: 100)

    /// A server of 30 workers × 100 ms = 300 requests per second, 10 ± 2 ms each way.
    public static var standardServer: ServerModel { ServerModel() }

    /// Scenario 1: a full outage (fail fast) under steady load, then recovery.
    public static func outage(_ mode: RunMode) -> Scenario {
        var server = standardServer
        let start: Duration = mode.isQuick ? .seconds(5) : .seconds(10)
        let length: Duration = mode.isQuick ? .seconds(5) : .seconds(10)
        server.faults = [FaultWindow(start: start, duration: length, kind: .failFast)]
        let load: Duration = mode.isQuick ? .seconds(20) : .seconds(50)
        return Scenario(
            id: "outage", title: "Full outage of \(FixedFormat.seconds(length, decimals: 0)) under steady load",
            server: server,
            workload: .steady(requestsPerSecond: 200, for: load, clients: 4, horizon: load + .seconds(10)),
            attemptTimeout: .seconds(1))
    }

    /// Scenario 1, AWS's setup: 100 clients contending for one optimistic-concurrency resource, after an
    /// outage of `outage` (zero reproduces the published study).
    public static func awsContention(outage: Duration) -> Scenario {
        var server = standardServer
        server.contention = true
        if outage > .zero {
            server.faults = [FaultWindow(start: .zero, duration: outage, kind: .failFast)]
        }
        let title =
            outage > .zero
            ? "AWS contention after a \(FixedFormat.seconds(outage, decimals: 0)) outage" : "AWS contention"
        return Scenario(
            id: outage > .zero ? "aws-outage" : "aws", title: title, server: server,
            workload: .batch(count: 100, horizon: .seconds(120)), attemptTimeout: .seconds(1),
            bucket: .milliseconds(100))
    }

    /// Scenario 2: independent failures with probability `p`, from the end of a healthy warm-up on.
    public static func independent(p: Double, mode: RunMode) -> Scenario {
        var server = standardServer
        server.workers = 0
        server.serviceTime = .milliseconds(20)
        let warmUp: Duration = mode.isQuick ? .seconds(3) : .seconds(5)
        let measured: Duration = mode.isQuick ? .seconds(10) : .seconds(30)
        server.faults = [FaultWindow(start: warmUp, duration: measured + .seconds(60), failureProbability: p)]
        return Scenario(
            id: "independent", title: "Independent failures, p = \(FixedFormat.number(p, decimals: 3))",
            server: server,
            workload: .steady(
                requestsPerSecond: 200, for: warmUp + measured, clients: 2, horizon: warmUp + measured + .seconds(30),
                warmUp: warmUp),
            attemptTimeout: .seconds(1))
    }

    /// The failure probabilities swept in scenario 2.
    public static func failureProbabilities(_ mode: RunMode) -> [Double] {
        mode.isQuick
            ? [0.001, 0.01, 0.05, 0.1, 0.2, 0.5, 1.0]
            : [0.001, 0.005, 0.01, 0.02, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0]
    }

    /// Scenario 3: Bronson's metastable case (capacity 300/s, offered `fraction` of it, 1 s timeout, a 10 s
    /// black-hole outage).
    public static func metastable(_ mode: RunMode, offeredFraction: Double = 280.0 / 300.0) -> Scenario {
        var server = standardServer
        server.faults = [FaultWindow(start: .seconds(10), duration: .seconds(10), kind: .blackHole)]
        let load: Duration = mode.isQuick ? .seconds(40) : .seconds(80)
        let rate = server.capacity * offeredFraction
        return Scenario(
            id: "metastable",
            title: "Metastable: \(FixedFormat.number(rate, decimals: 0)) req/s offered to 300 req/s, 10 s outage",
            server: server,
            workload: .steady(requestsPerSecond: rate, for: load, clients: 10, horizon: load + .seconds(10)),
            attemptTimeout: .seconds(1))
    }

    /// The offered loads (fractions of capacity) swept to find the highest stable one.
    public static func stabilityLoads(_ mode: RunMode) -> [Double] {
        mode.isQuick ? [0.9] : [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95]
    }

    /// Scenario 4: a brownout: half the requests fail for a minute.
    public static func brownout(_ mode: RunMode) -> Scenario {
        var server = standardServer
        let length: Duration = mode.isQuick ? .seconds(10) : .seconds(60)
        server.faults = [FaultWindow(start: .seconds(10), duration: length, failureProbability: 0.5, kind: .failFast)]
        let load = length + .seconds(30)
        return Scenario(
            id: "brownout", title: "Brownout: 50% of requests fail for \(FixedFormat.seconds(length, decimals: 0))",
            server: server,
            workload: .steady(requestsPerSecond: 200, for: load, clients: 4, horizon: load + .seconds(10)),
            attemptTimeout: .seconds(1))
    }

    /// Scenario 5: tail latency, 5 % of responses slow (100 ms plus an exponential tail of mean 300 ms).
    public static func tail(_ mode: RunMode) -> Scenario {
        var server = standardServer
        server.workers = 0
        server.serviceTime = .milliseconds(20)
        server.serviceSpread = 0.5
        server.slowFraction = 0.05
        server.slowServiceMinimum = .milliseconds(100)
        server.slowServiceTailMean = .milliseconds(300)
        let load: Duration = mode.isQuick ? .seconds(35) : .seconds(125)
        return Scenario(
            id: "tail", title: "Tail latency: 5% of responses are slow (100 ms + exponential, mean 300 ms)",
            server: server,
            workload: .steady(requestsPerSecond: 400, for: load, clients: 4, horizon: load + .seconds(10)),
            attemptTimeout: .seconds(10), bucket: .seconds(1))
    }
}
