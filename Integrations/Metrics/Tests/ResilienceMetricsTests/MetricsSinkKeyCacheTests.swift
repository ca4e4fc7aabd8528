import MetricsTestKit
import ResilienceCore
import Testing

@testable import ResilienceMetrics

/// The sink's cache of key labels, which lets an event whose labels were seen before allocate nothing
/// (`Benchmarks/` target `MetricsSinkCost` counts the mallocs).
@Suite("MetricsTelemetrySink key label cache")
struct MetricsSinkKeyCacheTests {
    @Test("a stream of distinct keys, short and long, never holds more than the cache's bound")
    func boundedUnderDistinctKeys() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(configuration: .init(maximumKeys: 10), factory: metrics)
        #expect(sink.keyLabelCacheLimit == 84)
        let long = String(repeating: "k", count: MetricsTelemetrySink.longestCachedKey)
        for index in 0..<5_000 {
            let key = index.isMultiple(of: 2) ? "tenant-\(index).example.com" : long + "\(index)"
            sink.receive(MetricsTelemetrySinkTests.event(.attemptSucceeded, key: key, duration: .milliseconds(1)))
        }
        #expect(sink.cachedKeyLabelCount == sink.keyLabelCacheLimit)
        #expect(sink.distinctKeyCount == 10)
        // Ten series of their own and `other`, whatever the number of keys.
        #expect(metrics.counters(label: "resilience_attempts_total").count == 11)
    }

    @Test("a key cap too large to double (Int.max, for no cap) gives every key its own label, never a crash")
    func uncappedKeys() throws {
        let metrics = TestMetrics()
        let sink = MetricsTelemetrySink(configuration: .init(maximumKeys: .max), factory: metrics)
        #expect(sink.keyLabelCacheLimit == .max)
        for index in 0..<300 {
            sink.receive(
                MetricsTelemetrySinkTests.event(.attemptSucceeded, key: "host-\(index)", duration: .milliseconds(1)))
        }
        #expect(sink.distinctKeyCount == 300)
        #expect(metrics.counters(label: "resilience_attempts_total").count == 300)
    }

    @Test("a cached label is the label the key had the first time: its own, redacted, or other")
    func cachedLabelsKeepTheirAnswer() {
        let sink = MetricsTelemetrySink(configuration: .init(maximumKeys: 2), factory: TestMetrics())
        let keys = ["a.example.com", "https://user:secret@b.example.com/x", "c.example.com"]
        let first = keys.map { sink.keyLabel($0) }
        #expect(first[0] == "a.example.com")
        #expect(!first[1].contains("secret"))
        #expect(first[2] == "other")
        for _ in 0..<3 { #expect(keys.map { sink.keyLabel($0) } == first) }
        #expect(sink.cachedKeyLabelCount == 3)
    }
}
