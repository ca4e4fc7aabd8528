import ResilienceKit
import ResilienceTesting

/// The scenarios' settings, in one place so the report can print them.
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
enum Scenarios {
    /// 30 workers × exponential 100 ms = 300 requests/s for the scenario's 100 offered requests/s (scaled down in
    /// quick mode); network |N(10 ms, 2 ms)| each way. `--capacity` sets the capacity; without it, an `--offered`
    /// load scales it with the traffic, so the scenario keeps its headroom (`workers` for `defaultOffered`
    /// requests/s) instead of overloading a server sized for its default traffic. The capacity is exact: the
    /// workers are the capacity × the mean service time, rounded (at least one), and when that is not a whole
    /// number the service time is stretched so those workers serve exactly the capacity asked for (13.3
    /// requests/s: one worker of 75 ms; 105: 11 workers of 105 ms).
    static func server(
        _ mode: RunMode, _ parameters: ScenarioParameters, faults: [SimulatedFault],
        serviceTime: LatencyDistribution = .exponential(mean: .milliseconds(100)), meanServiceSeconds: Double = 0.1,
        workers: Int = 30, defaultOffered: Double = 100
    ) -> SimulatedServer.Configuration {
        let capacity =
            parameters.capacity
            ?? Double(workers) / meanServiceSeconds * (parameters.offered.map { $0 / defaultOffered } ?? mode.scale)
        let busyWorkers = capacity * meanServiceSeconds
        let count = max(1, Int(busyWorkers.rounded()))
        // Whole numbers of workers (the grid's and the defaults') keep their service time bit for bit.
        let stretch = Double(count) / busyWorkers
        return SimulatedServer.Configuration(
            workers: count, queueLimit: 100_000,
            serviceTime: abs(stretch - 1) < 1e-9 ? serviceTime : serviceTime.stretched(by: stretch),
            networkDelay: .absoluteNormal(mean: .milliseconds(10), standardDeviation: .milliseconds(2)), faults: faults)
    }

    /// A server's mean service time in whole milliseconds, for the reports (`100` unless the capacity asked
    /// for stretched it).
    static func meanServiceMilliseconds(_ server: SimulatedServer.Configuration) -> String {
        FixedFormat.number(server.serviceTime.mean.seconds * 1000, decimals: 0)
    }

    /// Requests per second all clients offer: `--offered`, else 100 (scaled down in quick mode).
    static func offered(_ mode: RunMode, _ parameters: ScenarioParameters) -> Double {
        parameters.offered ?? 100 * mode.scale
    }

    /// Seconds measured after a fault ends: `--recovery`, else 60 (20 in quick mode), long enough for the
    /// slowest preset's recovery goal.
    static func recovery(_ mode: RunMode, _ parameters: ScenarioParameters) -> Int {
        parameters.recovery ?? (mode == .full ? 60 : 20)
    }

    /// A fault window and the recovery measured after it, in whole seconds of the run.
    struct FaultWindow: Sendable {
        /// The seconds the fault lasts.
        var fault: Range<Int>
        /// The end of the measured recovery (the end of the run).
        var end: Int
    }

    /// Full outage (`503` at once) from 10 s for 20 s (`--outage`), then the recovery; clients offer 100
    /// requests/s.
    static func outage(
        _ mode: RunMode, _ parameters: ScenarioParameters = .init()
    ) -> (
        run: TrafficRun, window: FaultWindow
    ) {
        let length = parameters.outage ?? (mode == .full ? 20 : 10)
        let end = 10 + length + recovery(mode, parameters)
        let run = TrafficRun(
            server: server(
                mode, parameters,
                faults: [SimulatedFault(.outage(status: 503), from: .seconds(10), until: .seconds(10 + length))]),
            offeredPerSecond: offered(mode, parameters), duration: .seconds(end),
            ratePerClient: parameters.ratePerClient)
        return (run, FaultWindow(fault: 10..<(10 + length), end: end))
    }

    /// The brownout levels: `--brownout`, else 0.05 … 0.7 (two levels in quick mode).
    static func brownoutLevels(_ mode: RunMode, _ parameters: ScenarioParameters) -> [Double] {
        parameters.brownout.map { [$0] } ?? mode.brownoutLevels
    }

    /// A brownout failing each request with probability `p` (`503` after service) for the whole run: 200 s in
    /// full mode (20,000 requests per seed at the base point), 10 s in quick mode. The brownout bound goal
    /// judges each seed at the failures the server produced in it, so the server's coin flips, √(p(1 − p) ÷ N)
    /// of a seed's success (1.6 pp at p = 0.5 over 1,000 requests), cancel out (`BrownoutBound`).
    static func brownout(_ mode: RunMode, p: Double, _ parameters: ScenarioParameters = .init()) -> TrafficRun {
        TrafficRun(
            server: server(
                mode, parameters,
                faults: [
                    SimulatedFault(.brownout(failureProbability: p, status: 503), from: .zero, until: .seconds(3600))
                ]),
            offeredPerSecond: offered(mode, parameters), duration: .seconds(mode == .full ? 200 : 10),
            ratePerClient: parameters.ratePerClient)
    }

