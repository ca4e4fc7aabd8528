import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("FailureRatioBreaker")
struct FailureRatioBreakerTests {
    func countBased(_ calls: Int, minimum: Int, ratio: Double) -> FailureRatioBreaker.Configuration {
        var configuration = FailureRatioBreaker.Configuration.standard
        configuration.window = .count(calls)
        configuration.minimumThroughput = minimum
        configuration.failureRatio = ratio
        return configuration
    }

    @Test func nothingIsJudgedBelowMinimumThroughput() {
        let breaker = FailureRatioBreaker(countBased(10, minimum: 10, ratio: 0.5))
        for _ in 0..<9 { call(breaker, .failure(Failures.server), at: at(0)) }
        #expect(breaker.metrics(now: at(0)).state == .closed)
        #expect(call(breaker, .failure(Failures.server), at: at(0))?.to == .open)
    }

    @Test func opensWhenTheRatioIsReached() {
        let breaker = FailureRatioBreaker(countBased(10, minimum: 10, ratio: 0.5))
        for index in 0..<9 {
            call(breaker, index < 4 ? .failure(Failures.server) : .success, at: at(0))
        }
        #expect(breaker.windowCounts(now: at(0)) == (9, 4, 0))
        // 4 of 10 fail: below 50 %.
        call(breaker, .success, at: at(0))
        #expect(breaker.metrics(now: at(0)).state == .closed)
        // The window slides: the oldest (a failure) drops out, a new failure comes in: still 4 of 10.
        call(breaker, .failure(Failures.server), at: at(0))
        #expect(breaker.windowCounts(now: at(0)) == (10, 4, 0))
        // Each further failure replaces a failure until the successes start to drop out.
        for _ in 0..<3 { call(breaker, .failure(Failures.server), at: at(0)) }
        #expect(breaker.windowCounts(now: at(0)).failures == 4)
        let transition = call(breaker, .failure(Failures.server), at: at(0))
        #expect(transition == BreakerTransition(from: .closed, to: .open, openFor: .seconds(30)))
        #expect(breaker.windowCounts(now: at(0)) == (0, 0, 0))
    }

    @Test("A ratio of zero opens on any counted failure, never on a window of successes or fast calls")
    func zeroRatiosNeedAFailureOrASlowCall() {
        var configuration = countBased(4, minimum: 4, ratio: 0)
        configuration.slowCallThreshold = .seconds(2)
        configuration.slowCallRatio = 0
        let breaker = FailureRatioBreaker(configuration)
        for second in 0..<8 { call(breaker, .success, at: at(Double(second))) }
        #expect(breaker.metrics(now: at(8)).state == .closed)
        #expect(call(breaker, .failure(Failures.server), at: at(8))?.to == .open)

        let slow = FailureRatioBreaker(configuration)
        for second in 0..<8 { call(slow, .success, at: at(Double(second))) }
        #expect(slow.metrics(now: at(8)).state == .closed)
        let permit = slow.admit(now: at(10)).permit
        #expect(permit.flatMap { slow.record(.success, for: $0, now: at(13)) }?.to == .open)
    }

    @Test func clientErrorsCountAsSuccesses() {
        let breaker = FailureRatioBreaker(countBased(4, minimum: 4, ratio: 0.5))
        for _ in 0..<8 { call(breaker, .failure(Failures.client), at: at(0)) }
        call(breaker, .failure(Failures.server), at: at(0))
        #expect(breaker.metrics(now: at(0)).state == .closed)
        #expect(breaker.windowCounts(now: at(0)) == (4, 1, 0))
    }

