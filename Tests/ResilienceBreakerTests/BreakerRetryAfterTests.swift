import ResilienceTesting
import Testing

@testable import ResiliencePolicies

/// A 429 carrying the server's `Retry-After`.
func rateLimited(retryAfter seconds: Double) -> FailureClassification {
    var classification = Failures.tooManyRequests
    classification.retryAfter = .seconds(seconds)
    return classification
}

/// A 503 carrying the server's `Retry-After`.
func unavailable(retryAfter seconds: Double) -> FailureClassification {
    var classification = Failures.server
    classification.retryAfter = .seconds(seconds)
    return classification
}

@Suite("Breakers honour Retry-After")
struct BreakerRetryAfterTests {
    static func breakers() -> [any IsolatableBreaker] {
        var consecutive = ConsecutiveFailureBreaker.Configuration.interactive
        consecutive.openDuration.jitter = 0
        var ratio = FailureRatioBreaker.Configuration.standard
        ratio.openDuration = .constant(.seconds(5))
        var strict = RateLimitBreaker.Configuration.strict
        strict.cooldown.jitter = 0
        return [ConsecutiveFailureBreaker(consecutive), FailureRatioBreaker(ratio), RateLimitBreaker(strict)]
    }

    @Test("A 429 with Retry-After opens every breaker at once for at least that long", arguments: 0..<3)
    func rateLimitOpensForTheServersWait(index: Int) {
        let breaker = Self.breakers()[index]
        let transition = call(breaker, .failure(rateLimited(retryAfter: 30)), at: at(0))
        #expect(transition?.to == .open)
        #expect(transition?.openFor == .seconds(30))
        #expect(breaker.admit(now: at(29.9)).rejection?.state == .open)
        #expect(breaker.admit(now: at(10)).rejection?.retryAfter == .seconds(20))
        #expect(breaker.admit(now: at(30)).permit != nil)
    }

    @Test("The job-board case: a 10 s cooldown against Retry-After: 30 stays open 30 s")
    func strictCooldownIsLengthened() {
        var strict = RateLimitBreaker.Configuration.strict
        strict.cooldown.jitter = 0
        let breaker = RateLimitBreaker(strict)
        #expect(call(breaker, .failure(rateLimited(retryAfter: 30)), at: at(0))?.openFor == .seconds(30))
        #expect(breaker.admit(now: at(10)).rejection != nil)
        #expect(breaker.admit(now: at(30)).permit != nil)
    }

    @Test("A schedule longer than the hint wins")
    func longerScheduleWins() {
        let breaker = RateLimitBreaker()
        #expect(call(breaker, .failure(rateLimited(retryAfter: 5)), at: at(0))?.openFor == .seconds(30))
    }

    @Test("A 503 with Retry-After counts towards the threshold, and the trip lasts at least the hint")
    func serverErrorHintLengthensTheTrip() {
        var configuration = ConsecutiveFailureBreaker.Configuration.interactive
        configuration.openDuration.jitter = 0
        let breaker = ConsecutiveFailureBreaker(configuration)
        #expect(call(breaker, .failure(unavailable(retryAfter: 40)), at: at(0)) == nil)
        #expect(call(breaker, .failure(unavailable(retryAfter: 40)), at: at(1)) == nil)
        let transition = call(breaker, .failure(unavailable(retryAfter: 40)), at: at(2))
        #expect(transition?.openFor == .seconds(40))
        #expect(breaker.admit(now: at(41)).rejection != nil)
        #expect(breaker.admit(now: at(42)).permit != nil)
    }

    @Test("A late answer with a longer wait keeps an open breaker open")
    func lateAnswerExtendsTheOpenPeriod() {
        var strict = RateLimitBreaker.Configuration.strict
        strict.cooldown.jitter = 0
        let breaker = RateLimitBreaker(strict)
        let early = breaker.admit(now: at(0)).permit!
        let late = breaker.admit(now: at(0)).permit!
        breaker.record(.failure(rateLimited(retryAfter: 10)), for: early, now: at(0))
        // The second call was admitted before the trip; its answer asks for 30 s from t = 5 s.
        breaker.record(.failure(rateLimited(retryAfter: 30)), for: late, now: at(5))
        #expect(breaker.admit(now: at(34)).rejection?.retryAfter == .seconds(1))
        #expect(breaker.admit(now: at(35)).permit != nil)
    }

    @Test("Hints are clamped to the maximum, and can be ignored")
    func clampedAndIgnored() {
        var clamped = RateLimitBreaker.Configuration.strict
        clamped.cooldown.jitter = 0
        clamped.retryAfter.maximum = .seconds(60)
        #expect(
            call(RateLimitBreaker(clamped), .failure(rateLimited(retryAfter: 86_400)), at: at(0))?.openFor
                == .seconds(60))

