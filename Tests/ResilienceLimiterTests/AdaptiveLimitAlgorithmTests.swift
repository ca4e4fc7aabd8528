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
        let settings = Gradient2Limit()
        for _ in 0..<10 { _ = settings.nextLimit(50, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 50), &memory) }
        let next = settings.nextLimit(50, AdaptiveLimitSample(roundTrip: 0.3, inFlight: 50), &memory)
        let long = 0.1 * (1 - 2.0 / 601) + 0.3 * 2.0 / 601
        let gradient = 1.5 * long / 0.3
        #expect(abs(next - (50 * 0.8 + (50 * gradient + 4) * 0.2)) < 1e-9)
        #expect(next < 50)
    }

    @Test func gradient2ShrinksAtMostByHalfPerSample() {
        var memory = AdaptiveLimitMemory()
        let settings = Gradient2Limit(smoothing: 1, queueSize: 0)
        _ = settings.nextLimit(100, AdaptiveLimitSample(roundTrip: 0.1, inFlight: 100), &memory)
        let next = settings.nextLimit(100, AdaptiveLimitSample(roundTrip: 10, inFlight: 100), &memory)
        #expect(next == 50)
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
        let gradient = Gradient2Limit(smoothing: .nan, tolerance: 0.1, longWindow: -5, queueSize: -1).sanitized
        #expect(gradient == Gradient2Limit(smoothing: 0.2, tolerance: 1, longWindow: 1, queueSize: 0))
        let vegas = VegasLimit(alphaFactor: 10, betaFactor: 2, smoothing: 0, probeMultiplier: 0).sanitized
        #expect(vegas.betaFactor >= vegas.alphaFactor && vegas.smoothing > 0 && vegas.probeMultiplier == 1)
        #expect(AIMDLimit(backoffRatio: 2, latencyThreshold: .zero).sanitized.backoffRatio < 1)
    }
}
