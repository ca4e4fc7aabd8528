import Foundation
import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("ConsecutiveFailureBreaker")
struct ConsecutiveFailureBreakerTests {
    func noJitter() -> ConsecutiveFailureBreaker.Configuration {
        var configuration = ConsecutiveFailureBreaker.Configuration.standard
        configuration.openDuration.jitter = 0
        return configuration
    }

    @Test func opensAfterFiveCountedFailuresInARow() {
        let breaker = ConsecutiveFailureBreaker(noJitter())
        for index in 0..<4 {
            #expect(call(breaker, .failure(Failures.server), at: at(Double(index))) == nil)
        }
        #expect(breaker.metrics(now: at(4)).consecutiveFailures == 4)
        let transition = call(breaker, .failure(Failures.server), at: at(4))
        #expect(transition == BreakerTransition(from: .closed, to: .open, openFor: .seconds(60)))
        let rejection = breaker.admit(now: at(10)).rejection
        #expect(rejection?.state == .open)
        #expect(rejection?.retryAfter == .seconds(54))
        #expect(breaker.metrics(now: at(10)).totalOpens == 1)
        #expect(breaker.metrics(now: at(10)).currentOpenDuration == .seconds(6))
    }

    @Test func successAndClientErrorsResetTheCount() {
        let breaker = ConsecutiveFailureBreaker(noJitter())
        for _ in 0..<4 { call(breaker, .failure(Failures.server), at: at(0)) }
        call(breaker, .success, at: at(0))
        for _ in 0..<4 { call(breaker, .failure(Failures.timeout), at: at(0)) }
        call(breaker, .failure(Failures.client), at: at(0))
        for _ in 0..<4 { call(breaker, .failure(Failures.server), at: at(0)) }
        #expect(breaker.metrics(now: at(0)).state == .closed)
        #expect(breaker.metrics(now: at(0)).consecutiveFailures == 4)
    }

    @Test func cancellationNeverCounts() {
        let breaker = ConsecutiveFailureBreaker(noJitter())
        for _ in 0..<20 { call(breaker, .cancelled, at: at(0)) }
        for _ in 0..<20 { call(breaker, .failure(.cancelled), at: at(0)) }
        #expect(breaker.metrics(now: at(0)).state == .closed)
        #expect(breaker.metrics(now: at(0)).consecutiveFailures == 0)
    }

