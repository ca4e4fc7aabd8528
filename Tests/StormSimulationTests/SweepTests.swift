import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

@testable import StormSimulation

/// The sweep's grid, its goals' bounds, its new scenarios and its output.
@Suite struct SweepTests {
    @Test func theOutageBoundIsAFunctionOfTheRate() {
        #expect(OutageLoadBound.maximum(rate: 1) == 1.10)
        #expect(OutageLoadBound.maximum(rate: 50) == 1.10)
        #expect(abs(OutageLoadBound.maximum(rate: 0.02) - 1.5) < 1e-12)
        #expect(OutageLoadBound.maximum(rate: 0.001) == 1.5)
        // ln(1/0.1) ÷ ln 50 = 0.5886…: 1.10 + 0.40 × 0.5886 = 1.3354.
        #expect(abs(OutageLoadBound.maximum(rate: 0.1) - 1.3354) < 1e-4)
        let rates = stride(from: 0.02, through: 1, by: 0.01).map { $0 }
        let bounds = rates.map(OutageLoadBound.maximum(rate:))
        #expect(zip(bounds, bounds.dropFirst()).allSatisfy { $0 >= $1 })
    }

    @Test func theBudgetBoundFollowsFromTheBudgetsSettings() {
        let budget = RetryBudgetConfiguration(ratio: 0.1, minimumPerSecond: 1.0 / 60, window: .seconds(30), buckets: 30)
        // Without requests only the floor counts: half a token rounds down to no retry.
        #expect(RetryBudgetBound.retriesPerWindow(budget, rate: 0) == 0)
        // A steady key: the window's n is Poisson, and whole retries are ⌊0.1 n + ½⌋ (n ≥ 5 for the first).
        let quiet = RetryBudgetBound.retriesPerWindow(budget, rate: 0.02)
        #expect(quiet > 0 && quiet < 0.001)
        // λ = 3: P(N ≥ 5) + P(N ≥ 15) + … = 0.1847 (to four places).
        #expect(abs(RetryBudgetBound.retriesPerWindow(budget, rate: 0.1) - 0.1847) < 1e-3)
        // At 100 requests/s a window holds ≈ 3,000 requests: ≈ 300 retries, 10 % of the requests.
        #expect(abs(RetryBudgetBound.retriesPerRequest(budget, rate: 100) - 0.1) < 0.001)
        // A 20 s outage is one chunk (at most 29 s): the requests of the 30 + 20 s ending with it count. A 30 s
        // outage is two chunks of 15 s, each counting the requests of 30 + 15 s.
        let one = RetryBudgetBound.outageLoad(budget, rate: 4, outage: 20, attempts: 3)
        let two = RetryBudgetBound.outageLoad(budget, rate: 4, outage: 30, attempts: 3)
        #expect(abs(one - (1 + RetryBudgetBound.retriesPerWindow(budget, rate: 4, span: 50) / 80)) < 1e-12)
        #expect(abs(two - (1 + 2 * RetryBudgetBound.retriesPerWindow(budget, rate: 4, span: 45) / 120)) < 1e-12)
        // ⌊0.1 × 200 + ½⌋ = 20 retries for the 200 requests of 50 s at 4/s: 1.25× over a 20 s outage.
        #expect(abs(one - 1.25) < 0.01)
        // No request makes more than its attempts, however short the outage.
        #expect(RetryBudgetBound.outageLoad(budget, rate: 50, outage: 0.1, attempts: 2) == 2)
        #expect(RetryBudgetBound.outageLoad(budget, rate: 50, outage: 0.1, attempts: 1) == 1)
    }

