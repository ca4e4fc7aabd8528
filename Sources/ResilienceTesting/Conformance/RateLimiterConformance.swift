import ResilienceCore

/// A conformance kit for third-party ``RateLimiter`` implementations (token buckets, bulkheads, throttles).
///
/// Give it a factory that makes a fresh limiter; each case drives its own limiter with explicit instants or
/// a ``ManualClock`` (no real sleeping) and checks the protocol's contract: a fresh limiter admits; a limiter
/// saturated without releases stops admitting; delays are never negative; released permits and elapsed
/// time restore admission; `waitForPermit` admits at once when free, gives up (rather than sleeping past it)
/// when the deadline is too close, and leaves no trace when its task is cancelled.
///
/// ```swift
/// @Test func conforms() async throws {
///     try await RateLimiterConformance { MyLimiter(permits: 10) }.check()
/// }
/// ```
public struct RateLimiterConformance: ConformanceKit {
    /// How the kit drives a limiter until it stops admitting.
    public enum Saturation: Sendable, Hashable {
        /// Take permits without releasing them (token buckets, bulkheads).
        case withoutReleasing
        /// Release every permit at once as ``RateLimitOutcome/rejectedByBackend`` (adaptive throttles).
        case byBackendRejections
    }

    /// Makes a fresh limiter for each case.
    public let makeLimiter: @Sendable () -> any RateLimiter
    /// The most permits taken without releasing before the kit concludes the limiter never limits.
    public var maximumPermits = 100_000
    /// How much time (on the limiter's instants) a saturated limiter may need to admit again.
    public var recoveryTime: Duration = .seconds(3600)

    /// How the kit saturates the limiter.
    public var saturation: Saturation

    /// Creates the kit.
    ///
    /// - Parameters:
    ///   - saturation: How the kit drives the limiter until it stops admitting.
    ///   - makeLimiter: Makes a fresh limiter for each case.
    public init(
        saturation: Saturation = .withoutReleasing, makeLimiter: @escaping @Sendable () -> any RateLimiter
    ) {
        self.saturation = saturation
        self.makeLimiter = makeLimiter
    }

    /// `"RateLimiter"`.
    public var subject: String { "RateLimiter" }

    private static let start = ResilienceInstant.origin.advanced(by: .seconds(1_000))

