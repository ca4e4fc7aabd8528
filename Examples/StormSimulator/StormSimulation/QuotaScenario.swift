import ResilienceKit
import ResilienceTesting

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension Scenarios {
    /// The window of the advertised quota, in seconds, unless `--quota-window` names another.
    static let quotaWindow = 10

    /// A healthy server behind a per-client quota it advertises on its `200`s: half of what a client offers
    /// in a window (10 s, or `--quota-window`; of the quieter traffic profile; at least one request), so every
    /// client spends its quota in every window; clients as in the outage (`--rate-per-client`, `--offered`),
    /// for 60 s (30 s in quick mode), and at least three windows.
    static func quota(_ mode: RunMode, _ parameters: ScenarioParameters = .init()) -> TrafficRun {
        let window = parameters.quotaWindow ?? quotaWindow
        var run = TrafficRun(
            server: server(mode, parameters, faults: []), offeredPerSecond: offered(mode, parameters),
            duration: .seconds(max(mode == .full ? 60 : 30, 3 * window)), ratePerClient: parameters.ratePerClient)
        let perWindow = min(run.rate(.serverFacing), run.rate(.appFacing)) * Double(window)
        run.quota = QuotaServer.Quota(requests: max(1, Int(perWindow / 2)), window: window)
        return run
    }
}

@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
extension StormReport {
    /// A `200` whose `RateLimit` field says the quota is spent (`r=0;t=T`): the next request must wait T.
    mutating func addQuota() {
        let run = Scenarios.quota(mode, parameters)
        let strategies = selected([StrategyCatalog.noRetry] + StrategyCatalog.shipped)
        let results = measure(run, strategies)
        var rows: [[String]] = []
        let count: @Sendable (Double) -> String = { FixedFormat.number($0, decimals: 0) }
        for (strategy, measurements) in zip(strategies, results) {
            let sent = SeedSummary(measurements.map { Double($0.sentEarly) })
            let success = SeedSummary(measurements.map(\.successRate))
            rows.append([
                strategy.name, strategy.role.rawValue, Self.cell(sent, count), Self.cell(success, Self.percent),
            ])
            guard strategy.role == .shipped else { continue }
            goals.append(
                Goal(
                    name: "Quota spent on a 200 (RateLimit r=0;t=T): zero requests sent before T",
                    strategy: strategy.name, target: "0", summary: SeedSummary(sent.values) { $0 == 0 }, format: count))
        }
        let quota = run.quota.map { "\($0.requests) requests per \($0.window) s" } ?? "none"
        tables.append(
            ReportTable(
                title: "Server quota advertised on 200s",
                notes: [
                    "server: healthy; each client may send \(quota) (fixed windows); the 200 that spends it carries RateLimit: \"default\";r=0;t=T and RateLimit-Policy; beyond it, 429 with Retry-After: T",
                    "clients: \(FixedFormat.number(run.offeredPerSecond, decimals: 0)) requests/s, \(FixedFormat.number(run.rate(.serverFacing)))/s per client; every row the same traffic",
                    "sent early = requests sent after a response said the quota was spent (or asked to retry after) and before the time it named (the goal)",
                ],
                header: ["strategy", "role", "sent early", "success"], rows: rows))
    }
}
