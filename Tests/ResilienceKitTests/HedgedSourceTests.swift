import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

@Suite("Hedged sources in an aggregator")
struct HedgedSourceTests {
    @Test("A hedged source counts every attempt, and the hedge that lost is not its last failure")
    func hedgedSourceReport() async throws {
        let clock = ManualClock()
        var aggregator = Aggregator<String>(
            configuration: AggregatorConfiguration(sourceTimeout: nil), clock: .manual(clock))
        let source = ScriptedSource<String>(
            id: "s", steps: [.items(["slow"], after: .seconds(10)), .items(["fast"])], clock: .manual(clock))
        aggregator.register(source, pipeline: Pipeline { HedgingStrategy(delay: .seconds(1)) })
        let fetch = Task { [aggregator] in try await aggregator.fetch() }
        await clock.waitForSleepers(count: 2)  // the first attempt and the hedge timer
        clock.advance(by: .seconds(1))
        let result = try await fetch.value
        #expect(result.items == ["fast"])
        let report = try #require(result.report.report(for: "s"))
        #expect(report.status == .succeeded)
        #expect(report.attempts == 2)
        // The first attempt was cancelled by the hedging stage when the second won: it did not fail.
        #expect(report.classification == nil)
        #expect(clock.sleeperCount == 0)
    }
}
