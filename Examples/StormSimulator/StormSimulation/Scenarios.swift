import ResilienceKit
import ResilienceTesting

/// The scenarios' settings, in one place so the report can print them.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
enum Scenarios {
    /// 30 workers × exponential 100 ms = 300 requests/s (scaled down in quick mode); network |N(10 ms, 2 ms)|
    /// each way.
    static func server(
        _ mode: RunMode, faults: [SimulatedFault],
        serviceTime: LatencyDistribution = .exponential(mean: .milliseconds(100)),
        workers: Int = 30
    ) -> SimulatedServer.Configuration {
        SimulatedServer.Configuration(
            workers: max(1, Int((Double(workers) * mode.scale).rounded())), queueLimit: 100_000,
            serviceTime: serviceTime,
            networkDelay: .absoluteNormal(mean: .milliseconds(10), standardDeviation: .milliseconds(2)), faults: faults)
    }

    static func offered(_ mode: RunMode) -> Double { 100 * mode.scale }

    /// Full outage (`503` at once) from 10 s for 20 s; clients offer 100 requests/s for 50 s.
    static func outage(_ mode: RunMode) -> (run: TrafficRun, window: Range<Int>) {
        let length = mode == .full ? 20 : 10
        let run = TrafficRun(
            server: server(
                mode, faults: [SimulatedFault(.outage(status: 503), from: .seconds(10), until: .seconds(10 + length))]),
            offeredPerSecond: offered(mode), duration: .seconds(length + 30))
        return (run, 10..<(10 + length))
    }

    /// A brownout failing each request with probability `p` (`503` after service) for the whole run: 200 s in
    /// full mode, 20,000 requests per seed, so one seed's success rate has a sampling noise of about 0.2 pp at
    /// p = 0.3 (0.5 pp with the 3,000 of a 30 s run) against the 0.5 pp the 1 − pⁿ goal allows.
    static func brownout(_ mode: RunMode, p: Double) -> TrafficRun {
        TrafficRun(
            server: server(
                mode,
                faults: [
                    SimulatedFault(.brownout(failureProbability: p, status: 503), from: .zero, until: .seconds(3600))
                ]),
            offeredPerSecond: offered(mode), duration: .seconds(mode == .full ? 200 : 10))
    }

    /// Bronson et al.'s case: 300 requests/s of capacity (30 workers × 100 ms), 280 offered, the server
    /// stops serving for 10 s from 10 s (requests queue), clients run for 60 s.
    static func metastable(_ mode: RunMode) -> (run: TrafficRun, stallEnd: Int, end: Int) {
        let end = mode == .full ? 60 : 40
        let run = TrafficRun(
            server: server(
                mode, faults: [SimulatedFault(.stall, from: .seconds(10), until: .seconds(20))],
                serviceTime: .constant(.milliseconds(100))),
            offeredPerSecond: 280 * mode.scale, duration: .seconds(end))
        return (run, 20, end)
    }

    /// Each client may send 2 requests/s; beyond that `429` with `Retry-After: 30`.
    static func rateLimit(_ mode: RunMode) -> TrafficRun {
        TrafficRun(
            server: server(
                mode,
                faults: [
                    SimulatedFault(
                        .rateLimit(requestsPerSecond: 2, retryAfter: .seconds(30)), from: .zero, until: .seconds(3600))
                ]),
            offeredPerSecond: offered(mode), duration: .seconds(mode == .full ? 60 : 30))
    }

    /// 1 % of responses take 1–2 s more (a slow minority); 60 workers, so capacity is no concern.
    static func tail(_ mode: RunMode) -> TrafficRun {
        TrafficRun(
            server: server(
                mode, faults: [],
                serviceTime: .mixture(
                    base: .exponential(mean: .milliseconds(20)), tail: .uniform(.seconds(1), .seconds(2)),
                    probability: 0.01),
                workers: 60),
            offeredPerSecond: offered(mode), duration: .seconds(mode == .full ? 60 : 20))
    }

    /// The hedge delay of the hedging row: about the 98th percentile of the healthy latency.
    static let hedgeDelay = Duration.milliseconds(100)

    /// The metastable case's calibration row: a 1 s timeout and one immediate retry.
    static let bronson = Strategy(
        "calibration: 1 s timeout + 1 retry", role: .calibration, color: StrategyCatalog.Color.calibration
    ) { _, random in
        Pipeline {
            RetryStrategy(
                policy: StandardRetryPolicy(maxAttempts: 2, backoff: .constant(.zero), jitter: .none), random: random)
            TimeoutStrategy(.seconds(1))
        }
    }

    /// `Pipeline.standard` with the real `HedgingStrategy` around it (a tuned variant: hedging is not in a preset).
    static let hedged = Strategy(
        "Pipeline.standard + HedgingStrategy(100 ms)", role: .tuned, color: StrategyCatalog.Color.tuned
    ) { clock, random in
        NestedPipeline(
            outer: Pipeline { HedgingStrategy(delay: hedgeDelay) },
            inner: Pipeline.standard(clock: clock, random: random))
    }

    /// The AWS study's backoffs (base 5 ms, cap 2 s; the study's first retry waits 2 × base, so the library's
    /// base is 10 ms) and the shipped default's.
    static let contention: [(name: String, color: String, policy: StandardRetryPolicy, anchor: Double?)] = [
        (
            "calibration: full jitter", StrategyCatalog.Color.fullJitter,
            StandardRetryPolicy(
                backoff: .exponential(base: .milliseconds(10), multiplier: 2, cap: .seconds(2)), jitter: .full), 795
        ),
        (
            "calibration: exponential, no jitter", StrategyCatalog.Color.exponential,
            StandardRetryPolicy(
                backoff: .exponential(base: .milliseconds(10), multiplier: 2, cap: .seconds(2)), jitter: .none), 1850
        ),
        (
            "calibration: no backoff", StrategyCatalog.Color.noBackoff,
            StandardRetryPolicy(backoff: .constant(.zero), jitter: .none), 2420
        ),
        ("StandardRetryPolicy.standard's backoff", StrategyCatalog.Color.standard, StandardRetryPolicy.standard, nil),
        (
            "StandardRetryPolicy.interactive's backoff", StrategyCatalog.Color.interactive,
            StandardRetryPolicy.interactive, nil
        ),
        (
            "StandardRetryPolicy.background's backoff", StrategyCatalog.Color.background,
            StandardRetryPolicy.background, nil
        ),
    ]
}