        var ignored = RateLimitBreaker.Configuration.standard
        ignored.retryAfter = .ignored
        let breaker = RateLimitBreaker(ignored)
        #expect(call(breaker, .failure(rateLimited(retryAfter: 600)), at: at(0)) == nil)
        #expect(breaker.admit(now: at(0)).permit != nil)
    }

    @Test("lengthensTrips: a hint alone does not open the breaker")
    func lengthensTripsOnly() {
        var configuration = FailureRatioBreaker.Configuration.standard
        configuration.retryAfter = .lengthensTrips
        let breaker = FailureRatioBreaker(configuration)
        #expect(call(breaker, .failure(rateLimited(retryAfter: 30)), at: at(0)) == nil)
        #expect(breaker.admit(now: at(1)).permit != nil)
    }

    @Test("The pipeline stage refuses calls until the server's Retry-After has passed (ManualClock)")
    func stageRefusesUntilTheServersTime() async throws {
        let clock = ManualClock()
        let context = ResilienceContext(key: "jobs", clock: .manual(clock))
        var strict = RateLimitBreaker.Configuration.strict
        strict.cooldown.jitter = 0
        let stage = CircuitBreakerStrategy(breaker: RateLimitBreaker(strict))
        let sent = LockedBox(0)
        await #expect(throws: ScriptedError.self) {
            try await stage.execute(context) { _ -> Int in
                sent.mutate { $0 += 1 }
                throw ScriptedError(classification: rateLimited(retryAfter: 30))
            }
        }
        for _ in 0..<29 {
            clock.advance(by: .seconds(1))
            await #expect(throws: ResilienceError.self) {
                try await stage.execute(context) { _ in sent.mutate { $0 += 1 } }
            }
        }
        #expect(sent.value == 1)
        clock.advance(by: .seconds(1))
        try await stage.execute(context) { _ in sent.mutate { $0 += 1 } }
        #expect(sent.value == 2)
    }

    @Test(
        "A 429 with Retry-After from a call admitted before the breaker last changed state still opens it",
        arguments: 0..<3)
    func lateRateLimitFromAnEarlierStateOpens(index: Int) {
        let breaker = Self.breakers()[index]
        guard let early = breaker.admit(now: at(0)).permit else {
            Issue.record("a new breaker rejected a call")
            return
        }
        // The breaker changes state (isolated, then reset) while the call is out: its outcome is now stale.
        _ = breaker.isolate(now: at(1))
        _ = breaker.reset(now: at(2))
        let transition = breaker.record(.failure(rateLimited(retryAfter: 30)), for: early, now: at(3))
        #expect(transition?.to == .open)
        #expect(breaker.admit(now: at(32.9)).rejection?.state == .open)
        #expect(breaker.admit(now: at(33)).permit != nil)
        // A stale failure without the server's wait still does not count.
        let fresh = Self.breakers()[index]
        guard let other = fresh.admit(now: at(0)).permit else { return }
        _ = fresh.isolate(now: at(1))
        _ = fresh.reset(now: at(2))
        #expect(fresh.record(.failure(Failures.tooManyRequests), for: other, now: at(3)) == nil)
        #expect(fresh.admit(now: at(3)).permit != nil)
    }

    @Test("The shared breaker opens for the server's Retry-After")
    func sharedBreakerHonoursTheHint() async throws {
        let clock = ManualClock()
        let store = InMemoryCoordinationStore(clock: .manual(clock))
        var configuration = SharedBreaker.Configuration(key: "jobs", replica: "a")
        configuration.openDuration = .constant(.seconds(10))
        let breaker = SharedBreaker(store: store, configuration, clock: .manual(clock))
        defer { breaker.shutdown() }
        let now = ResilienceClock.manual(clock).now()
        let transition = call(breaker, .failure(rateLimited(retryAfter: 30)), at: now)
        #expect(transition?.openFor == .seconds(30))
        #expect(breaker.admit(now: now.advanced(by: .seconds(20))).rejection != nil)
    }

    @Test("A late answer with a longer wait keeps the shared breaker open, and the store learns it")
    func sharedBreakerHoldsOpenForALateHint() async throws {
        let clock = ManualClock()
        let store = FaultInjectingCoordinationStore(
            wrapping: InMemoryCoordinationStore(clock: .manual(clock)), clock: .manual(clock))
        var configuration = SharedBreaker.Configuration(key: "jobs", replica: "a")
        configuration.failureThreshold = 1
        configuration.openDuration = .constant(.seconds(10))
        let breaker = SharedBreaker(store: store, configuration, clock: .manual(clock))
        defer { breaker.shutdown() }
        let now = ResilienceClock.manual(clock).now()
        guard let early = breaker.admit(now: now).permit else {
            Issue.record("a closed breaker rejected")
            return
        }
        #expect(call(breaker, .failure(Failures.server), at: now)?.openFor == .seconds(10))
        // The call admitted before the trip answers a 429 asking for 60 s: the open period grows to match.
        #expect(breaker.record(.failure(rateLimited(retryAfter: 60)), for: early, now: now) == nil)
        #expect(breaker.admit(now: now.advanced(by: .seconds(30))).rejection?.retryAfter == .seconds(30))
        // The next refresh publishes the longer period over the trip's record, once the trip's own write has
        // returned from the store and its answer has had thousands of turns to reach the breaker.
        var stored = try await store.breakerRecord(key: "jobs")
        for _ in 0..<20_000 where stored?.state != .open {
            await Task.yield()
            stored = try await store.breakerRecord(key: "jobs")
        }
        #expect(await settles { breaker.storeCallsAwaited == 0 })
        for _ in 0..<5_000 { await Task.yield() }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(250))
        stored = try await store.breakerRecord(key: "jobs")
        for _ in 0..<20_000 where (stored?.remainingOpen ?? .zero) <= .seconds(10) {
            await Task.yield()
            stored = try await store.breakerRecord(key: "jobs")
        }
        #expect(stored?.state == .open)
        #expect(stored?.remainingOpen == .milliseconds(59_750))
    }
}
