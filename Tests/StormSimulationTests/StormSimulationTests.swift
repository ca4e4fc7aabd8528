import ResilienceKit
import ResilienceTesting
import Testing

@testable import StormSimulation

/// The storm simulator's measures, and its runs on the deterministic runtime.
@Suite struct StormSimulationTests {
    @Test func seedSummaryCountsPassesAndMedian() {
        let summary = SeedSummary([1, 5, 3, 2]) { $0 < 4 }
        #expect(summary.passCount == 3)
        #expect(summary.median == 2.5)
        #expect(summary.minimum == 1 && summary.maximum == 5)
        #expect(!summary.holds)
        #expect(SeedSummary(Array(repeating: 1, count: 19) + [9]) { $0 < 2 }.holds)
        #expect(!SeedSummary(Array(repeating: 1, count: 18) + [9, 9]) { $0 < 2 }.holds)
    }

    @Test func recoveryIsTheStartOfTheLastHealthyStretch() {
        let measurement = Measurement(
            offered: [10, 10, 10, 10, 10, 10], succeeded: [10, 0, 10, 9, 10, 10], arrivals: [10, 40, 40, 12, 10, 10],
            earlyRequests: 0, sentEarly: 0, latencies: [])
        // Second 3 serves 90 % (< 95 %): healthy from second 4, 3 s after second 1.
        #expect(measurement.recovery(after: 1, until: 6) == 3)
        #expect(measurement.loadRatio(1..<3) == 4)
        #expect(measurement.meanArrivals(0..<2) == 25)
    }

    @Test func nearestRankPercentiles() {
        let measurement = Measurement(
            offered: [], succeeded: [], arrivals: [], earlyRequests: 0, sentEarly: 0,
            latencies: (1...1000).map { Int64($0) * 1_000_000 })
        #expect(measurement.latency(at: 0.5) == .milliseconds(500))
        #expect(measurement.latency(at: 0.999) == .milliseconds(999))
    }

    @Test func aTrafficRunIsReproducibleAndSeesTheOutage() throws {
        let (run, window) = Scenarios.outage(.quick)
        let first = run.measure(StrategyCatalog.noRetry, seed: 5)
        let second = run.measure(StrategyCatalog.noRetry, seed: 5)
        #expect(first.arrivals == second.arrivals)
        #expect(first.succeeded == second.succeeded)
        // Without retries the server sees exactly the offered load, and nothing succeeds during the outage.
        #expect(first.loadRatio(window.fault) == 1)
        #expect(first.succeeded[window.fault.lowerBound + 1] == 0)
        #expect(first.successRate(second: window.fault.upperBound + 2) == 1)
    }

    @Test func everyScenarioFlagIsReadAndBadValuesAreTypedErrors() throws {
        var parameters = ScenarioParameters()
        let flags: [(String, String)] = [
            ("--rate-per-client", "0.1"), ("--offered", "50"), ("--capacity", "120"), ("--outage", "45"),
            ("--stall", "30"), ("--flap", "3,7"), ("--brownout", "0.4"), ("--recovery", "15"), ("--seeds", "4"),
            ("--preset", "interactive"), ("--quota-window", "60"),
        ]
        for (flag, value) in flags {
            #expect(try parameters.read(flag, value: { value }))
        }
        #expect(parameters.ratePerClient == 0.1 && parameters.offered == 50 && parameters.capacity == 120)
        #expect(parameters.outage == 45 && parameters.stall == 30 && parameters.recovery == 15)
        #expect(parameters.flap == ScenarioParameters.Flap(up: 3, down: 7) && parameters.brownout == 0.4)
        #expect(parameters.seedCount == 4 && parameters.preset == "interactive" && parameters.quotaWindow == 60)
        #expect(try parameters.read("--quick", value: { nil }) == false)
        for (flag, value) in [
            ("--flap", "5"), ("--brownout", "1.5"), ("--outage", "-3"), ("--preset", "fastest"),
            ("--rate-per-client", "nan"), ("--seeds", "0"), ("--quota-window", "0"),
        ] {
            #expect(throws: ScenarioParameters.ParseError.self) { try parameters.read(flag, value: { value }) }
        }
        #expect(throws: ScenarioParameters.ParseError.self) { try parameters.read("--offered", value: { nil }) }
    }

