import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Breaker transitions are numbered in the order they were made")
struct BreakerTransitionSequenceTests {
    /// Opens `breaker` with failures at 0 s, probes it half-open and closes it with successes after
    /// `openFor`, isolates and resets it; returns every transition in the order made.
    static func cycle(
        _ breaker: any IsolatableBreaker & MeasurableBreaker, openFor: Double
    )
        -> [BreakerTransition]
    {
        var transitions: [BreakerTransition] = []
        var now = 0.0
        while breaker.metrics(now: at(now)).state == .closed {
            if let transition = call(breaker, .failure(Failures.server), at: at(now)) {
                transitions.append(transition)
            }
        }
        now += openFor
        while breaker.metrics(now: at(now)).state != .closed {
            let admission = breaker.admit(now: at(now))
            if let transition = admission.transition { transitions.append(transition) }
            guard let permit = admission.permit else { break }
            if let transition = breaker.record(.success, for: permit, now: at(now)) { transitions.append(transition) }
        }
        transitions += [breaker.isolate(now: at(now)), breaker.reset(now: at(now))].compactMap { $0 }
        return transitions
    }

    static func expectNumberedInOrder(_ transitions: [BreakerTransition]) {
        #expect(transitions.map(\.to) == [.open, .halfOpen, .closed, .isolated, .closed])
        let sequences = transitions.compactMap(\.sequence)
        #expect(sequences.count == transitions.count, "every transition is numbered: \(transitions)")
        #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "\(sequences)")
        #expect(zip(transitions.dropFirst(), transitions).allSatisfy { $0.supersedes($1) && !$1.supersedes($0) })
    }

    @Test func consecutiveFailureBreaker() {
        var configuration = ConsecutiveFailureBreaker.Configuration.standard
        configuration.openDuration.jitter = 0
        Self.expectNumberedInOrder(Self.cycle(ConsecutiveFailureBreaker(configuration), openFor: 60))
    }

    @Test func failureRatioBreaker() {
        var configuration = FailureRatioBreaker.Configuration.standard
        configuration.window = .count(10)
        configuration.minimumThroughput = 10
        configuration.openDuration.jitter = 0
        Self.expectNumberedInOrder(Self.cycle(FailureRatioBreaker(configuration), openFor: 600))
    }

    @Test("equality and hashing compare the states and the open period, not the sequence")
    func sequenceIsNotPartOfEquality() {
        let first = BreakerTransition(from: .closed, to: .open, openFor: .seconds(5), sequence: 1)
        let again = BreakerTransition(from: .closed, to: .open, openFor: .seconds(5), sequence: 7)
        #expect(first == again)
        #expect(Set([first, again]).count == 1)
        #expect(first != BreakerTransition(from: .closed, to: .open, openFor: .seconds(6), sequence: 1))
        // Unnumbered transitions are taken in the order received.
        let unnumbered = BreakerTransition(from: .open, to: .halfOpen)
        #expect(unnumbered.supersedes(again) && again.supersedes(unnumbered))
    }
}