    @Test func timeWindowForgetsOldCalls() {
        var configuration = FailureRatioBreaker.Configuration.standard
        configuration.window = .time(.seconds(10), buckets: 10)
        configuration.minimumThroughput = 4
        let breaker = FailureRatioBreaker(configuration)
        for second in 0..<3 { call(breaker, .failure(Failures.server), at: at(Double(second))) }
        #expect(breaker.windowCounts(now: at(2.5)) == (3, 3, 0))
        #expect(breaker.windowCounts(now: at(11.5)).calls == 1)
        #expect(breaker.windowCounts(now: at(30)).calls == 0)
        // The old failures are gone: one failure among four calls does not open it.
        for _ in 0..<3 { call(breaker, .success, at: at(30)) }
        call(breaker, .failure(Failures.server), at: at(30))
        #expect(breaker.metrics(now: at(30)).state == .closed)
        // Within the window it does.
        call(breaker, .failure(Failures.server), at: at(31))
        #expect(breaker.metrics(now: at(31)).state == .closed)
        call(breaker, .failure(Failures.server), at: at(31))
        #expect(breaker.metrics(now: at(31)).state == .open)
    }

    @Test func slowCallsOpenTheBreaker() {
        var configuration = countBased(5, minimum: 5, ratio: 0.9)
        configuration.slowCallThreshold = .seconds(2)
        configuration.slowCallRatio = 0.6
        let breaker = FailureRatioBreaker(configuration)
        var transition: BreakerTransition?
        for index in 0..<5 {
            let start = at(Double(index * 10))
            let permit = breaker.admit(now: start).permit!
            let end = start.advanced(by: index < 3 ? .seconds(3) : .milliseconds(100))
            transition = breaker.record(.success, for: permit, now: end)
        }
        #expect(transition?.to == .open)
        #expect(breaker.policyDescription.contains("slow"))
    }

    @Test func halfOpenClosesAfterEnoughProbesAndReopensOnFailure() {
        var configuration = countBased(4, minimum: 4, ratio: 0.5)
        configuration.successesToClose = 2
        configuration.halfOpenProbeLimit = 2
        let breaker = FailureRatioBreaker(configuration)
        for _ in 0..<4 { call(breaker, .failure(Failures.server), at: at(0)) }
        let first = breaker.admit(now: at(30))
        let second = breaker.admit(now: at(30))
        #expect(first.permit?.isProbe == true && second.permit?.isProbe == true)
        #expect(breaker.admit(now: at(30)).rejection?.state == .halfOpen)
        #expect(breaker.record(.failure(Failures.server), for: first.permit!, now: at(31))?.to == .open)
        #expect(breaker.record(.success, for: second.permit!, now: at(31)) == nil)
        let third = breaker.admit(now: at(61)).permit!
        let fourth = breaker.admit(now: at(61)).permit!
        breaker.record(.success, for: third, now: at(62))
        #expect(breaker.record(.success, for: fourth, now: at(62)) == BreakerTransition(from: .halfOpen, to: .closed))
    }
    /// ``FailureRatioBreaker/Configuration/outageOnly`` with the silence of a window's length (10 s) and 5 calls:
    /// the timings the silence rule's own tests are written in.
    static var tenSecondSilence: FailureRatioBreaker.Configuration {
        var configuration = FailureRatioBreaker.Configuration.outageOnly
        configuration.unansweredWindow = nil
        configuration.minimumUnansweredCalls = 5
        return configuration
    }

    /// A preset's breaker, by the preset's name.
    func presetConfiguration(_ name: String) -> FailureRatioBreaker.Configuration {
        switch name {
        case "interactive": .outageOnlyInteractive
        case "background": .outageOnlyBackground
        default: .outageOnly
        }
    }

    /// Fails a call five times a second (50 calls in a preset's 10 s window, past its minimum of 40) from
    /// `start` until the call at `end` (included), or until a call changes the breaker's state; returns that
    /// change (`nil`: none).
    @discardableResult
    func failFiveTimesASecond(
        _ breaker: FailureRatioBreaker, from start: Double, through end: Double,
        _ failure: FailureClassification = Failures.server
    ) -> BreakerTransition? {
        var index = 0.0
        while start + index * 0.2 <= end + 1e-9 {
            if let transition = call(breaker, .failure(failure), at: at(start + index * 0.2)) { return transition }
            index += 1
        }
        return nil
    }

