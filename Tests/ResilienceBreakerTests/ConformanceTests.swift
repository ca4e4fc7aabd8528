import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("BreakerPolicyConformance")
struct ConformanceTests {
    @Test func consecutiveFailureBreakerConforms() async throws {
        try await BreakerPolicyConformance { ConsecutiveFailureBreaker(.standard, random: SharedRandomSource(seed: 1)) }
            .check()
    }

    @Test func failureRatioBreakerConforms() async throws {
        try await BreakerPolicyConformance { FailureRatioBreaker(.standard) }.check()
        try await BreakerPolicyConformance { FailureRatioBreaker(.countBased) }.check()
    }

    @Test func rateLimitBreakerConforms() async throws {
        try await BreakerPolicyConformance { RateLimitBreaker() }.check()
    }

    @Test func theKitCatchesABrokenBreaker() async {
        let report = await BreakerPolicyConformance { ForgetfulBreaker() }.run()
        let rules = Set(report.violations.map(\.rule))
        #expect(Set(report.failedCases) == rules, "one case per rule")
        #expect(report.result("reset-closes")?.passed == true)
        #expect(rules.contains("cancelled-probe-releases"))
        #expect(rules.contains("stale-generation-ignored"))
        #expect(rules.contains("export-restore-round-trip"))
        await #expect(throws: ConformanceFailure.self) {
            try await BreakerPolicyConformance { ForgetfulBreaker() }.check()
        }
    }
}

/// A deliberately broken breaker: ignores generations, never frees a cancelled probe, exports nothing.
private final class ForgetfulBreaker: IsolatableBreaker, PersistableBreaker, MeasurableBreaker {
    private struct State {
        var state: BreakerState = .closed
        var failures = 0
        var openUntil = ResilienceInstant.origin
        var probeOut = false
    }

    private let box = LockedBox(State())

    func admit(now: ResilienceInstant) -> BreakerAdmission {
        box.mutate { state in
            switch state.state {
            case .closed:
                return .admitted(BreakerPermit(generation: 0, isProbe: false, admittedAt: now), transition: nil)
            case .open where now >= state.openUntil, .halfOpen:
                let from = state.state
                guard !state.probeOut else { return .rejected(retryAfter: .seconds(1), state: .halfOpen) }
                state.state = .halfOpen
                state.probeOut = true
                return .admitted(
                    BreakerPermit(generation: 0, isProbe: true, admittedAt: now),
                    transition: from == .halfOpen ? nil : BreakerTransition(from: from, to: .halfOpen))
            default:
                return .rejected(retryAfter: now.duration(to: state.openUntil), state: state.state)
            }
        }
    }

    func record(_ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant) -> BreakerTransition? {
        box.mutate { state in
            switch outcome {
            case .cancelled:
                return nil
            case .success:
                let from = state.state
                state.state = .closed
                state.failures = 0
                state.probeOut = false
                return from == .closed ? nil : BreakerTransition(from: from, to: .closed)
            case .failure:
                state.failures += 1
                guard state.failures >= 3, state.state == .closed else { return nil }
                state.state = .open
                state.openUntil = now.advanced(by: .seconds(10))
                return BreakerTransition(from: .closed, to: .open, openFor: .seconds(10))
            }
        }
    }

    func isolate(now: ResilienceInstant) -> BreakerTransition? {
        box.mutate { state in
            let from = state.state
            state.state = .isolated
            return BreakerTransition(from: from, to: .isolated)
        }
    }

    func reset(now: ResilienceInstant) -> BreakerTransition? {
        box.mutate { state in
            let from = state.state
            state = State()
            return from == .closed ? nil : BreakerTransition(from: from, to: .closed)
        }
    }

    func metrics(now: ResilienceInstant) -> BreakerMetrics {
        box.mutate { BreakerMetrics(state: $0.state, consecutiveFailures: $0.failures) }
    }

    func exportState(now: ResilienceInstant) -> BreakerSnapshot { BreakerSnapshot(state: .closed) }

    func restoreState(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? { nil }

    var policyDescription: String { "forgetful" }
}
