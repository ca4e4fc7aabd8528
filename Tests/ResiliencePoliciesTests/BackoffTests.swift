import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Backoff and jitter")
struct BackoffTests {
    @Test("Shapes and timeout modes reject names they do not know instead of behaving as another")
    func openSetsRejectUnknownNames() {
        #expect(Backoff.Shape(rawValue: "fibonacci") == nil)
        #expect(TimeoutMode(rawValue: "eventually") == nil)
        for shape in [Backoff.Shape.exponential, .linear, .constant, .decorrelated] {
            #expect(Backoff.Shape(rawValue: shape.rawValue) == shape)
        }
        #expect(TimeoutMode(rawValue: "enforced") == .enforced)
    }

    @Test(
        "Seed 000 §1.2: 1, 2, 4 … 256 s, capped at 300 s",
        arguments: [(1, 1), (2, 2), (3, 4), (4, 8), (5, 16), (6, 32), (7, 64), (8, 128), (9, 256), (10, 300)])
    func seedSchedule(retry: Int, expectedSeconds: Int) {
        let backoff = Backoff.exponential(base: .seconds(1), multiplier: 2, cap: .seconds(300))
        #expect(backoff.delay(forRetry: retry) == .seconds(expectedSeconds))
    }

    @Test("Overflow-safe at retry 10,000 and Int.max", arguments: [10_000, 1_000_000, Int.max, 0, -5])
    func overflowSafe(retry: Int) {
        var random = SeededRandomNumberGenerator(seed: 1)
        for backoff in [
            Backoff.exponential(base: .seconds(1), multiplier: 2, cap: .seconds(300)),
            .linear(base: .seconds(1), cap: .seconds(60)), .constant(.seconds(3)),
            .decorrelated(base: .seconds(1), cap: .seconds(60)),
            .exponential(base: .seconds(Int64.max / 2), multiplier: 1e300, cap: .seconds(Int64.max)),
        ] {
            let delay = backoff.delay(forRetry: retry, previous: .seconds(Int64.max / 2), using: &random)
            #expect(delay >= .zero)
            #expect(delay <= max(backoff.cap, .seconds(3)))
        }
    }

    @Test("Linear grows by the increment; constant stays", arguments: [(1, 1), (2, 3), (3, 5), (10, 10)])
    func linear(retry: Int, expectedSeconds: Int) {
        let backoff = Backoff.linear(base: .seconds(1), increment: .seconds(2), cap: .seconds(10))
        #expect(backoff.delay(forRetry: retry) == .seconds(expectedSeconds))
        #expect(Backoff.constant(.seconds(7)).delay(forRetry: retry) == .seconds(7))
    }

    @Test("Decorrelated stays within base … min(cap, previous × 3) and is reproducible")
    func decorrelated() {
        let backoff = Backoff.decorrelated(base: .seconds(1), cap: .seconds(20))
        var first = SeededRandomNumberGenerator(seed: 9)
        var second = SeededRandomNumberGenerator(seed: 9)
        var previous: Duration? = nil
        for retry in 1...50 {
            let delay = backoff.delay(forRetry: retry, previous: previous, using: &first)
            let upper = min(max((previous ?? .seconds(1)) * 3, .seconds(1)), .seconds(20))
            #expect(delay >= .seconds(1) && delay <= upper)
            #expect(delay == backoff.delay(forRetry: retry, previous: previous, using: &second))
            previous = delay
        }
    }

    @Test("Each jitter mode stays in its range and uses the whole range")
    func jitterRanges() {
        var random = SeededRandomNumberGenerator(seed: 42)
        let delay = Duration.seconds(10)
        let cases: [(Jitter, ClosedRange<Double>)] = [
            (.none, 10...10), (.proportional(0.2), 8...12), (.full, 0...10), (.equal, 5...10),
            (.additive(maximum: .milliseconds(500)), 10...10.5),
        ]
        for (jitter, range) in cases {
            var low = Double.infinity
            var high = -Double.infinity
            for _ in 0..<2_000 {
                let value = jitter.apply(to: delay, using: &random).seconds
                low = min(low, value)
                high = max(high, value)
            }
            #expect(range.contains(low) && range.contains(high), "\(jitter): \(low)…\(high)")
            let width = range.upperBound - range.lowerBound
            #expect(high - low >= width * 0.9, "\(jitter) should spread over its range: \(low)…\(high)")
            #expect(jitter.upperBound(of: delay).seconds >= high - 1e-9)
        }
    }

    @Test("Jitter is deterministic for one seed and never negative")
    func jitterDeterministic() {
        var a = SeededRandomNumberGenerator(seed: 3)
        var b = SeededRandomNumberGenerator(seed: 3)
        for _ in 0..<100 {
            let x = Jitter.proportional(5).apply(to: .seconds(1), using: &a)
            #expect(x == Jitter.proportional(5).apply(to: .seconds(1), using: &b))
            #expect(x >= .zero)
        }
    }

    @Test("A proportional jitter's description shows the fraction it applies, for any fraction")
    func jitterDescriptionClamps() {
        let cases: [(Double, String)] = [
            (.nan, "proportional(±0%)"), (.infinity, "proportional(±0%)"), (-.infinity, "proportional(±0%)"),
            (1e300, "proportional(±100%)"), (5, "proportional(±100%)"), (-1, "proportional(±0%)"),
            (0.2, "proportional(±20%)"),
        ]
        for (fraction, text) in cases {
            #expect(Jitter.proportional(fraction).description == text, "fraction \(fraction)")
        }
    }
}