    @Test("The interactive breaker: opens 0.4–0.6 s without growing, and one successful probe closes it")
    func interactiveTripsAreCheap() {
        let breaker = FailureRatioBreaker(.outageOnlyInteractive, random: SharedRandomSource(seed: 7))
        // Ten seconds of failures are not enough to judge a new breaker; the first failure after them opens it.
        failFiveTimesASecond(breaker, from: 0, through: 9.8)
        #expect(breaker.metrics(now: at(9.8)).state == .closed)
        var opened = call(breaker, .failure(Failures.server), at: at(10))
        var now = 10.0
        // Each failed probe reopens it for 0.4–0.6 s: the open time never grows, however often a probe fails.
        for _ in 0..<6 {
            let openFor = opened?.openFor ?? .zero
            #expect(openFor >= .milliseconds(400) && openFor <= .milliseconds(600))
            #expect(breaker.admit(now: at(now + seconds(openFor) - 0.01)).rejection?.state == .open)
            now += seconds(openFor) + 0.001
            guard let probe = breaker.admit(now: at(now)).permit else {
                Issue.record("no probe after the open time")
                return
            }
            opened = breaker.record(.failure(Failures.server), for: probe, now: at(now))
        }
        now += seconds(opened?.openFor ?? .zero) + 0.001
        let probe = breaker.admit(now: at(now)).permit!
        #expect(breaker.record(.success, for: probe, now: at(now)) == BreakerTransition(from: .halfOpen, to: .closed))
    }

    @Test(
        "Every preset breaker counts timeouts: a hung server trips it",
        arguments: ["standard", "interactive", "background"])
    func presetBreakersCountTimeouts(name: String) {
        let breaker = FailureRatioBreaker(presetConfiguration(name), random: SharedRandomSource(seed: 3))
        failFiveTimesASecond(breaker, from: 0, through: 9.8, Failures.timeout)
        #expect(breaker.metrics(now: at(9.8)).state == .closed)
        #expect(call(breaker, .failure(Failures.timeout), at: at(10))?.to == .open)
    }

    @Test(
        "A preset breaker stays shut while any call of the last 10 s succeeded, however many failed",
        arguments: ["standard", "interactive", "background"])
    func presetBreakersIgnoreBrownouts(name: String) {
        let breaker = FailureRatioBreaker(presetConfiguration(name), random: SharedRandomSource(seed: 5))
        // A 98 % brownout: one success at 3 s among calls that fail five times a second from 0 s.
        failFiveTimesASecond(breaker, from: 0, through: 2.8)
        call(breaker, .success, at: at(3))
        #expect(failFiveTimesASecond(breaker, from: 3.2, through: 12.8) == nil)
        #expect(breaker.windowCounts(now: at(12.8)) == (50, 49, 0))
        #expect(breaker.metrics(now: at(12.8)).state == .closed)
        // The success leaves the 10 s window (1 s slices) at 13 s: every call of a whole window failed.
        #expect(call(breaker, .failure(Failures.server), at: at(13))?.to == .open)
    }

    @Test(
        "The probe that closes a preset breaker counts: the failures right after it do not reopen it",
        arguments: ["standard", "interactive", "background"])
    func closingProbeStartsTheWindow(name: String) {
        let breaker = FailureRatioBreaker(presetConfiguration(name), random: SharedRandomSource(seed: 9))
        #expect(failFiveTimesASecond(breaker, from: 0, through: 10)?.to == .open)
        let probeAt = 10 + seconds(breaker.metrics(now: at(10)).remainingOpenDuration) + 0.001
        let probe = breaker.admit(now: at(probeAt)).permit!
        #expect(breaker.record(.success, for: probe, now: at(probeAt))?.to == .closed)
        #expect(breaker.windowCounts(now: at(probeAt)) == (1, 0, 0))
        // Twenty-five failures in the next 5 s: the window still holds the probe's success.
        #expect(failFiveTimesASecond(breaker, from: probeAt + 0.2, through: probeAt + 5) == nil)
        #expect(breaker.metrics(now: at(probeAt + 5)).state == .closed)
        #expect(failFiveTimesASecond(breaker, from: probeAt + 5.2, through: probeAt + 9.8) == nil)
        // Once a whole window has passed without a success, it opens again.
        #expect(failFiveTimesASecond(breaker, from: probeAt + 10, through: probeAt + 11)?.to == .open)
    }