    @Test func presetRowsShareOneScopePerClientAcrossItsKeys() async throws {
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        var preset = PipelinePreset.standard
        preset.retry = nil
        let row = Strategy("standard without retry", role: .tuned, color: "#000000", preset: preset)
        let keys = row.pipelines(clock: clock, random: SharedRandomSource(seed: 1), keys: 4)
        #expect(keys.count == 4)
        let context = ResilienceContext(key: "jobs", clock: clock)
        // Five timeouts a second, spread over the keys for a whole 10 s window (no key alone reaches the
        // breaker's 40 calls), trip the one breaker of the client's host for every key.
        for step in 0...50 {
            if step > 0 { manual.advance(by: .milliseconds(200)) }
            _ = try? await keys[step % keys.count].execute(context) { _ -> Int in
                throw ResilienceError(.attemptTimedOut)
            }
        }
        let rejected = await #expect(throws: ResilienceError.self) { try await keys[3].execute(context) { _ in 1 } }
        #expect(rejected?.code == .circuitOpen)
        // A baseline row sends every key through its client's one pipeline.
        let baseline = StrategyCatalog.noRetry.pipelines(clock: clock, random: SharedRandomSource(seed: 1), keys: 4)
        #expect(baseline.count == 4)
    }

    @Test func theGridSpansWhereUsersLive() throws {
        let points = SweepGrid.points
        #expect(Set(points).count == points.count)
        #expect(points.allSatisfy { StormReport.scenarioNames.contains($0.scenario) })
        let traffic = points.filter { $0.parameters.ratePerClient != nil }
        let rates = traffic.compactMap(\.parameters.ratePerClient)
        #expect(rates.min() == 0.02 && rates.max() == 50)
        let clients = traffic.map { Int((($0.parameters.offered ?? 0) / ($0.parameters.ratePerClient ?? 1)).rounded()) }
        #expect(clients.min() == 1 && clients.max() == 2000)
        let headroom = traffic.map { ($0.parameters.capacity ?? 0) / ($0.parameters.offered ?? 1) }
        #expect(abs((headroom.min() ?? 0) - 1.05) < 1e-9 && abs((headroom.max() ?? 0) - 10) < 1e-9)
        let outages = points.compactMap(\.parameters.outage)
        #expect(outages.min() == 2 && outages.max() == 300)
        // Stalls from 5 s to 120 s, some past the longest attempt timeout of a preset (60 s).
        let stalls = points.compactMap(\.parameters.stall)
        #expect(stalls.min() == 5 && stalls.max() == 120)
        let longestTimeout = [PipelinePreset.standard, .interactive, .background].compactMap(\.attemptTimeout).max()
        #expect(stalls.contains { Duration.seconds($0) > (longestTimeout ?? .zero) })
        let levels = points.filter { $0.scenario == "brownout" }.compactMap(\.parameters.brownout)
        #expect(levels.min() == 0 && levels.max() == 0.9)
        #expect(points.contains { $0.parameters.flap != nil })
        for scenario in ["healthy", "rate-limit", "quota", "contention"] {
            #expect(points.contains { $0.scenario == scenario })
        }
        // Every fault point measures the recovery after it.
        #expect(
            points.filter { $0.parameters.outage != nil || $0.parameters.stall != nil }.allSatisfy {
                $0.parameters.recovery == SweepGrid.recovery
            })
    }

    @Test func theQuickFormKeepsTheEndsOfEveryAxis() {
        let full = SweepGrid.points(.full)
        let quick = SweepGrid.points(.quick)
        #expect(quick.count < full.count && quick.allSatisfy(full.contains))
        let rates = quick.compactMap(\.parameters.ratePerClient)
        #expect(rates.min() == 0.02 && rates.max() == 50)
        #expect(quick.compactMap(\.parameters.outage).max() == 300)
        #expect(quick.compactMap(\.parameters.stall).max() == 120)
        #expect(Set(quick.map(\.scenario)) == Set(full.map(\.scenario)))
    }

    @Test func aPointsNameIsTheFlagsThatReproduceIt() throws {
        let point = try #require(SweepGrid.points.first { $0.parameters.flap != nil })
        var words = point.name.split(separator: " ").map(String.init)
        #expect(words.removeFirst() == "--scenario" && words.removeFirst() == point.scenario)
        var parameters = ScenarioParameters()
        while !words.isEmpty {
            let flag = words.removeFirst()
            #expect(try parameters.read(flag, value: { words.isEmpty ? nil : words.removeFirst() }))
        }
        #expect(parameters == point.parameters)
    }

    @Test func theVerdictsAsJSONCarryThePoint() {
        let point = SweepPoint(axis: "outage", scenario: "outage", parameters: ScenarioParameters())
        var report = SweepReport(mode: .quick, seeds: [1, 2])
        report.points = [point]
        report.verdicts = [
            SweepReport.Verdict(
                point: point,
                goal: Goal(
                    name: "g", strategy: "s", target: "≤ 1", summary: SeedSummary([0.5, 2]) { $0 <= 1 },
                    format: { "\($0)" }))
        ]
        report.tables = [[]]
        #expect(
            SweepRender.json(report)
                == "[\n  {\"goal\": \"g\", \"strategy\": \"s\", \"point\": \"--scenario outage\", \"target\": \"≤ 1\", "
                + "\"passed\": 1, \"seeds\": 2, \"median\": 1.250000, \"holds\": false}\n]\n")
        #expect(!report.allGoalsHold)
        let results = SweepRender.resultsJSON(report, commit: "abc", toolchain: "Swift 6")
        #expect(results.hasPrefix("{\n  \"commit\": \"abc\",\n  \"toolchain\": \"Swift 6\",\n"))
        #expect(SweepRender.markdown(report, provenance: "Produced by x.").contains("| g | s | 0/1 | `outage` |"))
    }

    @Test("--capacity is the server's capacity exactly, also where it is not a whole number of 100 ms workers")
    func theCapacityAskedForIsTheCapacityServed() {
        func server(capacity: Double?, offered: Double? = nil) -> SimulatedServer.Configuration {
            var parameters = ScenarioParameters()
            parameters.capacity = capacity
            parameters.offered = offered
            return Scenarios.server(.full, parameters, faults: [])
        }
        for capacity in [1.0, 2.84, 13.29, 42, 105, 778.1] {
            let configuration = server(capacity: capacity)
            #expect(abs(configuration.capacity - capacity) < 1e-6 * capacity, "\(capacity)")
            #expect(configuration.workers == max(1, Int((capacity / 10).rounded())))
        }
        // A whole number of workers keeps the scenario's service time as it is: the grid's results do not move.
        #expect(server(capacity: 300).serviceTime == .exponential(mean: .milliseconds(100)))
        #expect(server(capacity: nil, offered: 280).workers == 84)
        #expect(abs(server(capacity: nil, offered: 3.66).capacity - 10.98) < 1e-6)
    }

    @Test func aSpentQuotaIsAdvertisedAndCountedWhenIgnored() {
        var parameters = ScenarioParameters()
        parameters.ratePerClient = 2
        parameters.offered = 4
        let run = Scenarios.quota(.quick, parameters)
        #expect(run.quota == QuotaServer.Quota(requests: 10, window: 10))
        // No retry sends on regardless of the quota: early sends are counted; a preset that honours the
        // advertised reset would send none.
        let measurement = run.measure(StrategyCatalog.noRetry, seed: 4)
        #expect(measurement.sentEarly > 0)
        #expect(measurement.successRate < 0.75)
        for preset in StrategyCatalog.shipped {
            #expect(run.measure(preset, seed: 4).sentEarly == 0, "\(preset.name)")
        }
    }

    /// The budget's rule alone for a scope of `rate` requests/s over `duration` seconds, the standard policy,
    /// answers after 120 ms.
    static func model(
        _ budget: RetryBudgetConfiguration, rate: Double, duration: Double, policy: StandardRetryPolicy = .standard
    ) -> BudgetRuleModel {
        BudgetRuleModel(
            budget: budget, policy: policy, deadline: 60, rate: rate, duration: duration, answer: { _ in 0.12 })
    }

    @Test func theBrownoutBoundIsOneMinusPToTheNOnlyWhereTheBudgetAllowsNAttempts() {
        let unbudgeted = BrownoutBound(p: 0.5, attempts: 3, model: nil)
        #expect(abs(unbudgeted.success - 0.875) < 1e-12)
        #expect(!unbudgeted.isBudgetLimited)
        var byRequests = RetryBudgetConfiguration.smoothed
        byRequests.funding = .requests
        let model = Self.model(byRequests, rate: 4, duration: 200)
        // Small runs (5,000 requests: about 500 retries, a spread of 0.005 in a) keep the test cheap.
        let standard = BrownoutBound(p: 0.9, attempts: 3, model: model, modelRequests: 5_000)
        // At most ⌊0.1N + 1⌋ retries in any 30 s holding N ~ Poisson(120) requests: 0.1 + 1/120 per request, less
        // the rounding down and what a sliding window refuses.
        #expect(standard.retriesAllowed > 0.085 && standard.retriesAllowed < 0.109)
        #expect(standard.isBudgetLimited)
        #expect(abs(standard.success - 0.1 * (1 + standard.retriesAllowed)) < 1e-12)
        // Where the budget has room, every failure is retried: 1 − p³.
        let light = BrownoutBound(p: 0.05, attempts: 3, model: model, modelRequests: 5_000)
        #expect(abs(light.retriesAllowed - light.retriesNeeded) < 0.01)
        #expect(abs(light.success - (1 - pow(0.05, 3))) < 0.01)
    }

    @Test func theBudgetRuleModelGrantsWhatTheBudgetsDocumentationSays() {
        // No failure, no retry.
        let healthy = Self.model(.smoothed, rate: 4, duration: 200).run(p: 0, requests: 5_000, seed: 3)
        #expect(healthy.retries == 0 && healthy.success == 1)
        // An outage shows no first attempt succeeding, so failures fund the retries alone: the ratio of them, and
        // the floor's one retry of each fresh scope (4 requests/s over 20 s: 1 ÷ 80 per request) at most.
        let outage = Self.model(.smoothed, rate: 4, duration: 20).run(p: 1, requests: 5_000, seed: 3)
        #expect(outage.retriesPerRequest <= 0.1 + 1.0 / 80 + 1e-9)
        #expect(outage.retriesPerRequest > 0.07)
        #expect(outage.successes == 0)
        // A scope too quiet to judge (0.02/s: a window holds 0.6 requests) retries from the floor, which starts
        // full: over 10 s a scope sends M ~ Poisson(0.2) requests and retries its first failure, so
        // a = (1 − e^(−0.2p)) ÷ 0.2, 0.653 at p = 0.7 (fewer than 10 requests: never a second floor retry); over
        // 5,000 requests (25,000 scopes) a has a spread of about 0.011.
        let quiet = Self.model(.smoothed, rate: 0.02, duration: 10).run(p: 0.7, requests: 5_000, seed: 3)
        #expect(abs(quiet.retriesPerRequest - (1 - exp(-0.14)) / 0.2) < 0.035)
        // A brownout's failures see successes during their backoff and draw on the ratio of the requests.
        let brownout = Self.model(.smoothed, rate: 4, duration: 200).run(p: 0.9, requests: 5_000, seed: 3)
        #expect(brownout.retriesPerRequest > 0.08 && brownout.retriesPerRequest <= 0.1 + 1.0 / 800)
        // The same seed gives the same outcome.
        #expect(Self.model(.smoothed, rate: 4, duration: 200).run(p: 0.9, requests: 5_000, seed: 3) == brownout)
    }

    @Test func aSeedIsJudgedAtTheFailuresTheServerProducedInIt() {
        let bound = BrownoutBound(p: 0.5, attempts: 3, model: nil)
        var counts = AttemptCounts()
        // 100 requests: 60 first attempts fail (not 50), 60 retries of which 20 fail, 20 second retries, 10 fail.
        for index in 0..<100 { counts.record(number: 1, failed: index < 60) }
        for index in 0..<60 { counts.record(number: 2, failed: index < 20) }
        for index in 0..<20 { counts.record(number: 3, failed: index < 10) }
        // 40 first successes + 50 ÷ 80 of the 80 retriable failures: 0.9, what these flips gave (not 0.875).
        #expect(abs(bound.expectedSuccess(given: counts, requests: 100) - 0.9) < 1e-12)
        // A budget that allows a(0.6) < 0.8 retries per request: 40 + 50 ÷ 80 × 100 a(0.6) of 100, with a at the
        // failure rate the seed saw.
        var byRequests = RetryBudgetConfiguration.smoothed
        byRequests.funding = .requests
        let budgeted = BrownoutBound(
            p: 0.5, attempts: 3, model: Self.model(byRequests, rate: 4, duration: 200), modelRequests: 1_000)
        let expected = 0.4 + 0.625 * budgeted.retriesAllowed(atFailureRate: 0.6)
        #expect(abs(budgeted.expectedSuccess(given: counts, requests: 100) - expected) < 1e-12)
    }

    @Test func theAllowanceBetweenModelRunsIsTheParabolaThroughThem() {
        let xs = [0.1, 0.12, 0.14]
        let ys = xs.map { 2 * $0 * $0 - $0 + 0.3 }
        for x in [0.09, 0.11, 0.13, 0.15] {
            #expect(abs(BrownoutBound.interpolate(xs, ys, at: x) - (2 * x * x - x + 0.3)) < 1e-12)
        }
    }

    @Test func anOutageGetsAtMostTheRatioFromABudgetFundedByFailures() {
        let budget = RetryBudgetConfiguration.smoothed
        // A scope whose window always holds 10 requests judges by its failures at every outage length.
        for outage in [2.0, 20, 300] {
            #expect(abs(RetryBudgetBound.outageLoad(budget, rate: 4, outage: outage, attempts: 3) - 1.1) < 1e-6)
        }
        #expect(RetryBudgetBound.quietChance(budget, rate: 50, outage: 2) < 1e-9)
        // A quiet scope retries its first failure from the floor: at 0.02/s a 20 s outage sees 0.4 requests, and
        // (1 − e^(−0.4)) ÷ 0.4 = 0.824 of them get a retry, plus the ratio the bound always allows.
        let quiet = RetryBudgetBound.outageLoad(budget, rate: 0.02, outage: 20, attempts: 3)
        #expect(abs(quiet - (1.1 + (1 - exp(-0.4)) / 0.4)) < 1e-6)
        // A floor of 30 retries covers every request of a quiet scope: the attempts cap the bound.
        var generous = budget
        generous.minimumPerSecond = 1
        #expect(RetryBudgetBound.outageLoad(generous, rate: 0.1, outage: 20, attempts: 2) == 2)
    }

    @Test func aScopeYoungerThanItsWindowIsQuietMoreOften() {
        let budget = RetryBudgetConfiguration.smoothed
        // At 0.5 requests/s a 30 s window holds 15 requests: a scope that has filled it judges by its failures
        // almost always, one that began 10 s before the outage has seen 5 and draws on its floor.
        let settled = RetryBudgetBound.quietChance(budget, rate: 0.5, outage: 2)
        let young = RetryBudgetBound.quietChance(budget, rate: 0.5, outage: 2, age: 10)
        #expect(settled < 0.2)
        #expect(young > 0.95)
        // The floor then retries the first failure of the one request a 2 s outage sees, on average.
        let load = RetryBudgetBound.outageLoad(budget, rate: 0.5, outage: 2, age: 10, attempts: 3)
        #expect(load > 1.1 + 0.95 * (1 - exp(-1.0)))
        // An age of a whole window or more changes nothing.
        #expect(RetryBudgetBound.quietChance(budget, rate: 0.5, outage: 2, age: 30) == settled)
    }

    @Test func aPresetsOwnPipelineRunsTheContentionModelToTheEnd() {
        let result = ContentionRun().measure(seed: 2, makePipeline: StrategyCatalog.noRetry.makePipeline)
        #expect(result.completed == 100)
        #expect(result.calls >= 100)
        #expect(result.completions.count == 100 && result.completion(at: 1) == result.completions.last)
        #expect(result.completion(at: 0.5)! <= result.completion(at: 0.99)!)
    }

    @Test func theHealthyScenarioComparesWithTheNoRetryRow() {
        var report = StormReport(mode: .quick, seeds: [1])
        report.parameters.preset = "standard"
        report.addHealthy()
        #expect(report.goals.map(\.strategy) == [StrategyCatalog.standard.name, StrategyCatalog.standard.name])
        #expect(report.tables.first?.rows.count == 2)
    }
}
