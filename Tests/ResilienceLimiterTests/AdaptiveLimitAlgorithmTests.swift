import Foundation
import Testing

@testable import ResiliencePolicies

/// The limit arithmetic of each algorithm, sample by sample.
@Suite("AdaptiveLimitAlgorithm")
struct AdaptiveLimitAlgorithmTests {
    @Test func gradient2GrowsByTheQueueWhileTheLatencyHolds() {
        var memory = AdaptiveLimitMemory()
        let next = Gradient2Limit().nextLimit(20, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 20), &memory)
        // gradient 1: target 20 + 4, smoothed 0.8 × 20 + 0.2 × 24.
        #expect(abs(next - 20.8) < 1e-9)
        #expect(memory.longRoundTrip == 0.1)
    }

    @Test func gradient2ShrinksWhenTheRoundTripPassesTheTolerance() {
        var memory = AdaptiveLimitMemory()
        let settings = Gradient2Limit(shortWindow: 1)
        _ = settings.nextLimit(50, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 50), &memory)
        // The step is smoothing × shortWindow ÷ limit = 0.2 × 1 ÷ 50 per sample.
        let step = 0.2 / 50
        // Within the tolerance (0.115 < 1.2 × 0.1) the limit still grows.
        let within = settings.nextLimit(50, AdaptiveLimitSample(roundTrip: 0.115, inFlight: 50), &memory)
        #expect(abs(within - (50 + 4 * step)) < 1e-9)
        // 0.3 against a baseline of 0.1: gradient 1.2 × 0.1 ÷ 0.3 < 0.5, clamped to 0.5; target 50 × 0.5 + 4.
        let next = settings.nextLimit(50, AdaptiveLimitSample(roundTrip: 0.3, inFlight: 50), &memory)
        #expect(abs(next - (50 * (1 - step) + 29 * step)) < 1e-9)
    }

    @Test func gradient2ShrinksAtMostByHalfPerSample() {
        var memory = AdaptiveLimitMemory()
        let settings = Gradient2Limit(smoothing: 1, shortWindow: 1, queueSize: 0)
        _ = settings.nextLimit(1, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 1), &memory)
        let next = settings.nextLimit(1, AdaptiveLimitSample(roundTrip: 10, inFlight: 1), &memory)
        #expect(next == 0.5)
    }

    @Test func gradient2AveragesTheRecentRoundTripOverItsShortWindow() {
        var memory = AdaptiveLimitMemory()
        #expect(memory.averageShort(0.1, window: 20) == 0.1)
        #expect(abs(memory.averageShort(0.3, window: 20) - 0.11) < 1e-12)
    }

    @Test func theBaselineFallsAtOnceAndRisesWithItsTimeConstant() {
        var memory = AdaptiveLimitMemory()
        #expect(memory.followBaseline(0.1, now: 0, rise: 60) == 0.1)
        #expect(memory.followBaseline(0.2, now: 0, rise: 60) == 0.1)
        let risen = memory.followBaseline(0.2, now: 60, rise: 60)
        #expect(abs(risen - (0.1 + 0.1 * (1 - exp(-1)))) < 1e-12)
        #expect(memory.followBaseline(0.05, now: 61, rise: 60) == 0.05)
    }

    @Test func gradient2LearnsNothingWhileTheCallerUsesLessThanHalf() {
        var memory = AdaptiveLimitMemory()
        let next = Gradient2Limit().nextLimit(40, AdaptiveLimitSample(roundTrip: 1, inFlight: 19), &memory)
        #expect(next == 40)
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
        let gradient = Gradient2Limit(smoothing: .nan, tolerance: 0.1, shortWindow: -5, baselineRise: 0, queueSize: -1)
            .sanitized
        #expect(
            gradient == Gradient2Limit(smoothing: 0.2, tolerance: 1, shortWindow: 1, baselineRise: 0.001, queueSize: 0))
        let vegas = VegasLimit(alphaFactor: 10, betaFactor: 2, smoothing: 0, probeMultiplier: 0).sanitized
        #expect(vegas.betaFactor >= vegas.alphaFactor && vegas.smoothing > 0 && vegas.probeMultiplier == 1)
        #expect(AIMDLimit(backoffRatio: 2, latencyThreshold: .zero).sanitized.backoffRatio < 1)
    }
}
