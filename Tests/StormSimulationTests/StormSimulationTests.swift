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
        #expect(first.loadRatio(window) == 1)
        #expect(first.succeeded[window.lowerBound + 1] == 0)
        #expect(first.successRate(second: window.upperBound + 2) == 1)
    }

    @Test func theContentionModelIsReproducibleAndRetriesUntilDone() {
        let policy = Scenarios.contention[0].policy
        let first = ContentionRun().measure(policy, seed: 3)
        let second = ContentionRun().measure(policy, seed: 3)
        #expect(first.calls == second.calls)
        #expect(first.completed == 100)
        #expect(first.calls > 100)
    }
}