    @Test(
        "A preset breaker's open time stays within its base ±20 % (500 ms) while probes keep failing",
        arguments: [("standard", 0.5), ("interactive", 0.5), ("background", 0.5)])
    func presetOpenTimeIsBounded(name: String, base: Double) {
        let (cap, floor) = (1.2 * base, 0.8 * base)
        let breaker = FailureRatioBreaker(presetConfiguration(name), random: SharedRandomSource(seed: 11))
        #expect(failFiveTimesASecond(breaker, from: 0, through: 10)?.to == .open)
        var now = 10.0
        var longest = 0.0
        // Twenty failed probes in a row: the open time stays jittered around its base and never grows.
        for _ in 0..<20 {
            let openFor = seconds(breaker.metrics(now: at(now)).remainingOpenDuration)
            #expect(openFor >= floor - 1e-6)
            longest = max(longest, openFor)
            now += openFor + 0.001
            guard let probe = breaker.admit(now: at(now)).permit else {
                Issue.record("no probe after the open time")
                return
            }
            breaker.record(.failure(Failures.server), for: probe, now: at(now))
        }
        #expect(longest <= cap + 1e-6)
        // However long the outage, one successful probe after at most 1.2 × the base lets the server back in.
        now += seconds(breaker.metrics(now: at(now)).remainingOpenDuration) + 0.001
        let probe = breaker.admit(now: at(now)).permit!
        #expect(breaker.record(.success, for: probe, now: at(now)) == BreakerTransition(from: .halfOpen, to: .closed))
    }

    @Test("Calls a stage inside the breaker holds are not waiting on the dependency: they start waiting when released")
    func heldCallsDoNotCountAsUnanswered() {
        let breaker = FailureRatioBreaker(.outageOnly, random: SharedRandomSource(seed: 23))
        call(breaker, .success, at: at(0))
        // Five calls admitted at 0.5 s, each held at once (a quota that resets at 30 s).
        let permits = (0..<5).compactMap { _ in breaker.admit(now: at(0.5)).permit }
        let holds = permits.map { _ in breaker.callHeld(now: at(0.5)) }
        // Twenty seconds on, four times the silence, a sixth call finds no call waiting on the dependency.
        let late = breaker.admit(now: at(20.5))
        #expect(late.transition == nil)
        #expect(late.permit != nil)
        let lateHold = breaker.callHeld(now: at(20.5))
        // Released at the reset, the calls wait from then: silent only a whole silence after it.
        for hold in holds + [lateHold] { breaker.callReleased(hold, now: at(30)) }
        #expect(breaker.admit(now: at(34.5)).transition == nil)
        #expect(breaker.admit(now: at(35)).transition?.to == .open)
    }

    @Test("A release after the breaker changed state, or of a hold it did not count, changes nothing")
    func staleReleasesAreIgnored() {
        let breaker = FailureRatioBreaker(.outageOnly, random: SharedRandomSource(seed: 29))
        call(breaker, .success, at: at(0))
        let permits = (0..<5).compactMap { _ in breaker.admit(now: at(1)).permit }
        let holds = permits.map { _ in breaker.callHeld(now: at(1)) }
        breaker.reset(now: at(2))
        call(breaker, .success, at: at(2))
        // Releasing holds of the earlier generation adds no waiting call: nothing waits, so no silence opens it.
        for hold in holds { breaker.callReleased(hold, now: at(3)) }
        #expect(breaker.admit(now: at(30)).transition == nil)
        // Holds of calls it never counted (a stage that reports to a breaker it is not inside) count nothing on
        // release either: no phantom calls wait.
        let other = FailureRatioBreaker(.outageOnly, random: SharedRandomSource(seed: 37))
        call(other, .success, at: at(0))
        let strays = (0..<3).map { _ in other.callHeld(now: at(0.5)) }
        #expect(strays.allSatisfy { !$0.counted })
        for hold in strays { other.callReleased(hold, now: at(1)) }
        #expect(other.admit(now: at(7)).transition == nil)
        // A breaker without a silence rule counts no hold.
        let counting = FailureRatioBreaker(.standard, random: SharedRandomSource(seed: 31))
        call(counting, .success, at: at(0))
        _ = counting.admit(now: at(0.5))
        #expect(!counting.callHeld(now: at(0.5)).counted)
    }

