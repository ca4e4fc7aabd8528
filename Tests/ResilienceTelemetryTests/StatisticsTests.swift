import ResilienceCore
import ResilienceTelemetry
import Testing

@Suite("TelemetryStatistics")
struct StatisticsTests {
    @Test("Error rate, errors per minute, retry success, categories and the most frequent code")
    func rates() {
        let fixture = TelemetryFixture()
        for _ in 0..<6 { fixture.succeed("greenhouse") }
        for _ in 0..<3 { fixture.fail("greenhouse", classification: .timeout) }
        fixture.fail("greenhouse", classification: .serverError)
        fixture.fail("lever", attempt: 2, classification: .timeout)
        fixture.succeed("lever", attempt: 2)
        fixture.succeed("lever", attempt: 3)
        fixture.advance(seconds: 60)
        let stats = fixture.recorder.statistics(window: .seconds(120))
        let greenhouse = stats.sources["greenhouse"]
        #expect(greenhouse?.attempts == 10)
        #expect(greenhouse?.failures == 4)
        #expect(greenhouse?.errorRate == 0.4)
        #expect(greenhouse?.errorsPerMinute == 2)
        #expect(greenhouse?.failuresByMinute == [4, 0])
        #expect(stats.sources["lever"]?.failuresByMinute == [1, 0])
        #expect(stats.retryAttempts == 3)
        #expect(stats.retrySuccesses == 2)
        #expect(stats.retrySuccessRate == 2.0 / 3.0)
        #expect(stats.categoryDistribution == [.timeout: 4, .serverError: 1])
        #expect(stats.mostFrequentError == TelemetryStatistics.CodeCount(code: .timedOut, count: 4))
        #expect(stats.errorRate == 5.0 / 13.0)
    }

    @Test(
        "A window no minute count holds (.seconds(Int64.max), from HealthThresholds) keeps the last 1440 minutes",
        arguments: [Duration.seconds(Int64.max), .seconds(Int64.max - 30), .seconds(Int64.min)])
    func hostileWindow(_ window: Duration) {
        let fixture = TelemetryFixture()
        fixture.fail("a", classification: .timeout)
        fixture.advance(seconds: 60)
        let stats = fixture.recorder.statistics(window: window)
        if window > .zero {
            #expect(stats.sources["a"]?.failures == 1)
            #expect(stats.sources["a"]?.failuresByMinute.count == 1440)
        } else {
            #expect(stats.sources["a"] == nil)
        }
    }

    @Test("Breaker opens and time spent open, including a breaker still open")
    func breakerTime() {
        let fixture = TelemetryFixture()
        fixture.transition("a", .closed, .open)
        fixture.advance(seconds: 30)
        fixture.transition("a", .open, .halfOpen)
        fixture.transition("a", .halfOpen, .open)
        fixture.advance(seconds: 60)
        fixture.transition("a", .open, .halfOpen)
        fixture.transition("a", .halfOpen, .closed)
        fixture.transition("b", .closed, .open)
        fixture.advance(seconds: 45)
        let stats = fixture.recorder.statistics()
        #expect(stats.sources["a"]?.breakerOpens == 2)
        #expect(stats.sources["a"]?.timeOpen == .seconds(90))
        #expect(stats.sources["a"]?.breakerState == .closed)
        #expect(stats.sources["b"]?.timeOpen == .seconds(45))
        #expect(stats.sources["b"]?.isBreakerOpen == true)
    }

    @Test("Latency percentiles per source come from the histogram within its resolution")
    func latencyPercentiles() throws {
        let fixture = TelemetryFixture()
        for milliseconds in 1...100 { fixture.succeed("a", milliseconds: Int64(milliseconds)) }
        let latency = try #require(fixture.recorder.statistics().sources["a"]?.latency)
        #expect(latency.count == 100)
        #expect(within(latency.p50, of: .milliseconds(50)))
        #expect(within(latency.p90, of: .milliseconds(90)))
        #expect(within(latency.p99, of: .milliseconds(99)))
        #expect(latency.maximum == .milliseconds(100))
    }

