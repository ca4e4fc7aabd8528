import Foundation
import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("ServerQuotaLimiter (ManualClock)")
struct ServerQuotaLimiterTests {
    @Test func passesFreelyUntilAQuotaIsAdvertised() {
        let limiter = ServerQuotaLimiter()
        for _ in 0..<100 { #expect(limiter.tryAcquire(now: at(0)).permit != nil) }
        #expect(limiter.remaining(now: at(0)) == nil)
    }

    @Test func aSpentQuotaDelaysTheNextCallUntilTheReset() {
        let limiter = ServerQuotaLimiter()
        limiter.observe(ServerQuota(remaining: 0, resetAfter: .seconds(10)), now: at(0))
        #expect(limiter.tryAcquire(now: at(0)) == .delayed(retryAfter: .seconds(10)))
        #expect(limiter.tryAcquire(now: at(4)) == .delayed(retryAfter: .seconds(6)))
        #expect(limiter.tryAcquire(now: at(10)).permit != nil)
        #expect(limiter.tryAcquire(now: at(10)).permit != nil)
    }

    @Test func callsLeftAreCountedDown() {
        let limiter = ServerQuotaLimiter()
        limiter.observe(ServerQuota(remaining: 2, resetAfter: .seconds(30), limit: 60), now: at(0))
        #expect(limiter.tryAcquire(now: at(1)).permit != nil)
        #expect(limiter.tryAcquire(now: at(1)).permit != nil)
        #expect(limiter.remaining(now: at(1)) == 0)
        #expect(limiter.tryAcquire(now: at(1)) == .delayed(retryAfter: .seconds(29)))
    }

    @Test func aWaitBeyondTheMaximumIsRefusedWithTheTimeLeft() {
        let limiter = ServerQuotaLimiter(.init(maximumWait: .seconds(5)))
        limiter.observe(ServerQuota(remaining: 0, resetAfter: .seconds(60)), now: at(0))
        #expect(limiter.tryAcquire(now: at(0)) == .rejected(.rateLimited, retryAfter: .seconds(60)))
        #expect(limiter.tryAcquire(now: at(56)) == .delayed(retryAfter: .seconds(4)))
    }

    @Test func spreadingEvenlySpacesTheCallsLeft() {
        let limiter = ServerQuotaLimiter(.init(maximumWait: nil, spreadsEvenly: true))
        limiter.observe(ServerQuota(remaining: 4, resetAfter: .seconds(8)), now: at(0))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
        #expect(limiter.tryAcquire(now: at(0)) == .delayed(retryAfter: .seconds(2)))
        #expect(limiter.tryAcquire(now: at(2)).permit != nil)
    }

    @Test func aQuotaWithoutResetIsIgnored() {
        let limiter = ServerQuotaLimiter()
        limiter.observe(ServerQuota(remaining: 0), now: at(0))
        #expect(limiter.tryAcquire(now: at(0)).permit != nil)
    }

    @Test("The stage hands the quota reported inside it to the limiter; the next call waits on the clock")
    func stageWaitsForTheReset() async throws {
        let clock = ManualClock()
        let limiter = ServerQuotaLimiter()
        let stage = ServerQuotaStrategy(limiter: limiter)
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        var headers = HTTPHeaders()
        headers.add(name: "RateLimit", value: #""default";r=0;t=10"#)
        let reported = headers
        try await stage.execute(context) { inner in inner.reportQuota(from: reported) }
        let calls = LockedBox(0)
        let second = Task { try await stage.execute(context) { _ in calls.mutate { $0 += 1 } } }
        await clock.waitForSleepers()
        #expect(calls.value == 0)
        clock.advance(by: .seconds(9))
        #expect(calls.value == 0)
        clock.advance(by: .seconds(1))
        try await second.value
        #expect(calls.value == 1)
    }

    @Test("A reset beyond the deadline is refused locally at once with the time left")
    func refusedWhenTheWaitExceedsTheDeadline() async throws {
        let clock = ManualClock()
        let limiter = ServerQuotaLimiter()
        let stage = ServerQuotaStrategy(limiter: limiter)
        limiter.observe(ServerQuota(remaining: 0, resetAfter: .seconds(30)), now: .init(offset: .zero))
        let context = ResilienceContext(
            key: "api", deadline: .init(offset: .seconds(5)), clock: .manual(clock))
        let error = await #expect(throws: ResilienceError.self) {
            try await stage.execute(context) { _ in 1 }
        }
        #expect(error?.retryAfter == .seconds(30))
        #expect(context.classify(error!).code == .rateLimitedLocally)
    }

    @Test("A spent quota is never shortened or reopened by a response that names less")
    func aSpentQuotaIsNeverShortened() {
        let limiter = ServerQuotaLimiter()
        limiter.observe(ServerQuota(remaining: 0, resetAfter: .seconds(10)), now: at(0))
        // A response that left the server earlier (or another policy's window) arrives later.
        limiter.observe(ServerQuota(remaining: 0, resetAfter: .seconds(3)), now: at(1))
        limiter.observe(ServerQuota(remaining: 5, resetAfter: .seconds(2)), now: at(2))
        #expect(limiter.tryAcquire(now: at(5)) == .delayed(retryAfter: .seconds(5)))
        // A longer wait extends it.
        limiter.observe(ServerQuota(remaining: 0, resetAfter: .seconds(10)), now: at(5))
        #expect(limiter.tryAcquire(now: at(12)) == .delayed(retryAfter: .seconds(3)))
        #expect(limiter.tryAcquire(now: at(15)).permit != nil)
    }

    @Test("A rate-limit answer's Retry-After spends the quota for every later call, not only the retried one")
    func aRateLimitAnswerSpendsTheQuota() async throws {
        let clock = ManualClock()
        let limiter = ServerQuotaLimiter()
        let stage = ServerQuotaStrategy(limiter: limiter)
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        await #expect(throws: RateLimitAnswer.self) {
            try await stage.execute(context) { _ -> Int in throw RateLimitAnswer(wait: .seconds(4), sent: true) }
        }
        #expect(limiter.tryAcquire(now: at(0)) == .delayed(retryAfter: .seconds(4)))
        #expect(limiter.tryAcquire(now: at(4)).permit != nil)
        clock.advance(by: .seconds(4))
        // A refusal that never reached the server (a local limiter's) says nothing about the server's quota.
        await #expect(throws: RateLimitAnswer.self) {
            try await stage.execute(context) { _ -> Int in throw RateLimitAnswer(wait: .seconds(9), sent: false) }
        }
        #expect(limiter.tryAcquire(now: at(4)).permit != nil)
    }

    @Test("Calls in flight come off what a response says is left: the server may not have counted them yet")
    func callsInFlightAreNotAdmittedTwice() {
        let limiter = ServerQuotaLimiter()
        limiter.observe(ServerQuota(remaining: 5, resetAfter: .seconds(10)), now: at(0))
        let permits = (0..<5).compactMap { _ in limiter.tryAcquire(now: at(0)).permit }
        #expect(permits.count == 5)
        // The first answer: the server counted that call (4 left), but four more are on their way to it.
        limiter.observe(ServerQuota(remaining: 4, resetAfter: .seconds(9)), now: at(1))
        #expect(limiter.remaining(now: at(1)) == 0)
        #expect(limiter.tryAcquire(now: at(1)) == .delayed(retryAfter: .seconds(9)))
        for permit in permits { limiter.release(permit, outcome: .accepted, now: at(1)) }
        // With nothing in flight, what the server says is left is what is left.
        limiter.observe(ServerQuota(remaining: 4, resetAfter: .seconds(8)), now: at(2))
        #expect(limiter.remaining(now: at(2)) == 4)
    }

    @Test("Calls are counted in flight from the first advertised quota: before it, admission and release keep no count")
    func callsAreCountedFromTheFirstQuota() {
        let limiter = ServerQuotaLimiter()
        let uncounted = (0..<3).compactMap { _ in limiter.tryAcquire(now: at(0)).permit }
        #expect(uncounted.map(\.token) == [0, 0, 0])
        limiter.observe(ServerQuota(remaining: 5, resetAfter: .seconds(10)), now: at(1))
        #expect(limiter.remaining(now: at(1)) == 5)
        let counted = (0..<2).compactMap { _ in limiter.tryAcquire(now: at(1)).permit }
        #expect(counted.map(\.token) == [1, 1])
        // Releasing the calls admitted before the quota counts nothing out: both counted calls are still in
        // flight, and the one beside the answered call comes off what is left.
        for permit in uncounted { limiter.release(permit, outcome: .accepted, now: at(2)) }
        limiter.observe(ServerQuota(remaining: 3, resetAfter: .seconds(8)), now: at(2))
        #expect(limiter.remaining(now: at(2)) == 2)
        for permit in counted { limiter.release(permit, outcome: .accepted, now: at(2)) }
        limiter.observe(ServerQuota(remaining: 3, resetAfter: .seconds(8)), now: at(2))
        #expect(limiter.remaining(now: at(2)) == 3)
    }

    @Test("Through the stage: a quota reported while other calls are in flight holds the next call")
    func stageCountsCallsInFlight() async throws {
        let clock = ManualClock()
        let limiter = ServerQuotaLimiter()
        let stage = ServerQuotaStrategy(limiter: limiter)
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        limiter.observe(ServerQuota(remaining: 2, resetAfter: .seconds(10)), now: at(0))
        // Two calls are admitted and sent; the server has not answered the second one yet.
        let (answer, answered) = AsyncStream<Void>.makeStream()
        let inFlight = Task {
            try await stage.execute(context) { _ in
                for await _ in answer { break }
            }
        }
        var headers = HTTPHeaders()
        headers.add(name: "RateLimit", value: #""default";r=1;t=10"#)
        let reported = headers
        await eventually { limiter.remaining(now: at(0)) == 1 }
        try await stage.execute(context) { inner in inner.reportQuota(from: reported) }
        // "1 left" did not count the call still in flight: a third call waits for the reset.
        let third = Task { try await stage.execute(context) { _ in 3 } }
        // Sent at once (the failure) or asleep until the reset, whichever comes first.
        let (settled, signal) = AsyncStream<Void>.makeStream()
        Task {
            await clock.waitForSleepers(count: 1)
            signal.yield()
        }
        Task {
            _ = await third.result
            signal.yield()
        }
        for await _ in settled { break }
        #expect(clock.nextDeadline?.offset == .seconds(10))
        answered.yield()
        try await inFlight.value
        clock.advance(by: .seconds(10))
        #expect(try await third.value == 3)
    }

    @Test func describesItself() {
        #expect(ServerQuotaStrategy(limiter: ServerQuotaLimiter()).stageDescription.name == "server-quota")
        #expect(ServerQuotaLimiter().policyDescription.hasPrefix("server-quota("))
    }
}

/// A rate-limit failure with a wait, as a classifier reads a `429` with `Retry-After` (`sent`) or a local
/// refusal that never reached the server.
struct RateLimitAnswer: ClassifiedError {
    let wait: Duration
    let sent: Bool
    var classification: FailureClassification {
        FailureClassification(
            category: .rateLimited, code: .http(429), httpStatus: sent ? 429 : nil, retryAfter: wait,
            isTransient: true, requestWasNotSent: !sent)
    }
}