    /// Admits a call every half second from `start` through `end` without finishing any; returns the
    /// permits, or stops at the admission that changed the breaker's state and returns that change too.
    func waitEveryHalfSecond(
        _ breaker: FailureRatioBreaker, from start: Double, through end: Double
    ) -> (permits: [BreakerPermit], change: (at: Double, transition: BreakerTransition)?) {
        var permits: [BreakerPermit] = []
        var now = start
        while now <= end + 1e-9 {
            let admission = breaker.admit(now: at(now))
            if let transition = admission.transition { return (permits, (now, transition)) }
            if let permit = admission.permit { permits.append(permit) }
            now += 0.5
        }
        return (permits, nil)
    }

    /// When a breaker of `configuration` that saw one success at 0 s, then calls every half second from 0.5 s
    /// that nothing answers, finds them silent: its silence after the first of them waited (5 s for the presets'
    /// ``FailureRatioBreaker/Configuration/outageOnly``, 10 s for ``tenSecondSilence``).
    func silenceOpens(_ configuration: FailureRatioBreaker.Configuration) -> Double {
        0.5 + seconds(configuration.unansweredWindow ?? .seconds(10))
    }

    /// A breaker of `configuration` that saw one success at 0 s, then calls every half second from 0.5 s that
    /// nothing answers, until the silence opens it (``silenceOpens(_:)``); returns it with those waiting calls'
    /// permits.
    func hungBreaker(
        _ configuration: FailureRatioBreaker.Configuration = tenSecondSilence, seed: UInt64 = 19
    ) -> (breaker: FailureRatioBreaker, waiting: [BreakerPermit]) {
        let breaker = FailureRatioBreaker(configuration, random: SharedRandomSource(seed: seed))
        call(breaker, .success, at: at(0))
        let (waiting, opened) = waitEveryHalfSecond(breaker, from: 0.5, through: 20)
        #expect(opened?.at == silenceOpens(configuration))
        #expect(opened?.transition.to == .open)
        return (breaker, waiting)
    }

