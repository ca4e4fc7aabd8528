import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("RateLimiterStrategy")
struct RateLimiterStrategyTests {
    @Test func rejectsWithoutWaiting() async throws {
        let sink = RecordingTelemetrySink()
        let context = ResilienceContext(key: "api", telemetry: sink, clock: .manual(ManualClock()))
        let stage = RateLimiterStrategy(limiter: TokenBucketLimiter(.rate(1, burst: 1)), waits: false)
        #expect(try await stage.execute(context) { _ in 1 } == 1)
        await #expect(throws: ResilienceError(.rateLimited, key: "api", retryAfter: .seconds(1))) {
            try await stage.execute(context) { _ in 2 }
        }
        #expect(sink.events(.rateLimited).map(\.duration) == [.seconds(1)])
    }

    @Test func waitsOnTheClock() async throws {
        let clock = ManualClock()
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        let stage = RateLimiterStrategy.rateLimiter(TokenBucketLimiter(.rate(1, burst: 1)))
        #expect(try await stage.execute(context) { _ in 1 } == 1)
        let second = Task { try await stage.execute(context) { _ in 2 } }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        #expect(try await second.value == 2)
    }

    @Test("A call that waits for a permit is reported to the hold observer from the wait's start to its end")
    func reportsEachWaitAsAHold() async throws {
        let clock = ManualClock()
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        let observer = RecordingHoldObserver()
        let stage = RateLimiterStrategy(
            limiter: TokenBucketLimiter(.rate(1, burst: 1)), reportsHoldsTo: observer)
        // A permit at once: nothing held.
        #expect(try await stage.execute(context) { _ in 1 } == 1)
        #expect(observer.events.value.isEmpty)
        let second = Task {
            try await stage.execute(context) { inner in
                observer.events.mutate { $0.append("ran at \(inner.clock.now().offset)") }
                return 2
            }
        }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        #expect(try await second.value == 2)
        #expect(observer.events.value == ["held at 0.0 seconds", "released at 1.0 seconds", "ran at 1.0 seconds"])
        // A refusal without a wait holds nothing either.
        let refusing = RateLimiterStrategy(
            limiter: TokenBucketLimiter(.rate(1, burst: 1)), waits: false, reportsHoldsTo: observer)
        _ = try await refusing.execute(context) { _ in 3 }
        _ = try? await refusing.execute(context) { _ in 4 }
        #expect(observer.events.value.count == 3)
    }

    @Test func aWaitBeyondTheDeadlineIsRejectedAtOnce() async throws {
        let clock = ManualClock()
        let context = ResilienceContext(
            key: "api", deadline: ResilienceInstant(offset: .milliseconds(500)), clock: .manual(clock))
        let stage = RateLimiterStrategy(limiter: TokenBucketLimiter(.rate(1, burst: 1)))
        _ = try await stage.execute(context) { _ in 1 }
        await #expect(throws: ResilienceError(.rateLimited, key: "api", retryAfter: .seconds(1))) {
            try await stage.execute(context) { _ in 2 }
        }
    }

    @Test("A call that waits at an exhausted bucket waits the backoff it was told, counted as one refusal")
    func exhaustionBackoffCountsOneRefusalPerWaitingCall() async throws {
        let limiter = TokenBucketLimiter(.backingOffWithoutJitter)
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let context = ResilienceContext(key: "api", telemetry: sink, clock: .manual(clock))
        let stage = RateLimiterStrategy(limiter: limiter)
        #expect(try await stage.execute(context) { _ in 1 } == 1)
        let first = Task { try await stage.execute(context) { inner in inner.clock.now() } }
        await clock.waitForSleepers(count: 1)
        let second = Task { try await stage.execute(context) { inner in inner.clock.now() } }
        await clock.waitForSleepers(count: 2)
        // Each waiting call is one refusal in a row: told 1 s and 2 s, it sleeps that long (not 2 s and 8 s).
        #expect(sink.events(.rateLimited).map(\.duration) == [.seconds(1), .seconds(2)])
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(1)))
        #expect(clock.advanceToNextDeadline())
        #expect(try await first.value == ResilienceInstant(offset: .seconds(1)))
        #expect(clock.nextDeadline == ManualClock.Instant(offset: .seconds(2)))
        #expect(clock.advanceToNextDeadline())
        #expect(try await second.value == ResilienceInstant(offset: .seconds(2)))
    }

    @Test("A call told to wait or queue and then refused (no room, a turn after its deadline) is a rejection")
    func aRefusalAfterWaitingIsReportedAsARejection() async throws {
        let sink = RecordingTelemetrySink()
        let clock = ManualClock()
        let context = ResilienceContext(key: "api", telemetry: sink, clock: .manual(clock))
        let bulkhead = ConcurrencyLimiter(.limit(1, queued: 0))
        let held = try #require(bulkhead.tryAcquire(now: at(0)).permit)
        await #expect(throws: ResilienceError(.bulkheadFull, key: "api")) {
            try await RateLimiterStrategy(limiter: bulkhead).execute(context) { _ in 1 }
        }
        bulkhead.release(held, outcome: .accepted, now: at(0))
        let bucket = TokenBucketLimiter(.rate(1, burst: 1))
        #expect(bucket.tryAcquire(now: at(0)).permit != nil)
        let deadlined = ResilienceContext(
            key: "api", deadline: ResilienceInstant(offset: .milliseconds(500)), telemetry: sink,
            clock: .manual(clock))
        await #expect(throws: ResilienceError(.rateLimited, key: "api", retryAfter: .seconds(1))) {
            try await RateLimiterStrategy(limiter: bucket).execute(deadlined) { _ in 2 }
        }
        let events = sink.events(.rateLimited)
        #expect(events.map(\.detail) == ["queued", "bulkhead-full", "waiting", "rate-limited"])
        #expect(events.filter(MetricSchema.isRejection).count == 2)
    }

    @Test func releasesWithTheOutcome() async {
        let throttle = AdaptiveThrottle(.standard, random: SharedRandomSource(seed: 2))
        let stage = RateLimiterStrategy(limiter: throttle, waits: false)
        let context = ResilienceContext(key: "api", clock: .manual(ManualClock()))
        _ = try? await stage.execute(context) { _ in 1 }
        await #expect(throws: ScriptedError.self) {
            try await stage.execute(context) { _ -> Int in throw ScriptedError(classification: Failures.server) }
        }
        await #expect(throws: ScriptedError.self) {
            try await stage.execute(context) { _ -> Int in throw ScriptedError(classification: Failures.client) }
        }
        await #expect(throws: CancellationError.self) {
            try await stage.execute(context) { _ -> Int in throw CancellationError() }
        }
        let counts = throttle.counts(now: at(0))
        #expect(counts.requests == 3)
        #expect(counts.accepts == 2)
    }

    @Test func queuesInABulkheadAndNeverLeaksASlot() async throws {
        let clock = ManualClock()
        let bulkhead = ConcurrencyLimiter(.limit(1, queued: 2))
        let stage = RateLimiterStrategy(limiter: bulkhead)
        let context = ResilienceContext(key: "api", clock: .manual(clock))
        let first = Task { try await stage.execute(context) { _ in try await clock.sleep(for: .seconds(1)) } }
        await clock.waitForSleepers(count: 1)
        let second = Task { try await stage.execute(context) { _ in 2 } }
        await eventually { bulkhead.occupancy.queued == 1 }
        clock.advance(by: .seconds(1))
        try await first.value
        #expect(try await second.value == 2)
        await #expect(throws: CancellationError.self) {
            try await stage.execute(context) { _ -> Int in throw CancellationError() }
        }
        #expect(bulkhead.occupancy == (0, 0))
    }

    @Test func aFullBulkheadRejectsWhenNotWaiting() async {
        let bulkhead = ConcurrencyLimiter(.limit(1, queued: 2))
        let held = bulkhead.tryAcquire(now: at(0)).permit!
        let stage = RateLimiterStrategy(limiter: bulkhead, waits: false)
        let context = ResilienceContext(key: "api", clock: .manual(ManualClock()))
        await #expect(throws: ResilienceError(.bulkheadFull, key: "api")) {
            try await stage.execute(context) { _ in 1 }
        }
        bulkhead.release(held, outcome: .accepted, now: at(0))
        #expect(
            stage.stageDescription.description
                == "rate-limiter(policy: bulkhead(concurrent: 1, queue: 2), waits: false)")
    }
}

/// Records the holds a stage reports, in order.
final class RecordingHoldObserver: CallHoldObserver {
    let events = LockedBox<[String]>([])

    func callHeld(now: ResilienceInstant) -> CallHold {
        events.mutate { $0.append("held at \(now.offset)") }
        return CallHold(generation: 0, counted: true)
    }

    func callReleased(_ hold: CallHold, now: ResilienceInstant) {
        events.mutate { $0.append("released at \(now.offset)") }
    }
}
