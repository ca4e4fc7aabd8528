import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("AdaptiveThrottle")
struct AdaptiveThrottleTests {
    @Test func healthyBackendIsNeverThrottled() {
        let throttle = AdaptiveThrottle(.standard, random: SharedRandomSource(seed: 3))
        for index in 0..<1000 {
            let now = at(Double(index) * 0.01)
            let permit = throttle.tryAcquire(now: now).permit
            #expect(permit != nil)
            if let permit { throttle.release(permit, outcome: .accepted, now: now) }
        }
        #expect(throttle.rejectionProbability(now: at(10)) == 0)
    }

    @Test func probabilityFollowsTheSREFormula() {
        let throttle = AdaptiveThrottle(.standard, random: SharedRandomSource(seed: 5))
        // 10 requests, 2 accepted: (10 - 2·2) / (10 + 1) = 6/11.
        for index in 0..<10 {
            guard let permit = throttle.tryAcquire(now: at(0)).permit else { continue }
            throttle.release(permit, outcome: index < 2 ? .accepted : .rejectedByBackend, now: at(0))
        }
        let counts = throttle.counts(now: at(0))
        #expect(counts.requests == 10)
        #expect(counts.accepts == 2)
        #expect(abs(throttle.rejectionProbability(now: at(0)) - 6.0 / 11.0) < 1e-12)
    }

    @Test func failingBackendIsThrottledThenRecovers() {
        let throttle = AdaptiveThrottle(.standard, random: SharedRandomSource(seed: 11))
        var rejected = 0
        for _ in 0..<1000 {
            switch throttle.tryAcquire(now: at(1)) {
            case .admitted(let permit): throttle.release(permit, outcome: .rejectedByBackend, now: at(1))
            case .rejected(let code, _):
                #expect(code == .throttled)
                rejected += 1
            case .delayed: Issue.record("a throttle never delays")
            }
        }
        // With no accepts the probability approaches 1: almost everything is rejected locally.
        #expect(rejected > 900)
        // The window slides past the failures.
        #expect(throttle.rejectionProbability(now: at(200)) == 0)
    }

    @Test func abandonedCallsAreWithdrawn() {
        let throttle = AdaptiveThrottle(.standard, random: SharedRandomSource(seed: 1))
        for _ in 0..<5 {
            let permit = throttle.tryAcquire(now: at(0)).permit!
            throttle.release(permit, outcome: .abandoned, now: at(1))
        }
        #expect(throttle.counts(now: at(1)).requests == 0)
    }

    @Test func sameSeedSameDecisions() {
        func decisions(seed: UInt64) -> [Bool] {
            let throttle = AdaptiveThrottle(.standard, random: SharedRandomSource(seed: seed))
            return (0..<200).map { _ in
                guard let permit = throttle.tryAcquire(now: at(0)).permit else { return false }
                throttle.release(permit, outcome: .rejectedByBackend, now: at(0))
                return true
            }
        }
        #expect(decisions(seed: 8) == decisions(seed: 8))
    }
}