    @Test("Partial failures are counted from fetch-completed events")
    func partialFailures() {
        let fixture = TelemetryFixture()
        fixture.emit(.fetchCompleted, key: "all", count: 6, total: 6)
        fixture.emit(.fetchCompleted, key: "all", count: 4, total: 6)
        fixture.emit(.fetchCompleted, key: "all", count: 0, total: 6)
        fixture.emit(.fetchCompleted, key: "all", count: 5, total: 6)
        let stats = fixture.recorder.statistics()
        #expect(stats.fetches == 4)
        #expect(stats.partialFetches == 2)
        #expect(stats.partialFailureRate == 0.5)
    }

    private func within(_ value: Duration, of expected: Duration) -> Bool {
        let ratio =
            Double(value.components.attoseconds + value.components.seconds * 1_000_000_000_000_000_000)
            / Double(expected.components.attoseconds + expected.components.seconds * 1_000_000_000_000_000_000)
        return ratio >= 0.99 && ratio <= 1.13
    }
}

@Suite("LatencyHistogram")
struct LatencyHistogramTests {
    @Test("Percentiles stay within 12.5% for values spanning seven orders of magnitude")
    func relativeError() {
        var histogram = LatencyHistogram()
        var values: [UInt64] = []
        var value: UInt64 = 1
        while value < 10_000_000 {
            values.append(value)
            value = value * 3 / 2 + 1
        }
        for value in values { histogram.record(microseconds: value) }
        let sorted = values.sorted()
        for percentile in [10.0, 50.0, 90.0, 99.0] {
            let rank = Int((percentile / 100 * Double(sorted.count)).rounded(.up)) - 1
            let exact = Double(sorted[rank])
            let components = (histogram.value(atPercentile: percentile) ?? .zero).components
            let reported = Double(components.seconds) * 1e6 + Double(components.attoseconds) / 1e12
            #expect(reported >= exact && reported <= exact * 1.125 + 1, "p\(percentile): \(reported) vs \(exact)")
        }
    }

    @Test("Memory is fixed and huge values are clamped, not crashing")
    func fixedMemory() {
        var histogram = LatencyHistogram()
        histogram.record(.seconds(Int64.max / 2))
        histogram.record(.seconds(-5))
        histogram.record(microseconds: .max)
        #expect(histogram.counts.count == LatencyHistogram.bucketCount)
        #expect(histogram.totalCount == 3)
        #expect(histogram.count(atOrBelowMicroseconds: 0) == 1)
    }

    @Test("Histograms that stored different spans of buckets merge, compare and report as the same counts")
    func storedSpansMergeAndCompare() {
        var short = LatencyHistogram()
        for value: UInt64 in [3, 20, 900] { short.record(microseconds: value) }
        var long = LatencyHistogram()
        for value: UInt64 in [40_000_000, 5] { long.record(microseconds: value) }
        var shortThenLong = short
        shortThenLong.merge(long)
        var longThenShort = long
        longThenShort.merge(short)
        var recorded = LatencyHistogram()
        for value: UInt64 in [40_000_000, 900, 20, 5, 3] { recorded.record(microseconds: value) }
        #expect(shortThenLong == longThenShort)
        #expect(shortThenLong == recorded)
        #expect(Set([shortThenLong, longThenShort, recorded]).count == 1)
        #expect(short.counts.count == LatencyHistogram.bucketCount)
        #expect(short.counts.reduce(0, +) == 3)
        #expect(recorded.counts.reduce(0, +) == 5)
        #expect(recorded.value(atPercentile: 100) == .microseconds(40_000_000))
        #expect(recorded.count(atOrBelowMicroseconds: 1_000) == 4)
    }

    @Test("An empty histogram has no percentiles")
    func empty() {
        #expect(LatencyHistogram().value(atPercentile: 50) == nil)
        #expect(LatencySummary(LatencyHistogram()) == nil)
    }
}