    @Test(
        "A preset breaker opens once 3 waiting calls went 5 s without a success, before any timeout",
        arguments: [("standard", 5.5, 10), ("interactive", 5.5, 10), ("background", 5.5, 10)])
    func presetBreakersOpenOnUnansweredCalls(name: String, opensAt: Double, waited: Int) {
        let configuration = presetConfiguration(name)
        #expect(silenceOpens(configuration) == opensAt)
        let breaker = FailureRatioBreaker(configuration, random: SharedRandomSource(seed: 13))
        call(breaker, .success, at: at(0))
        // A hung server: calls from 0.5 s on wait and nothing answers. The silence counts from the first of them.
        let (waiting, change) = waitEveryHalfSecond(breaker, from: 0.5, through: 20)
        #expect(waiting.count == waited)
        #expect(change?.at == opensAt)
        #expect(change?.transition.from == .closed && change?.transition.to == .open)
        #expect(breaker.admit(now: at(opensAt)).rejection?.state == .open)
        // The waiting calls' timeouts, when they come, belong to the closed period before the trip: they count
        // for nothing.
        let timedOut = at(opensAt + 0.5)
        for permit in waiting { #expect(breaker.record(.failure(Failures.timeout), for: permit, now: timedOut) == nil) }
        #expect(breaker.windowCounts(now: timedOut) == (0, 0, 0))
    }

    @Test("A breaker does not judge silence unless asked to")
    func silenceIsOptIn() {
        var configuration = FailureRatioBreaker.Configuration.outageOnly
        configuration.opensWhenUnanswered = false
        let breaker = FailureRatioBreaker(configuration, random: SharedRandomSource(seed: 13))
        call(breaker, .success, at: at(0))
        #expect(waitEveryHalfSecond(breaker, from: 0.5, through: 60).change == nil)
        #expect(!breaker.policyDescription.contains("unanswered"))
        #expect(FailureRatioBreaker(.outageOnly).policyDescription.hasSuffix(", unanswered: 3 in 5.0 seconds)"))
        #expect(FailureRatioBreaker(Self.tenSecondSilence).policyDescription.hasSuffix(", unanswered: 5)"))
    }

    @Test(
        "A preset breaker opens on failures only once its 10 s window holds its minimum of calls, all failed",
        arguments: [("standard", 40), ("interactive", 40), ("background", 40)])
    func failuresNeedTheMinimumOfCallsInTheWindow(name: String, minimum: Int) {
        // A little under the minimum in every 10 s, all failing (at 40, a key of 3.5 calls a second in a p = 0.9
        // brownout sees a whole window fail like this about once in 40): the window never holds enough to judge.
        let quietInterval = 10 / (0.875 * Double(minimum))
        let quiet = FailureRatioBreaker(presetConfiguration(name), random: SharedRandomSource(seed: 3))
        for index in 0...Int(60 / quietInterval) {
            #expect(call(quiet, .failure(Failures.server), at: at(Double(index) * quietInterval)) == nil)
        }
        #expect(quiet.metrics(now: at(60)).state == .closed)
        // A quarter more than the minimum in every 10 s, all failing: it opens once it has counted for a whole
        // window.
        let busyInterval = 10 / (1.25 * Double(minimum))
        let busy = FailureRatioBreaker(presetConfiguration(name), random: SharedRandomSource(seed: 3))
        var opened: Double?
        for index in 0...Int(20 / busyInterval) where opened == nil {
            if call(busy, .failure(Failures.server), at: at(Double(index) * busyInterval))?.to == .open {
                opened = Double(index) * busyInterval
            }
        }
        #expect(opened.map { $0 >= 10 && $0 <= 11 } == true)
    }

    @Test("Silence opens the breaker only while at least the minimum of unanswered calls waits")
    func silenceNeedsEnoughWaitingCalls() {
        let breaker = FailureRatioBreaker(Self.tenSecondSilence, random: SharedRandomSource(seed: 13))
        call(breaker, .success, at: at(0))
        let early = (1...4).compactMap { breaker.admit(now: at(Double($0))).permit }
        #expect(early.count == 4)
        // Four calls have waited 29 s without an answer: not enough calls to judge by.
        #expect(breaker.admit(now: at(30)).transition == nil)
        // The fifth one waits too now: the next admission finds five calls unanswered for a whole window.
        #expect(breaker.admit(now: at(30.5)).transition?.to == .open)
    }

    @Test("A breaker that has not seen a success since it was created does not judge silence")
    func silenceNeedsAnAnswerFirst() {
        let breaker = FailureRatioBreaker(.outageOnly, random: SharedRandomSource(seed: 13))
        #expect(waitEveryHalfSecond(breaker, from: 0, through: 60).change == nil)
        #expect(breaker.metrics(now: at(60)).state == .closed)
    }

    @Test("A slow dependency whose answers arrive never looks silent: a whole window is as long as its slowest success")
    func slowAnswersAreNotSilence() {
        let breaker = FailureRatioBreaker(Self.tenSecondSilence, random: SharedRandomSource(seed: 13))
        // One call takes 15 s and succeeds.
        let slow = breaker.admit(now: at(0)).permit!
        #expect(breaker.record(.success, for: slow, now: at(15)) == nil)
        // Calls from 15.5 s wait: after 10 s they are not yet overdue by this dependency's own measure.
        let (waiting, change) = waitEveryHalfSecond(breaker, from: 15.5, through: 40)
        #expect(change?.at == 30.5)
        #expect(waiting.count == 30)
        // Had one of them succeeded on the way, the silence would have started again there.
        let other = FailureRatioBreaker(Self.tenSecondSilence, random: SharedRandomSource(seed: 13))
        let first = other.admit(now: at(0)).permit!
        other.record(.success, for: first, now: at(0.1))
        let before = waitEveryHalfSecond(other, from: 0.5, through: 9.5)
        #expect(before.change == nil)
        other.record(.success, for: before.permits[0], now: at(9.6))
        #expect(waitEveryHalfSecond(other, from: 10, through: 19.5).change == nil)
        #expect(waitEveryHalfSecond(other, from: 20, through: 20).change?.transition.to == .open)
    }

    @Test("The probe that closes the breaker after a silence starts the next window: it judges silence again")
    func closingProbeRestartsTheSilence() {
        let breaker = hungBreaker(seed: 13).breaker
        let probeAt = 10.5 + seconds(breaker.metrics(now: at(10.5)).remainingOpenDuration) + 0.001
        let probe = breaker.admit(now: at(probeAt)).permit!
        #expect(probe.isProbe)
        // The probe waits 4 s behind the server's backlog, then succeeds.
        #expect(breaker.record(.success, for: probe, now: at(probeAt + 4))?.to == .closed)
        let silence = waitEveryHalfSecond(breaker, from: probeAt + 4.5, through: probeAt + 30).change
        #expect(silence?.transition.to == .open)
        #expect(abs((silence?.at ?? 0) - (probeAt + 14.5)) < 0.01)
    }

    @Test(
        "A preset breaker opened by a hung dependency lets one probe wait at a time; after failures that came back, three",
        arguments: ["standard", "interactive", "background"])
    func hungDependencyGetsOneProbeAtATime(name: String) {
        let hung = hungBreaker(presetConfiguration(name), seed: 17).breaker
        let opened = silenceOpens(presetConfiguration(name))
        let probeAt = opened + seconds(hung.metrics(now: at(opened)).remainingOpenDuration) + 0.001
        let probe = hung.admit(now: at(probeAt)).permit!
        #expect(probe.isProbe)
        // While the probe waits, nothing else goes: it is answered no sooner for company in the queue.
        #expect(hung.admit(now: at(probeAt + 0.5)).rejection?.state == .halfOpen)
        // Its timeout reopens the breaker, still as hung: the next probe waits alone too.
        #expect(hung.record(.failure(Failures.timeout), for: probe, now: at(probeAt + 10))?.to == .open)
        let nextAt = probeAt + 10 + seconds(hung.metrics(now: at(probeAt + 10)).remainingOpenDuration) + 0.001
        let next = hung.admit(now: at(nextAt)).permit!
        #expect(hung.admit(now: at(nextAt)).rejection?.state == .halfOpen)
        #expect(hung.record(.success, for: next, now: at(nextAt + 3))?.to == .closed)

        // An outage answers at once: the breaker it opens admits its three probes side by side.
        let down = FailureRatioBreaker(presetConfiguration(name), random: SharedRandomSource(seed: 17))
        #expect(failFiveTimesASecond(down, from: 0, through: 10)?.to == .open)
        let downProbeAt = 10 + seconds(down.metrics(now: at(10)).remainingOpenDuration) + 0.001
        let probes = (0..<4).map { _ in down.admit(now: at(downProbeAt)) }
        #expect(probes.prefix(3).allSatisfy { $0.permit?.isProbe == true })
        #expect(probes[3].rejection?.state == .halfOpen)
    }

    @Test(
        "A breaker opened by a hung dependency closes when a call it had queued is answered with a success",
        arguments: ["standard", "interactive", "background"])
    func aLateAnswerClosesAHungBreaker(name: String) {
        let (breaker, waiting) = hungBreaker(presetConfiguration(name))
        let opened = silenceOpens(presetConfiguration(name))
        #expect(breaker.admit(now: at(opened + 0.1)).rejection?.state == .open)
        // The server works through its queue again: the first call it had queued (at 0.5 s) is answered.
        let answered = opened + 0.5
        #expect(
            breaker.record(.success, for: waiting[0], now: at(answered)) == BreakerTransition(from: .open, to: .closed))
        #expect(breaker.admit(now: at(answered)).permit?.isProbe == false)
        // The rest of the queue's answers change nothing more, and the silence window now lasts as long as
        // that answer took (`opened` seconds): calls waiting from `answered` are not judged silent before then.
        for permit in waiting.dropFirst() { #expect(breaker.record(.success, for: permit, now: at(answered)) == nil) }
        let silentAt = answered + opened
        #expect(waitEveryHalfSecond(breaker, from: answered + 0.5, through: silentAt - 0.5).change == nil)
        #expect(waitEveryHalfSecond(breaker, from: silentAt, through: silentAt).change?.transition.to == .open)
    }

    @Test(
        "A late success also closes a hung breaker whose probe is still waiting; the probe's answer then counts for nothing"
    )
    func aLateAnswerOvertakesTheProbe() {
        let (breaker, waiting) = hungBreaker()
        let probeAt = 10.5 + seconds(breaker.metrics(now: at(10.5)).remainingOpenDuration) + 0.001
        let probe = breaker.admit(now: at(probeAt)).permit!
        #expect(probe.isProbe)
        #expect(
            breaker.record(.success, for: waiting[3], now: at(probeAt + 1))
                == BreakerTransition(from: .halfOpen, to: .closed))
        #expect(breaker.record(.failure(Failures.timeout), for: probe, now: at(probeAt + 30)) == nil)
        #expect(breaker.metrics(now: at(probeAt + 30)).state == .closed)
    }

