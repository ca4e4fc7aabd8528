import ResilienceKit
import ResilienceTesting

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension Scenarios {
    /// A healthy server (as in the outage, no fault) and busy keys: 50 requests/s per client
    /// (`--rate-per-client`), 100 requests/s in all (`--offered`), for 60 s (20 s in quick mode), on a server of
    /// 3× the offered load unless `--capacity` says otherwise. The offered load is not scaled down in quick mode,
    /// since the per-key rate is the point.
    static func healthy(_ mode: RunMode, _ parameters: ScenarioParameters = .init()) -> TrafficRun {
        var parameters = parameters
        let offered = parameters.offered ?? 100
        parameters.offered = offered
        return TrafficRun(
            server: server(mode, parameters, faults: []), offeredPerSecond: offered,
            duration: .seconds(mode == .full ? 60 : 20), ratePerClient: parameters.ratePerClient ?? 50)
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension StormReport {
    /// A healthy server at 50 requests/s per key: a preset adds no queueing (p99 latency within 1 % of the
    /// no-retry row's, seed by seed: the same seed gives the same server) and fails nothing.
    mutating func addHealthy() {
        let run = Scenarios.healthy(mode, parameters)
        let strategies = selected([StrategyCatalog.noRetry] + StrategyCatalog.shipped)
        let results = measure(run, strategies)
        let baseline = results[0]
        var rows: [[String]] = []
        for (strategy, measurements) in zip(strategies, results) {
            let p99 = measurements.map { $0.latency(at: 0.99)?.seconds ?? .infinity }
            let failed = measurements.map { Double($0.totalOffered - $0.totalSucceeded) }
            rows.append([
                strategy.name, strategy.role.rawValue, Self.cell(SeedSummary(p99), Self.milliseconds),
                Self.cell(SeedSummary(failed), { FixedFormat.number($0, decimals: 0) }),
            ])
            guard strategy.role == .shipped else { continue }
            let ratios = zip(p99, baseline).map { $0 / ($1.latency(at: 0.99)?.seconds ?? .infinity) }
            goals.append(
                Goal(
                    name: "Healthy server, busy keys: p99 latency within 1 % of no retry's",
                    strategy: strategy.name, target: "≤ 1.01×", summary: SeedSummary(ratios) { $0 <= 1.01 },
                    format: Self.ratio))
            goals.append(
                Goal(
                    name: "Healthy server, busy keys: no request rejected or failed", strategy: strategy.name,
                    target: "0", summary: SeedSummary(failed) { $0 == 0 },
                    format: { FixedFormat.number($0, decimals: 0) }))
        }
        tables.append(
            ReportTable(
                title: "Healthy server, busy keys",
                notes: [
                    "server: \(run.server.workers) workers × exponential \(Scenarios.meanServiceMilliseconds(run.server)) ms = \(FixedFormat.number(run.server.capacity, decimals: 0)) requests/s, no fault",
                    "clients: \(FixedFormat.number(run.offeredPerSecond, decimals: 0)) requests/s, \(FixedFormat.number(run.rate(.serverFacing)))/s per client (\(run.clients(.serverFacing)) clients) for \(FixedFormat.number(run.duration.seconds, decimals: 0)) s; every row the same traffic",
                    "p99 = latency of the successful requests; failed = requests that did not succeed (the server fails none); median [min – max] over \(seeds.count) seeds",
                ],
                header: ["strategy", "role", "p99 latency", "failed"], rows: rows))
    }
}