    @Test func halfOpenNeedsTwoSuccessesAndLimitsProbes() {
        let breaker = ConsecutiveFailureBreaker(noJitter())
        for _ in 0..<5 { call(breaker, .failure(Failures.server), at: at(0)) }
        let first = breaker.admit(now: at(60))
        #expect(first.transition == BreakerTransition(from: .open, to: .halfOpen))
        #expect(first.permit?.isProbe == true)
        #expect(breaker.admit(now: at(60)).rejection?.state == .halfOpen)
        #expect(breaker.record(.success, for: first.permit!, now: at(61)) == nil)
        let second = breaker.admit(now: at(61))
        #expect(
            breaker.record(.success, for: second.permit!, now: at(62))
                == BreakerTransition(from: .halfOpen, to: .closed))
        #expect(breaker.metrics(now: at(62)).state == .closed)
    }

    @Test func openTimeGrowsAcrossRepeatedTripsAndIsCapped() {
        let breaker = ConsecutiveFailureBreaker(noJitter())
        var now = at(0)
        var durations: [Duration] = []
        for _ in 0..<6 {
            var transition: BreakerTransition?
            if breaker.metrics(now: now).state == .closed {
                for _ in 0..<5 { transition = call(breaker, .failure(Failures.server), at: now) ?? transition }
            } else {
                let probe = breaker.admit(now: now).permit!
                transition = breaker.record(.failure(Failures.server), for: probe, now: now)
            }
            let openFor = transition?.openFor ?? .zero
            durations.append(openFor)
            now = now.advanced(by: openFor)
        }
        #expect(durations == [60, 120, 240, 480, 600, 600].map { Duration.seconds($0) })
        let probe = breaker.admit(now: now).permit!
        breaker.record(.success, for: probe, now: now)
        breaker.record(.success, for: breaker.admit(now: now).permit!, now: now)
        let again = (0..<5).compactMap { _ in call(breaker, .failure(Failures.server), at: now) }
        #expect(again.last?.openFor == .seconds(60))
    }

    @Test(arguments: [1 as UInt64, 7, 42, 1234])
    func jitterStaysWithinThirtyPercent(seed: UInt64) {
        let breaker = ConsecutiveFailureBreaker(.standard, random: SharedRandomSource(seed: seed))
        var transition: BreakerTransition?
        for _ in 0..<5 { transition = call(breaker, .failure(Failures.server), at: at(0)) ?? transition }
        let openFor = seconds(transition?.openFor ?? .zero)
        #expect(openFor >= 42 && openFor <= 78)
    }

    @Test func sameSeedSameJitter() {
        func openFor(seed: UInt64) -> Duration? {
            let breaker = ConsecutiveFailureBreaker(.standard, random: SharedRandomSource(seed: seed))
            var transition: BreakerTransition?
            for _ in 0..<5 { transition = call(breaker, .failure(Failures.server), at: at(0)) ?? transition }
            return transition?.openFor
        }
        #expect(openFor(seed: 9) == openFor(seed: 9))
        let spread = Set((1...20).compactMap { openFor(seed: UInt64($0)) })
        #expect(spread.count > 10)
    }

    @Test func lostProbeIsReclaimedAfterProbeTimeout() {
        let breaker = ConsecutiveFailureBreaker(noJitter())
        for _ in 0..<5 { call(breaker, .failure(Failures.server), at: at(0)) }
        #expect(breaker.admit(now: at(60)).permit?.isProbe == true)
        #expect(breaker.admit(now: at(89)).rejection?.retryAfter == .seconds(1))
        #expect(breaker.admit(now: at(90)).permit?.isProbe == true)
    }

    @Test func lateOutcomesFromBeforeATripAreIgnored() {
        let breaker = ConsecutiveFailureBreaker(noJitter())
        let early = breaker.admit(now: at(0)).permit!
        for _ in 0..<5 { call(breaker, .failure(Failures.server), at: at(0)) }
        #expect(breaker.record(.success, for: early, now: at(1)) == nil)
        #expect(breaker.metrics(now: at(1)).state == .open)
    }

    @Test func isolateResetExportRestore() {
        let breaker = ConsecutiveFailureBreaker(noJitter())
        #expect(breaker.isolate(now: at(0)) == BreakerTransition(from: .closed, to: .isolated))
        #expect(breaker.admit(now: at(100_000)).rejection?.state == .isolated)
        #expect(breaker.reset(now: at(1)) == BreakerTransition(from: .isolated, to: .closed))
        for _ in 0..<5 { call(breaker, .failure(Failures.server), at: at(10)) }
        let snapshot = breaker.exportState(now: at(30))
        #expect(snapshot.state == .open)
        #expect(snapshot.remainingOpen == .seconds(40))
        #expect(snapshot.values["consecutiveTrips"] == 1)
        let restored = ConsecutiveFailureBreaker(noJitter())
        #expect(
            restored.restoreState(snapshot, now: at(500))
                == BreakerTransition(from: .closed, to: .open, openFor: .seconds(40)))
        #expect(restored.admit(now: at(539)).rejection?.retryAfter == .seconds(1))
        #expect(restored.admit(now: at(540)).permit?.isProbe == true)
        #expect(restored.metrics(now: at(540)).totalOpens == 1)
    }

    @Test func restoreSurvivesGarbageSnapshots() {
        let breaker = ConsecutiveFailureBreaker(noJitter())
        let garbage = BreakerSnapshot(
            state: .open, remainingOpen: .seconds(-5),
            values: ["consecutiveTrips": .infinity, "totalOpens": -3, "consecutiveFailures": .nan])
        breaker.restoreState(garbage, now: at(0))
        #expect(breaker.admit(now: at(0)).permit != nil)
        #expect(breaker.metrics(now: at(0)).totalOpens == 0)
    }

    @Test("A persisted snapshot whose open time does not fit the clock restores as open, without trapping")
    func restoreSurvivesAnOpenTimeBeyondTheClock() throws {
        // A corrupted or hand-edited state file: a duration is stored as its two 64-bit halves, so any pair
        // decodes, here one near the largest duration there is.
        let json = #"{"state":"open","remainingOpen":[9223372036854775807,0],"values":{}}"#
        let snapshot = try JSONDecoder().decode(BreakerSnapshot.self, from: Data(json.utf8))
        let breaker = ConsecutiveFailureBreaker(noJitter())
        let transition = breaker.restoreState(snapshot, now: at(500))
        #expect(transition?.to == .open)
        let rejection = breaker.admit(now: at(500)).rejection
        #expect(rejection?.state == .open)
        #expect(rejection.map { $0.retryAfter <= .seconds(1_000_000_000) } == true)
        #expect(breaker.exportState(now: at(600)).remainingOpen <= .seconds(1_000_000_000))
    }

    @Test("The description shows the open duration's jitter as applied, for any jitter")
    func descriptionClampsJitter() {
        let cases: [(Double, String)] = [
            (.nan, "±0%"), (.infinity, "±0%"), (-.infinity, "±0%"), (1e300, "±100%"), (-0.5, "±0%"), (0.3, "±30%"),
        ]
        for (jitter, text) in cases {
            var configuration = ConsecutiveFailureBreaker.Configuration.standard
            configuration.openDuration.jitter = jitter
            let description = ConsecutiveFailureBreaker(configuration).policyDescription
            #expect(description.hasSuffix("open: 60.0 seconds \(text))"), "jitter \(jitter): \(description)")
        }
    }
}
