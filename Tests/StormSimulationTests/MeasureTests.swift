import Testing

@testable import StormSimulation

/// The measures and formulas, checked on numbers worked out by hand.
@Suite struct MeasureTests {
    @Test(arguments: [(0.5, 3, 0.875, 1.75), (0.1, 2, 0.99, 1.1), (1.0, 4, 0.0, 4.0), (0.0, 4, 1.0, 1.0)])
    func theoreticalBounds(p: Double, n: Int, success: Double, load: Double) {
        #expect(abs(TheoreticalBounds.success(p: p, attempts: n) - success) < 1e-12)
        #expect(abs(TheoreticalBounds.load(p: p, attempts: n) - load) < 1e-12)
    }

    @Test func amplificationAndRecoveryFromAHandBuiltSeries() {
        var result = SimulationResult(scenario: "s", strategy: "x", bucket: .seconds(1), bucketCount: 6)
        result.startedPerBucket = [10, 10, 10, 10, 10, 10]
        result.attemptsPerBucket = [10, 40, 40, 12, 10, 10]
        result.successfulStartsPerBucket = [10, 0, 0, 9, 10, 10]
        #expect(result.amplification(from: .seconds(1), to: .seconds(3)) == 4)
        #expect(result.amplification(from: .seconds(3), to: .seconds(6)) == 32.0 / 30.0)
        #expect(result.peakLoad == 40)
        // Bucket 3 has 90 % success (< 95 %), so the system is healthy from bucket 4: 1 s after the fault end.
        #expect(result.recoveryTime(after: .seconds(3), loadEnd: .seconds(6)) == .seconds(1))
        result.successfulStartsPerBucket[5] = 0
        #expect(result.recoveryTime(after: .seconds(3), loadEnd: .seconds(6)) == nil)
    }

    @Test func nearestRankPercentiles() {
        var result = SimulationResult(scenario: "s", strategy: "x", bucket: .seconds(1), bucketCount: 1)
        result.latencies = (1...1000).map { Int64($0) * 1_000_000 }
        #expect(result.latency(at: 0.5) == .milliseconds(500))
        #expect(result.latency(at: 0.99) == .milliseconds(990))
        #expect(result.latency(at: 0.999) == .milliseconds(999))
        #expect(result.latency(at: 1) == .milliseconds(1000))
    }

    @Test func fixedFormattingIsLocaleFree() {
        #expect(FixedFormat.number(1234.5678) == "1234.57")
        #expect(FixedFormat.number(2.5, decimals: 0) == "3")
        #expect(FixedFormat.number(-0.004) == "0.00")
        #expect(FixedFormat.number(-1.25, decimals: 1) == "-1.3")
        #expect(FixedFormat.number(.nan) == "-")
        #expect(FixedFormat.percent(0.5) == "50.00%")
        #expect(FixedFormat.jsonString("a\"b\n") == "\"a\\\"b\\n\"")
    }

    @Test func eventQueueOrdersByTimeThenInsertion() {
        var queue = EventQueue<String>()
        queue.schedule("c", at: 30)
        queue.schedule("a", at: 10)
        queue.schedule("b1", at: 20)
        queue.schedule("b2", at: 20)
        queue.schedule("a0", at: 5)
        var order: [String] = []
        while let next = queue.popFirst() { order.append(next.payload) }
        #expect(order == ["a0", "a", "b1", "b2", "c"])
    }
}
