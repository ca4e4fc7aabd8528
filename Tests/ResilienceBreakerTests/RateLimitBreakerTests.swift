import Foundation
import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("RateLimitBreaker (seed 004)")
struct RateLimitBreakerTests {
    /// Trips the breaker with three 429s at `now`; returns the transition.
    func tripWithThree429s(_ breaker: RateLimitBreaker, at now: ResilienceInstant) -> BreakerTransition? {
        var transition: BreakerTransition?
        for _ in 0..<3 { transition = call(breaker, .failure(Failures.tooManyRequests), at: now) ?? transition }
        return transition
    }

    @Test(
        "Backoff schedule: trip n opens for the seed's duration",
        arguments: zip(1...6, [30, 60, 120, 240, 300, 300]))
    func backoffSchedule(trip: Int, expectedSeconds: Int) {
        let breaker = RateLimitBreaker()
        var now = at(0)
        var transition: BreakerTransition?
        for _ in 1...trip {
            transition = tripWithThree429s(breaker, at: now)
            now = now.advanced(by: transition?.openFor ?? .zero)
        }
        #expect(transition?.openFor == .seconds(expectedSeconds))
        #expect(breaker.metrics(now: at(0)).totalOpens == trip)
    }

    @Test func multiplierDoublesUpToTen() {
        let breaker = RateLimitBreaker()
        var multipliers = [breaker.multiplier()]
        var now = at(0)
        for _ in 0..<5 {
            now = now.advanced(by: tripWithThree429s(breaker, at: now)?.openFor ?? .zero)
            multipliers.append(breaker.multiplier())
        }
        #expect(multipliers == [1, 2, 4, 8, 10, 10])
    }

    @Test func twoRateLimitsDoNotTrip() {
        let breaker = RateLimitBreaker()
        call(breaker, .failure(Failures.tooManyRequests), at: at(0))
        call(breaker, .failure(Failures.tooManyRequests), at: at(0))
        #expect(breaker.metrics(now: at(0)).consecutiveFailures == 2)
        #expect(breaker.admit(now: at(0)).permit != nil)
    }

    @Test(arguments: [
        BreakerOutcome.failure(Failures.server), .failure(Failures.client), .failure(Failures.timeout), .success,
    ])
    func nonRateLimitOutcomesResetTheCounter(outcome: BreakerOutcome) {
        let breaker = RateLimitBreaker()
        call(breaker, .failure(Failures.tooManyRequests), at: at(0))
        call(breaker, .failure(Failures.tooManyRequests), at: at(0))
        call(breaker, outcome, at: at(0))
        call(breaker, .failure(Failures.tooManyRequests), at: at(0))
        call(breaker, .failure(Failures.tooManyRequests), at: at(0))
        #expect(breaker.metrics(now: at(0)).state == .closed)
        #expect(breaker.metrics(now: at(0)).consecutiveFailures == 2)
    }

    @Test func cancellationLeavesTheCounterAlone() {
        let breaker = RateLimitBreaker()
        call(breaker, .failure(Failures.tooManyRequests), at: at(0))
        call(breaker, .failure(Failures.tooManyRequests), at: at(0))
        call(breaker, .cancelled, at: at(0))
        #expect(call(breaker, .failure(Failures.tooManyRequests), at: at(0))?.to == .open)
    }

    @Test func successResetsTheMultiplierButFailuresDoNot() {
        let breaker = RateLimitBreaker()
        let first = tripWithThree429s(breaker, at: at(0))
        #expect(first?.openFor == .seconds(30))
        // After the cooldown the breaker closes; a server error keeps the multiplier.
        let reopened = breaker.admit(now: at(30))
        #expect(reopened.transition == BreakerTransition(from: .open, to: .closed))
        breaker.record(.failure(Failures.server), for: reopened.permit!, now: at(30))
        #expect(breaker.multiplier() == 2)
        #expect(tripWithThree429s(breaker, at: at(31))?.openFor == .seconds(60))
        call(breaker, .success, at: at(91))
        #expect(breaker.multiplier() == 1)
        #expect(tripWithThree429s(breaker, at: at(92))?.openFor == .seconds(30))
    }

    @Test func rejectsWithTheRemainingCooldown() {
        let breaker = RateLimitBreaker()
        _ = tripWithThree429s(breaker, at: at(100))
        let rejection = breaker.admit(now: at(112))
        #expect(rejection.rejection?.retryAfter == .seconds(18))
        #expect(rejection.rejection?.state == .open)
        #expect(breaker.metrics(now: at(112)).remainingOpenDuration == .seconds(18))
    }

    @Test func manualResetClearsEverything() {
        let breaker = RateLimitBreaker()
        var now = at(0)
        for _ in 0..<3 { now = now.advanced(by: tripWithThree429s(breaker, at: now)?.openFor ?? .zero) }
        _ = tripWithThree429s(breaker, at: now)
        #expect(breaker.reset(now: now) == BreakerTransition(from: .open, to: .closed))
        #expect(breaker.multiplier() == 1)
        #expect(breaker.admit(now: now).permit != nil)
        #expect(tripWithThree429s(breaker, at: now)?.openFor == .seconds(30))
    }

    @Test func exportedStateSurvivesARestart() throws {
        let breaker = RateLimitBreaker()
        var now = at(0)
        for _ in 0..<2 { now = now.advanced(by: tripWithThree429s(breaker, at: now)?.openFor ?? .zero) }
        _ = tripWithThree429s(breaker, at: now)  // third trip: 120 s
        let snapshot = breaker.exportState(now: now.advanced(by: .seconds(20)))
        #expect(snapshot.state == .open)
        #expect(snapshot.remainingOpen == .seconds(100))
        #expect(snapshot.values["multiplier"] == 8)

        let afterRestart = RateLimitBreaker()
        #expect(afterRestart.restoreState(snapshot, now: at(0))?.to == .open)
        #expect(afterRestart.admit(now: at(99)).rejection?.retryAfter == .seconds(1))
        #expect(afterRestart.multiplier() == 8)
        let resumed = afterRestart.admit(now: at(100))
        #expect(resumed.permit != nil)
        afterRestart.record(.failure(Failures.tooManyRequests), for: resumed.permit!, now: at(100))
        #expect(tripWithThree429s(afterRestart, at: at(100))?.openFor == .seconds(240))
    }

    @Test func snapshotIsCodableShaped() {
        let breaker = RateLimitBreaker()
        _ = tripWithThree429s(breaker, at: at(0))
        let snapshot = breaker.exportState(now: at(10))
        #expect(
            snapshot
                == BreakerSnapshot(
                    state: .open, remainingOpen: .seconds(20),
                    values: ["multiplier": 2, "consecutiveTrips": 1, "consecutiveRateLimits": 0, "totalOpens": 1]))
    }

    @Test func persistedAsJSONTheCooldownSurvivesARestart() throws {
        let breaker = RateLimitBreaker()
        _ = tripWithThree429s(breaker, at: at(0))
        let data = try JSONEncoder().encode(breaker.exportState(now: at(5)))
        let decoded = try JSONDecoder().decode(BreakerSnapshot.self, from: data)
        let afterRestart = RateLimitBreaker()
        afterRestart.restoreState(decoded, now: at(1000))
        #expect(afterRestart.admit(now: at(1000)).rejection?.retryAfter == .seconds(25))
        #expect(afterRestart.multiplier() == 2)
    }
}