@Suite("ErrorFrequencyTracker")
struct ErrorFrequencyTrackerTests {
    @Test("Repeats within the window are suppressed and counted; the next report carries the count")
    func suppression() {
        let fixture = TelemetryFixture()
        let tracker = ErrorFrequencyTracker(window: .seconds(60), clock: fixture.clock)
        #expect(tracker.record(.timedOut, key: "a") == .report(suppressedSinceLastReport: 0))
        #expect(tracker.record(.timedOut, key: "a") == .suppress)
        #expect(tracker.record(.timedOut, key: "b") == .report(suppressedSinceLastReport: 0))
        fixture.advance(seconds: 30)
        #expect(tracker.record(.timedOut, key: "a") == .suppress)
        fixture.advance(seconds: 31)
        #expect(tracker.record(.timedOut, key: "a") == .report(suppressedSinceLastReport: 2))
        tracker.record(.rateLimited, key: "a")
        #expect(tracker.counts == [.timedOut: 5, .rateLimited: 1])
        #expect(tracker.mostFrequent(1) == [TelemetryStatistics.CodeCount(code: .timedOut, count: 5)])
    }

    @Test("Memory stays bounded under many distinct pairs")
    func bounded() {
        let fixture = TelemetryFixture()
        let tracker = ErrorFrequencyTracker(window: .seconds(60), maximumEntries: 8, clock: fixture.clock)
        for index in 0..<100 { tracker.record(FailureCode("X_\(index)"), key: "k") }
        #expect(tracker.counts.count <= 8)
    }

    @Test("Repeats held back for a pair evicted by many other pairs are reported when the pair returns")
    func evictedRepeatsSurvive() {
        let fixture = TelemetryFixture()
        let tracker = ErrorFrequencyTracker(window: .seconds(60), maximumEntries: 4, clock: fixture.clock)
        tracker.record(.timedOut, key: "lever")
        tracker.record(.timedOut, key: "lever")
        tracker.record(.timedOut, key: "lever")
        for index in 0..<10 { tracker.record(.timedOut, key: "other-\(index)") }
        #expect(tracker.record(.timedOut, key: "lever") == .report(suppressedSinceLastReport: 2))
        #expect(tracker.record(.timedOut, key: "lever") == .suppress)
        #expect(tracker.unattributedRepeats == 0)
    }

    @Test("Under a stream of distinct pairs, reported repeats and unattributed ones add up to every repeat")
    func repeatsAddUp() {
        let fixture = TelemetryFixture()
        let tracker = ErrorFrequencyTracker(window: .seconds(60), maximumEntries: 4, clock: fixture.clock)
        var suppressed = 0
        for index in 0..<50 {
            for _ in 0...(index % 3) { tracker.record(.timedOut, key: "pair-\(index)") }
            suppressed += index % 3
        }
        fixture.advance(seconds: 61)
        var reported = 0
        for index in 0..<50 {
            if case .report(let count) = tracker.record(.timedOut, key: "pair-\(index)") { reported += count }
        }
        #expect(tracker.unattributedRepeats > 0)
        #expect(reported > 0)
        #expect(reported + tracker.unattributedRepeats == suppressed)
    }

    @Test("The least recently reported pair is the one evicted")
    func evictsLeastRecentlyReported() {
        let fixture = TelemetryFixture()
        let tracker = ErrorFrequencyTracker(window: .seconds(60), maximumEntries: 3, clock: fixture.clock)
        for key in ["a", "b", "c"] { tracker.record(.timedOut, key: key) }
        fixture.advance(seconds: 61)
        #expect(tracker.record(.timedOut, key: "a") == .report(suppressedSinceLastReport: 0))
        tracker.record(.timedOut, key: "d")
        #expect(tracker.record(.timedOut, key: "a") == .suppress)
        #expect(tracker.record(.timedOut, key: "d") == .suppress)
        #expect(tracker.record(.timedOut, key: "b") == .report(suppressedSinceLastReport: 0))
    }

    @Test("Occurrences of codes past the bound are counted apart, so every occurrence is counted")
    func codesPastTheBound() {
        let fixture = TelemetryFixture()
        let tracker = ErrorFrequencyTracker(window: .seconds(60), maximumEntries: 8, clock: fixture.clock)
        for index in 0..<100 { tracker.record(FailureCode("X_\(index % 20)"), key: "k") }
        #expect(tracker.counts.count == 8)
        #expect(tracker.counts.values.reduce(0, +) + tracker.untrackedCodeOccurrences == 100)
        #expect(tracker.untrackedCodeOccurrences == 60)
    }
}