    /// Runs every case on a fresh limiter.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        await run.check("fresh-admits") {
            if case .admitted = makeLimiter().tryAcquire(now: Self.start) { return nil }
            return "a fresh limiter did not admit its first call"
        }
        await run.check("saturates-and-sane-delays") {
            let (_, detail) = saturate(makeLimiter())
            return detail
        }
        await run.check("release-and-time-restore") { restores(releasing: .accepted) }
        await run.check("abandoned-release-restores") { restores(releasing: .abandoned) }
        await run.check("wait-admits-when-free") { await waitAdmitsWhenFree() }
        await run.check("wait-respects-deadline") { await waitRespectsDeadline() }
        await run.check("cancelled-waiter-leaves-no-trace") { await cancelledWaiter() }
        return run.report(subject)
    }

    /// Saturates a fresh limiter, releases every permit with `outcome` after ``recoveryTime``, and checks it
    /// admits again.
    private func restores(releasing outcome: RateLimitOutcome) -> String? {
        let limiter = makeLimiter()
        let (permits, detail) = saturate(limiter)
        if let detail { return detail }
        let later = Self.start.advanced(by: recoveryTime)
        for permit in permits { limiter.release(permit, outcome: outcome, now: later) }
        if case .admitted = limiter.tryAcquire(now: later) { return nil }
        return "after releasing every permit as \(outcome) and \(recoveryTime), the limiter still does not admit"
    }

    /// Takes permits at one instant until the limiter stops admitting; the permits and a violation, if any.
    private func saturate(_ limiter: any RateLimiter) -> ([RateLimitPermit], String?) {
        var permits: [RateLimitPermit] = []
        for _ in 0..<maximumPermits {
            switch limiter.tryAcquire(now: Self.start) {
            case .admitted(let permit):
                if saturation == .byBackendRejections {
                    limiter.release(permit, outcome: .rejectedByBackend, now: Self.start)
                } else {
                    permits.append(permit)
                }
            case .delayed(let retryAfter):
                if retryAfter < .zero { return (permits, "a negative delay \(retryAfter)") }
                return (permits, nil)
            case .rejected(_, let retryAfter):
                if let retryAfter, retryAfter < .zero { return (permits, "a negative retry-after \(retryAfter)") }
                return (permits, nil)
            }
        }
        return (permits, "\(maximumPermits) permits at one instant, none released: the limiter never limits")
    }

    private func context(_ clock: ManualClock, deadline: Duration?) -> ResilienceContext {
        let resilienceClock = ResilienceClock.manual(clock)
        return ResilienceContext(
            key: "conformance", deadline: deadline.map { resilienceClock.now().advanced(by: $0) },
            clock: resilienceClock)
    }

    private func waitAdmitsWhenFree() async -> String? {
        let limiter = makeLimiter()
        let clock = ManualClock(now: Self.start.offset)
        let (task, done) = waiter(limiter, context(clock, deadline: .seconds(1)))
        switch await nextStep(task, done: done, clock: clock) {
        case .finished(.success(let permit)):
            limiter.release(permit, outcome: .accepted, now: ResilienceClock.manual(clock).now())
            return nil
        case .finished(.failure(let error)):
            return "waitForPermit on a fresh limiter threw \(error)"
        case .sleeping:
            task.cancel()
            return "waitForPermit on a fresh limiter waited on the clock instead of admitting"
        case nil:
            task.cancel()
            return "waitForPermit on a fresh limiter did not return within 10 s"
        }
    }

    private enum Step {
        case finished(Result<RateLimitPermit, any Error>)
        case sleeping
    }

    /// Waits (yielding, then in 1 ms steps of real time, up to `limit`) until `task` ends or sleeps on `clock`.
    private func nextStep(
        _ task: Task<RateLimitPermit, any Error>, done: LockedBox<Result<RateLimitPermit, any Error>?>,
        clock: ManualClock, within limit: Duration = .seconds(10)
    ) async -> Step? {
        let end = ContinuousClock.now.advanced(by: limit)
        var spins = 0
        while ContinuousClock.now < end {
            if let result = done.value { return .finished(result) }
            if clock.sleeperCount > 0 { return .sleeping }
            spins += 1
            if spins < 1_000 { await Task.yield() } else { try? await Task.sleep(for: .milliseconds(1)) }
        }
        return nil
    }

    private func waiter(
        _ limiter: any RateLimiter, _ context: ResilienceContext
    ) -> (Task<RateLimitPermit, any Error>, LockedBox<Result<RateLimitPermit, any Error>?>) {
        let done = LockedBox<Result<RateLimitPermit, any Error>?>(nil)
        let task = Task {
            let result: Result<RateLimitPermit, any Error>
            do {
                result = .success(try await limiter.waitForPermit(context: context))
            } catch {
                result = .failure(error)
            }
            done.mutate { $0 = result }
            return try result.get()
        }
        return (task, done)
    }

    private func waitRespectsDeadline() async -> String? {
        let limiter = makeLimiter()
        let (_, detail) = saturate(limiter)
        if let detail { return detail }
        let clock = ManualClock(now: Self.start.offset)
        let deadline = Self.start.advanced(by: .milliseconds(1))
        let (task, done) = waiter(limiter, context(clock, deadline: .milliseconds(1)))
        for _ in 0..<100 {
            switch await nextStep(task, done: done, clock: clock) {
            case nil:
                task.cancel()
                return "waitForPermit neither returned nor slept on the clock within 10 s with a 1 ms deadline"
            case .finished(.success(let permit)):
                let now = ResilienceClock.manual(clock).now()
                limiter.release(permit, outcome: .abandoned, now: now)
                return now > deadline ? "admitted at \(now), after its deadline \(deadline)" : nil
            case .finished(.failure(let error)):
                return error is CancellationError ? "a deadline surfaced as CancellationError" : nil
            case .sleeping:
                if let next = clock.nextDeadline, next.offset > deadline.offset {
                    task.cancel()
                    return "waitForPermit sleeps until +\(next.offset), past its deadline +\(deadline.offset)"
                }
                clock.advanceToNextDeadline()
            }
        }
        task.cancel()
        return "waitForPermit still waiting after 100 clock steps"
    }

    private func cancelledWaiter() async -> String? {
        let limiter = makeLimiter()
        let (permits, detail) = saturate(limiter)
        if let detail { return detail }
        let clock = ManualClock(now: Self.start.offset)
        let (task, done) = waiter(limiter, context(clock, deadline: recoveryTime * 2))
        switch await nextStep(task, done: done, clock: clock, within: .seconds(1)) {
        case .finished(.success(let permit)):
            limiter.release(permit, outcome: .abandoned, now: ResilienceClock.manual(clock).now())
            return "a saturated limiter admitted a waiter at once"
        case .finished(.failure):
            break  // refused at once: nothing to cancel
        case .sleeping, nil:
            task.cancel()
            if case .success(let permit) = await task.result {
                limiter.release(permit, outcome: .abandoned, now: ResilienceClock.manual(clock).now())
                return "a waiter cancelled while waiting got a permit instead of CancellationError"
            }
        }
        let later = Self.start.advanced(by: recoveryTime)
        for permit in permits { limiter.release(permit, outcome: .accepted, now: later) }
        if case .admitted = limiter.tryAcquire(now: later) { return nil }
        return "after a cancelled waiter, releasing every permit and \(recoveryTime) the limiter does not admit"
    }
}