    /// A flapping server: down (`503` at once) for DOWN seconds in every UP + DOWN (`--flap`, default 5,5),
    /// on top of a brownout (`--brownout`, default 0.2), for 60 s (20 s in quick mode).
    static func flap(
        _ mode: RunMode, _ parameters: ScenarioParameters = .init()
    ) -> (
        run: TrafficRun, flap: ScenarioParameters.Flap, p: Double
    ) {
        let flap = parameters.flap ?? ScenarioParameters.Flap(up: 5, down: 5)
        let p = parameters.brownout ?? 0.2
        let length = mode == .full ? 60 : 20
        var faults = [
            SimulatedFault(.brownout(failureProbability: p, status: 503), from: .zero, until: .seconds(3600))
        ]
        for start in stride(from: flap.up, to: length, by: flap.up + flap.down) {
            faults.append(
                SimulatedFault(.outage(status: 503), from: .seconds(start), until: .seconds(start + flap.down)))
        }
        let run = TrafficRun(
            server: server(mode, parameters, faults: faults), offeredPerSecond: offered(mode, parameters),
            duration: .seconds(length), ratePerClient: parameters.ratePerClient)
        return (run, flap, p)
    }

    /// Bronson et al.'s case: 300 requests/s of capacity (30 workers × 100 ms), 280 offered, the server
    /// stops serving for 10 s (`--stall`) from 10 s (requests queue), then the recovery (40 s; 20 s in quick
    /// mode; `--recovery`).
    static func metastable(
        _ mode: RunMode, _ parameters: ScenarioParameters = .init()
    ) -> (
        run: TrafficRun, stallEnd: Int, end: Int
    ) {
        let stallEnd = 10 + (parameters.stall ?? 10)
        let end = stallEnd + (parameters.recovery ?? (mode == .full ? 40 : 20))
        let run = TrafficRun(
            server: server(
                mode, parameters, faults: [SimulatedFault(.stall, from: .seconds(10), until: .seconds(stallEnd))],
                serviceTime: .constant(.milliseconds(100)), defaultOffered: 280),
            offeredPerSecond: parameters.offered ?? 280 * mode.scale, duration: .seconds(end),
            ratePerClient: parameters.ratePerClient)
        return (run, stallEnd, end)
    }

    /// Each client may send 2 requests/s; beyond that `429` with `Retry-After: 30`.
    static func rateLimit(_ mode: RunMode, _ parameters: ScenarioParameters = .init()) -> TrafficRun {
        TrafficRun(
            server: server(
                mode, parameters,
                faults: [
                    SimulatedFault(
                        .rateLimit(requestsPerSecond: 2, retryAfter: .seconds(30)), from: .zero, until: .seconds(3600))
                ]),
            offeredPerSecond: offered(mode, parameters), duration: .seconds(mode == .full ? 60 : 30),
            ratePerClient: parameters.ratePerClient)
    }

    /// 1 % of responses take 1–2 s more (a slow minority); 60 workers, so capacity is no concern.
    static func tail(_ mode: RunMode, _ parameters: ScenarioParameters = .init()) -> TrafficRun {
        TrafficRun(
            server: server(
                mode, parameters, faults: [],
                serviceTime: .mixture(
                    base: .exponential(mean: .milliseconds(20)), tail: .uniform(.seconds(1), .seconds(2)),
                    probability: 0.01),
                meanServiceSeconds: 0.99 * 0.02 + 0.01 * 1.5, workers: 60),
            offeredPerSecond: offered(mode, parameters), duration: .seconds(mode == .full ? 60 : 20),
            ratePerClient: parameters.ratePerClient)
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

    /// The hedging row's stage without its extra-load bound (`maxExtraLoad: .infinity`): what hedges cost a
    /// server that slows down until every call outlasts the delay, where each call is sent twice.
    static let unboundedHedged = Strategy(
        "calibration: HedgingStrategy(100 ms) without its load bound", role: .calibration,
        color: StrategyCatalog.Color.calibration
    ) { clock, random in
        NestedPipeline(
            outer: Pipeline { HedgingStrategy(delay: hedgeDelay, maxExtraLoad: .infinity) },
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

extension LatencyDistribution {
    /// The same distribution with every duration multiplied by `factor` (its mean too).
    func stretched(by factor: Double) -> LatencyDistribution {
        switch self {
        case .constant(let value): .constant(value * factor)
        case .uniform(let low, let high): .uniform(low * factor, high * factor)
        case .exponential(let mean): .exponential(mean: mean * factor)
        case .absoluteNormal(let mean, let deviation):
            .absoluteNormal(mean: mean * factor, standardDeviation: deviation * factor)
        case .logNormal(let median, let sigma): .logNormal(median: median * factor, sigma: sigma)
        case .mixture(let base, let tail, let probability):
            .mixture(base: base.stretched(by: factor), tail: tail.stretched(by: factor), probability: probability)
        }
    }
}