    @Test func parametersShapeTheRuns() {
        var parameters = ScenarioParameters()
        parameters.ratePerClient = 0.5
        parameters.offered = 20
        parameters.capacity = 50
        parameters.outage = 7
        parameters.recovery = 9
        let (run, window) = Scenarios.outage(.full, parameters)
        #expect(run.clients(.serverFacing) == 40 && run.clients(.appFacing) == 40)
        #expect(run.rate(.serverFacing) == 0.5)
        #expect(run.server.workers == 5)
        #expect(window.fault == 10..<17 && window.end == 26 && run.duration == .seconds(26))
        parameters.flap = ScenarioParameters.Flap(up: 4, down: 6)
        let flap = Scenarios.flap(.full, parameters)
        let outages = flap.run.server.faults.filter { $0.kind == .outage(status: 503) }
        #expect(
            outages.map(\.start) == [.seconds(4), .seconds(14), .seconds(24), .seconds(34), .seconds(44), .seconds(54)])
        parameters.quotaWindow = 60
        let quota = Scenarios.quota(.full, parameters)
        #expect(quota.quota?.window == 60 && quota.duration == .seconds(180))
        parameters.preset = "standard"
        #expect(parameters.runs(StrategyCatalog.standard) && parameters.runs(StrategyCatalog.noRetryApp))
        #expect(!parameters.runs(StrategyCatalog.interactive) && !parameters.runs(StrategyCatalog.budgetOnly))
    }

    @Test func anOfferedLoadWithoutACapacityKeepsTheScenariosHeadroom() {
        var parameters = ScenarioParameters()
        parameters.offered = 1000
        // 3× the offered load, as the default 300 for 100: 300 workers of 100 ms.
        #expect(Scenarios.outage(.full, parameters).run.server.workers == 300)
        #expect(Scenarios.outage(.quick, parameters).run.server.workers == 300)
        #expect(Scenarios.healthy(.full, parameters).server.workers == 300)
        // Bronson's case keeps its 300 for 280.
        parameters.offered = 560
        #expect(Scenarios.metastable(.full, parameters).run.server.workers == 60)
        // Without --offered the defaults stand; with --capacity, the capacity.
        #expect(Scenarios.outage(.full).run.server.workers == 30)
        parameters.capacity = 120
        #expect(Scenarios.outage(.full, parameters).run.server.workers == 12)
    }

    @Test func theGoalTableAsJSONHasOneObjectPerGoal() {
        var report = StormReport(mode: .quick, seeds: [1, 2])
        report.goals = [
            Goal(
                name: "g", strategy: "s", target: "≤ 1", summary: SeedSummary([0.5, 2]) { $0 <= 1 },
                format: { "\($0)" })
        ]
        #expect(
            GoalTableJSON.render(report)
                == "[\n  {\"goal\": \"g\", \"strategy\": \"s\", \"target\": \"≤ 1\", \"passed\": 1, \"seeds\": 2, "
                + "\"median\": 1.250000, \"holds\": false}\n]\n")
        #expect(!report.allGoalsHold)
    }

    @Test func theContentionModelIsReproducibleAndRetriesUntilDone() {
        let policy = Scenarios.contention[0].policy
        let first = ContentionRun().measure(policy, seed: 3)
        let second = ContentionRun().measure(policy, seed: 3)
        #expect(first.calls == second.calls)
        #expect(first.completed == 100)
        #expect(first.calls > 100)
    }

    /// Coalescing is judged against the requests that found their key in flight upstream: with the coalescing
    /// transport every one of them joins it, and without it each is a request of its own.
    @Test @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
    func coalescingIsJudgedAgainstTheRequestsThatCouldJoin() {
        let run = CoalescingRun(.quick, ScenarioParameters())
        let plain = run.measure(coalesces: false, seed: 2)
        let coalesced = run.measure(coalesces: true, seed: 2)
        #expect(plain.upstreamRequests == plain.callerRequests)
        #expect(plain.foundInFlight > 0)
        #expect(plain.upstreamPerUnjoinable > 1)
        #expect(coalesced.foundInFlight > 0)
        #expect(coalesced.upstreamRequests == coalesced.callerRequests - coalesced.foundInFlight)
        #expect(coalesced.upstreamPerUnjoinable == 1)
    }
}