    @Test("A breaker opened by failures that came back is not closed by the late success of an older call")
    func aLateAnswerLeavesAnOutageOpen() {
        let breaker = FailureRatioBreaker(.outageOnly, random: SharedRandomSource(seed: 19))
        let slow = breaker.admit(now: at(0)).permit!
        #expect(failFiveTimesASecond(breaker, from: 0, through: 11)?.to == .open)
        #expect(breaker.record(.success, for: slow, now: at(11)) == nil)
        // Still in its open cycle: the open period has run out and the next call is a probe.
        #expect(breaker.metrics(now: at(11)).state == .halfOpen)
        #expect(breaker.admit(now: at(11)).permit?.isProbe == true)
    }

    @Test("A late success does not cut short the server's Retry-After that holds a hung breaker open")
    func aLateAnswerLeavesTheServersWait() {
        let (breaker, waiting) = hungBreaker()
        // A queued call comes back 429 with Retry-After: 30: the server asks for 30 s from now.
        #expect(breaker.record(.failure(rateLimited(retryAfter: 30)), for: waiting[0], now: at(11)) == nil)
        #expect(breaker.record(.success, for: waiting[1], now: at(12)) == nil)
        let rejection = breaker.admit(now: at(12)).rejection
        #expect(rejection?.state == .open)
        #expect(rejection.map { abs(seconds($0.retryAfter) - 29) < 0.01 } == true)
    }

    @Test("A count window of Int.max calls is clamped to 1,000,000 calls instead of allocating Int.max")
    func hugeCountWindowIsClamped() {
        let breaker = FailureRatioBreaker(countBased(Int.max, minimum: 2, ratio: 0.5))
        call(breaker, .failure(Failures.server), at: at(0))
        #expect(call(breaker, .failure(Failures.server), at: at(0))?.to == .open)
        #expect(FailureRatioBreaker(countBased(Int.min, minimum: 1, ratio: 0.5)).windowCounts(now: at(0)).calls == 0)
    }
}
