import Foundation
import ResilienceCore
import Testing

@testable import ResiliencePolicies

/// The limit arithmetic of each algorithm, sample by sample.
@Suite("AdaptiveLimitAlgorithm")
struct AdaptiveLimitAlgorithmTests {
    @Test func gradient2OnlyLearnsTheRoundTripFromItsFirstWindow() {
        var memory = AdaptiveLimitMemory()
        let settings = Gradient2Limit()
        for _ in 0..<19 {
            let next = settings.nextLimit(20, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 20), minimum: 4, &memory)
            #expect(next == 20)
        }
        #expect(memory.longRoundTrip == 0)
        let next = settings.nextLimit(20, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 20), minimum: 4, &memory)
        #expect(next > 20)
        #expect(abs(memory.longRoundTrip - 0.1) < 1e-12)
    }

    @Test func gradient2GrowsByItsShareWhileTheLatencyHolds() {
        var memory = AdaptiveLimitMemory(queueSeen: true)
        let settings = Gradient2Limit(shortWindow: 1)
        let next = settings.nextLimit(20, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 20), minimum: 4, &memory)
        // gradient 1.1 × 0.1 ÷ 0.1, at most 1 + growth: target 20 × 1.1; the step is smoothing ÷ limit = 0.3 ÷ 20.
        #expect(abs(next - (20 + 2 * 0.3 / 20)) < 1e-9)
    }

    @Test func gradient2ShrinksWhenTheRoundTripPassesTheTolerance() {
        var memory = AdaptiveLimitMemory(queueSeen: true)
        let settings = Gradient2Limit(shortWindow: 1)
        _ = settings.nextLimit(50, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 50), minimum: 4, &memory)
        let step = 0.3 / 50
        // Recent 0.15 (the mean of 0.1 and 0.2) against a baseline of 0.1: gradient 1.1 × 0.1 ÷ 0.15, so the
        // target is 50 × 0.7333.
        let next = settings.nextLimit(50, AdaptiveLimitSample(roundTrip: 0.2, inFlight: 50), minimum: 4, &memory)
        #expect(abs(next - (50 * (1 - step) + 50 * 1.1 * 0.1 / 0.15 * step)) < 1e-9)
        // Within the tolerance (recent 0.1025 < 1.1 × 0.1) the limit grows, by the gradient 1.1 × 0.1 ÷ 0.1025
        // once the slow start is over (a queue was seen).
        var within = AdaptiveLimitMemory()
        _ = settings.nextLimit(50, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 50), minimum: 4, &within)
        within.queueSeen = true
        let grown = settings.nextLimit(50, AdaptiveLimitSample(roundTrip: 0.105, inFlight: 50), minimum: 4, &within)
        #expect(abs(grown - (50 + (50 * 1.1 * 0.1 / 0.1025 - 50) * step)) < 1e-9)
        #expect(grown > 50)
    }

    /// Until the first queue the limit grows by one per call that ends without one: a caller that fills it
    /// doubles it per round trip (about `limit` calls end per round trip). The gradient rule alone grew it by
    /// about 3 % per round trip (`growth` × `smoothing`).
    @Test func gradient2DoublesPerRoundTripUntilTheFirstQueue() {
        var memory = AdaptiveLimitMemory()
        let settings = Gradient2Limit(shortWindow: 1)
        var limit = 20.0
        for _ in 0..<20 {
            let sample = AdaptiveLimitSample(roundTrip: 0.1, inFlight: Int(limit))
            limit = settings.nextLimit(limit, sample, minimum: 4, &memory)
        }
        #expect(limit == 40)
        #expect(!memory.queueSeen)
    }

    /// The first queue ends the slow start: the limit falls to the calls in flight at that call's admission,
    /// times the gradient, and then follows the gradient rule.
    @Test func theFirstQueueEndsTheSlowStartAtTheQueuedCallsConcurrency() {
        var memory = AdaptiveLimitMemory()
        let settings = Gradient2Limit(shortWindow: 1)
        _ = settings.nextLimit(80, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 80), minimum: 4, &memory)
        // Admitted at 45 in flight (about half today's limit); recent 0.15 (window 80: the mean of 0.1 and 0.2)
        // against a baseline of 0.1: gradient 1.1 × 0.1 ÷ 0.15.
        let cut = settings.nextLimit(80, AdaptiveLimitSample(roundTrip: 0.2, inFlight: 45), minimum: 4, &memory)
        #expect(abs(cut - 45 * 1.1 * 0.1 / 0.15) < 1e-9)
        #expect(memory.queueSeen)
        // After it, a call that brings the recent round trip back within the tolerance (0.15 − 0.13 ÷ 3) moves
        // the limit by the gradient rule's step (gradient 1.1 × 0.1 ÷ 0.10667, a step of 0.3 ÷ limit), not by one.
        let next = settings.nextLimit(cut, AdaptiveLimitSample(roundTrip: 0.02, inFlight: 33), minimum: 4, &memory)
        #expect(abs(next - (cut + 0.3 * (1.1 * 0.1 / (0.15 - 0.13 / 3) - 1))) < 1e-9)
    }

    @Test func aDropEndsTheSlowStartWithoutACutWhileTheLatencyHolds() {
        var memory = AdaptiveLimitMemory()
        let settings = Gradient2Limit(shortWindow: 1)
        _ = settings.nextLimit(50, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 50), minimum: 4, &memory)
        let next = settings.nextLimit(
            50, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 50, dropped: true), minimum: 4, &memory)
        #expect(next == 50)
        #expect(memory.queueSeen)
    }

    @Test func aQueueSeenBelowTheLimitDoesNotShrinkIt() {
        var memory = AdaptiveLimitMemory(queueSeen: true)
        let settings = Gradient2Limit(shortWindow: 1)
        _ = settings.nextLimit(100, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 100), minimum: 4, &memory)
        // 60 of 100 in flight: the caller's own burst queued, the limit did not bind.
        #expect(settings.nextLimit(100, AdaptiveLimitSample(roundTrip: 0.3, inFlight: 60), minimum: 4, &memory) == 100)
        #expect(settings.nextLimit(100, AdaptiveLimitSample(roundTrip: 0.3, inFlight: 90), minimum: 4, &memory) < 100)
    }

    @Test func gradient2ShrinksAtMostByHalfPerSample() {
        var memory = AdaptiveLimitMemory()
        let settings = Gradient2Limit(smoothing: 1, shortWindow: 1)
        _ = settings.nextLimit(1, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 1), minimum: 0, &memory)
        let next = settings.nextLimit(1, AdaptiveLimitSample(roundTrip: 10, inFlight: 1), minimum: 0, &memory)
        #expect(next == 0.5)
    }

    @Test func gradient2AveragesTheRecentRoundTripOverItsWindow() {
        var memory = AdaptiveLimitMemory()
        // Fewer samples than the window: their plain mean.
        #expect(memory.averageShort(0.1, window: 20) == 0.1)
        #expect(abs(memory.averageShort(0.3, window: 20) - 0.2) < 1e-12)
        var steady = AdaptiveLimitMemory()
        for _ in 0..<20 { _ = steady.averageShort(0.1, window: 20) }
        #expect(abs(steady.averageShort(0.3, window: 20) - 0.11) < 1e-12)
    }

    @Test func theBaselineFallsAsAnAverageAndRisesWithItsTimeConstant() {
        var memory = AdaptiveLimitMemory()
        #expect(memory.followBaseline(0.1, now: 0, rise: 60, fallWindow: 10) == 0.1)
        #expect(memory.followBaseline(0.2, now: 0, rise: 60, fallWindow: 10) == 0.1)
        let risen = memory.followBaseline(0.2, now: 60, rise: 60, fallWindow: 10)
        #expect(abs(risen - (0.1 + 0.1 * (1 - exp(-1)))) < 1e-12)
        // A faster recent round trip moves it a tenth of the way (a window of 10 samples), not all the way.
        let fallen = memory.followBaseline(0.05, now: 61, rise: 60, fallWindow: 10)
        #expect(abs(fallen - (risen + (0.05 - risen) / 10)) < 1e-12)
    }

    /// Round trips that only vary around their mean (uniform 80–120 ms, the recent average over 20 samples, the
    /// limit held at 20, 200 samples a second) for the first 10 s, a busy key's warm-up: the baseline stays
    /// within 2 % of the mean, so no sample reads as a queue and noise does not end the slow start. (Following
    /// each lower recent average straight down, the baseline fell about 5 % under the mean within those 10 s,
    /// and noise alone ended the slow start.)
    /// The baseline's rise share is `1 − e^(−x)` to within a few units in the last place on both sides of the
    /// series' threshold, from the microseconds between a busy limiter's samples to many time constants.
    @Test(arguments: [1e-12, 3e-9, 1e-6, 9.99e-6, 1e-5, 2e-5, 1e-3, 0.5, 1, 7, 50])
    func theRiseShareIsOneMinusTheExponential(_ x: Double) {
        let share = AdaptiveLimitMemory.riseShare(elapsed: x * 600, rise: 600)
        let exact = -expm1(-x)
        #expect(abs(share - exact) <= 4 * exact.ulp, "x = \(x): \(share) against \(exact)")
    }

    @Test func roundTripNoiseIsNotReadAsAQueue() {
        var memory = AdaptiveLimitMemory()
        var random = PseudoRandomGenerator(seed: 7)
        let settings = Gradient2Limit()
        for index in 0..<2_000 {
            let roundTrip = Double.random(in: 0.08..<0.12, using: &random)
            _ = settings.nextLimit(
                20, AdaptiveLimitSample(roundTrip: roundTrip, inFlight: 20, completedAt: Double(index) / 200),
                minimum: 4, &memory)
        }
        #expect(!memory.queueSeen)
        #expect(memory.longRoundTrip > 0.098 && memory.longRoundTrip < 0.102, "baseline \(memory.longRoundTrip)")
    }

    @Test func theBaselineRisesFastOnlyAtTheMinimumLimit() {
        let settings = Gradient2Limit(shortWindow: 1)
        func baseline(atLimit limit: Double) -> Double {
            var memory = AdaptiveLimitMemory()
            _ = settings.nextLimit(
                limit, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 4, completedAt: 0), minimum: 4, &memory)
            _ = settings.nextLimit(
                limit, AdaptiveLimitSample(roundTrip: 0.2, inFlight: 4, completedAt: 2), minimum: 4, &memory)
            return memory.longRoundTrip
        }
        // Recent 0.15 after 2 s: the baseline rises with 2 s at the minimum, towards 0.15; above it with 600 s,
        // and towards at most 1.1 × itself (a queue past the tolerance is the limit's to cut).
        #expect(abs(baseline(atLimit: 4) - (0.1 + 0.05 * (1 - exp(-1)))) < 1e-12)
        #expect(abs(baseline(atLimit: 5) - (0.1 + 0.01 * (1 - exp(-2.0 / 600)))) < 1e-12)
    }

    /// Feeds Gradient2 `count` calls of `roundTrip` from a caller that keeps its whole limit in flight: about
    /// `limit` calls end per round trip, so they end `roundTrip ÷ limit` apart. The limiter's minimum is
    /// `minimum`.
    static func feed(
        _ limit: inout Double, _ memory: inout AdaptiveLimitMemory, _ now: inout Double, count: Int, roundTrip: Double,
        minimum: Double = 4
    ) {
        for _ in 0..<count {
            now += roundTrip / limit
            let sample = AdaptiveLimitSample(roundTrip: roundTrip, inFlight: Int(limit), completedAt: now)
            limit = max(Gradient2Limit().nextLimit(limit, sample, minimum: minimum, &memory), minimum)
        }
    }

    /// A call that spans the app's suspension (300 s on a clock that runs on, after 1,000 calls of 10 ms) is no
    /// measure of the backend: against the same run with a 10 ms call in its place, the limit stays within 3 %
    /// and never falls below 97 % of where it was, and the baseline does not move. Taken at face value it dragged
    /// the recent round trip to seconds and held the gradient at its floor for hundreds of calls (the limit fell
    /// from 79 to 30), and the baseline rose by 1.5 % (the 300 s counted towards its rise).
    @Test func oneRoundTripSpanningASuspensionNeitherCutsTheLimitNorMovesTheBaseline() {
        func run(suspended: Bool) -> (before: Double, lowest: Double, limit: Double, baseline: Double) {
            var memory = AdaptiveLimitMemory(queueSeen: true)
            var limit = 50.0
            var now = 0.0
            Self.feed(&limit, &memory, &now, count: 1_000, roundTrip: 0.01)
            let before = limit
            let roundTrip = suspended ? 300 : 0.01
            now += suspended ? 300 : 0.01 / limit
            let sample = AdaptiveLimitSample(roundTrip: roundTrip, inFlight: Int(limit), completedAt: now)
            limit = max(Gradient2Limit().nextLimit(limit, sample, minimum: 4, &memory), 4)
            var lowest = limit
            for _ in 0..<1_000 {
                Self.feed(&limit, &memory, &now, count: 1, roundTrip: 0.01)
                lowest = min(lowest, limit)
            }
            return (before, lowest, limit, memory.longRoundTrip)
        }
        let normal = run(suspended: false)
        let suspended = run(suspended: true)
        #expect(suspended.lowest >= 0.97 * suspended.before, "\(suspended.lowest) against \(suspended.before)")
        #expect(
            abs(suspended.limit - normal.limit) <= 0.03 * normal.limit, "\(suspended.limit) against \(normal.limit)")
        #expect(abs(suspended.baseline - normal.baseline) <= 1e-6 * normal.baseline, "baseline \(suspended.baseline)")
    }

    /// While the first window only learns the round trip (its plain mean), the bound is `tolerance ÷ 0.5` × that
    /// mean: one call that spans a suspension among the first 20 leaves the baseline they set within 7 % of the
    /// backend's 10 ms (it entered as 22 ms, a twentieth of the mean). Taken at face value it made the baseline
    /// 15 s, which a backend of 10 ms took thousands of calls to bring down, never reading a queue meanwhile.
    @Test func aSuspendedCallInTheFirstWindowDoesNotBecomeTheBaseline() {
        var memory = AdaptiveLimitMemory()
        for index in 0..<20 {
            let sample = AdaptiveLimitSample(
                roundTrip: index == 1 ? 300 : 0.01, inFlight: 20, completedAt: Double(index) * 0.001)
            _ = Gradient2Limit().nextLimit(20, sample, minimum: 4, &memory)
        }
        #expect(memory.longRoundTrip > 0.01 && memory.longRoundTrip < 0.0107, "baseline \(memory.longRoundTrip)")
    }

    /// A real slowdown that lasts still cuts the limit: 2 × the baseline (not bounded), and 10 × (each call
    /// enters the average at the bound, 2 × tolerance × the baseline, which holds the gradient near its floor).
    @Test(arguments: [2.0, 10])
    func aSustainedSlowdownStillCutsTheLimit(times: Double) {
        var memory = AdaptiveLimitMemory(queueSeen: true)
        var limit = 50.0
        var now = 0.0
        Self.feed(&limit, &memory, &now, count: 1_000, roundTrip: 0.01)
        let before = limit
        Self.feed(&limit, &memory, &now, count: 200, roundTrip: 0.01 * times)
        #expect(limit < 0.8 * before, "\(limit) against \(before)")
        // The baseline does not take the queue for the backend's round trip.
        #expect(memory.longRoundTrip < 0.0101, "baseline \(memory.longRoundTrip)")
    }

    /// A backend that becomes ten times slower for good drives the limit to its minimum (20 here), where the
    /// baseline follows it within seconds (time constant 2 s), bound or no bound: each bounded call raises the
    /// bound with it. (The limit then grows again, to `tolerance` × the calls the slower backend serves.)
    @Test func theBaselineFollowsABackendTenTimesSlowerAtTheMinimum() {
        var memory = AdaptiveLimitMemory(queueSeen: true)
        var limit = 50.0
        var now = 0.0
        Self.feed(&limit, &memory, &now, count: 1_000, roundTrip: 0.01, minimum: 20)
        let start = now
        while now < start + 30 { Self.feed(&limit, &memory, &now, count: 1, roundTrip: 0.1, minimum: 20) }
        #expect(memory.longRoundTrip > 0.09, "baseline \(memory.longRoundTrip)")
    }

    @Test func gradient2LearnsNothingWhileTheCallerUsesLessThanHalf() {
        var memory = AdaptiveLimitMemory()
        let settings = Gradient2Limit(shortWindow: 1)
        let next = settings.nextLimit(40, AdaptiveLimitSample(roundTrip: 1, inFlight: 19), minimum: 4, &memory)
        #expect(next == 40)
    }

    /// A backend that queues what it cannot serve at once (round trip = 0.1 s × max(1, in flight ÷ slots)),
    /// saturated by the caller from the limiter's minimum on for two minutes: over the second minute the limit
    /// stays within [1, 1.2] × its slots, small or large. (It must meet the backend below its capacity once: a
    /// limiter that starts above it learns the queued round trip as its baseline. Under a lasting overload the
    /// baseline creeps up by (tolerance − 1) ÷ baselineRise per second, 1 % a minute.)
    @Test(arguments: [8.0, 40, 160, 400])
    func gradient2SettlesInProportionToTheBackendsSlots(slots: Double) {
        var memory = AdaptiveLimitMemory()
        let settings = Gradient2Limit()
        var limit = 4.0
        var now = 0.0
        var lowest = Double.infinity
        var highest = 0.0
        while now < 120 {
            let inFlight = max(limit.rounded(.down), 1)
            let roundTrip = 0.1 * max(1, inFlight / slots)
            now += roundTrip / inFlight
            let next = settings.nextLimit(
                limit, AdaptiveLimitSample(roundTrip: roundTrip, inFlight: Int(inFlight), completedAt: now),
                minimum: 4, &memory)
            limit = min(max(next, 4), 1_000)
            if now >= 60 {
                lowest = min(lowest, limit.rounded(.down))
                highest = max(highest, limit.rounded(.down))
            }
        }
        #expect(lowest >= slots && highest <= 1.2 * slots, "limit \(lowest)...\(highest) for \(slots) slots")
    }

    @Test func vegasGrowsFastWithoutAQueueAndBacksOffOnADrop() {
        var memory = AdaptiveLimitMemory()
        let settings = VegasLimit()
        // The first sample only teaches the smallest round trip.
        #expect(settings.nextLimit(20, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 20), &memory) == 20)
        let grown = settings.nextLimit(20, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 20), &memory)
        #expect(abs(grown - (20 + 6 * log10(20.0))) < 1e-9)
        let dropped = settings.nextLimit(20, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 20, dropped: true), &memory)
        #expect(abs(dropped - (20 - log10(20.0))) < 1e-9)
    }

    @Test func vegasShrinksWhenTheQueueExceedsBeta() {
        var memory = AdaptiveLimitMemory()
        let settings = VegasLimit()
        _ = settings.nextLimit(100, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 100), &memory)
        // queue = ceil(100 × (1 − 0.1 / 0.2)) = 50 > 6 × log10(100) = 12.
        let next = settings.nextLimit(100, AdaptiveLimitSample(roundTrip: 0.2, inFlight: 100), &memory)
        #expect(abs(next - 98) < 1e-9)
        // queue = ceil(100 × (1 − 0.1 / 0.11)) = 10: between alpha (6) and beta (12), the limit holds.
        #expect(settings.nextLimit(100, AdaptiveLimitSample(roundTrip: 0.11, inFlight: 100), &memory) == 100)
    }

    @Test func vegasRelearnsTheSmallestRoundTripAfterAProbe() {
        var memory = AdaptiveLimitMemory()
        let settings = VegasLimit(probeMultiplier: 1)
        _ = settings.nextLimit(2, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 2), &memory)
        _ = settings.nextLimit(2, AdaptiveLimitSample(roundTrip: 0.5, inFlight: 2), &memory)
        #expect(memory.smallestRoundTrip == 0.5)
    }

    @Test func aimdAddsOneAndMultipliesOnADropOrASlowCall() {
        let settings = AIMDLimit(backoffRatio: 0.9, latencyThreshold: .seconds(1))
        #expect(settings.nextLimit(20, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 10)) == 21)
        #expect(settings.nextLimit(20, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 9)) == 20)
        #expect(settings.nextLimit(20, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 20, dropped: true)) == 18)
        #expect(settings.nextLimit(20, AdaptiveLimitSample(roundTrip: 1.5, inFlight: 20)) == 18)
    }

    @Test func settingsOutOfRangeAreClamped() {
        let gradient = Gradient2Limit(smoothing: .nan, tolerance: 0.1, shortWindow: -5, baselineRise: 0, growth: -1)
            .sanitized
        #expect(
            gradient == Gradient2Limit(smoothing: 0.3, tolerance: 1, shortWindow: 1, baselineRise: 0.001, growth: 0))
        let vegas = VegasLimit(alphaFactor: 10, betaFactor: 2, smoothing: 0, probeMultiplier: 0).sanitized
        #expect(vegas.betaFactor >= vegas.alphaFactor && vegas.smoothing > 0 && vegas.probeMultiplier == 1)
        #expect(AIMDLimit(backoffRatio: 2, latencyThreshold: .zero).sanitized.backoffRatio < 1)
    }
}
