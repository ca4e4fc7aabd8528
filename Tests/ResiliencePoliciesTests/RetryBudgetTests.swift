import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Retry budget")
struct RetryBudgetTests {
    @Test("Allows ratio × requests plus the minimum over the window")
    func allowance() {
        let clock = ManualClock()
        let budget = RetryBudget(RetryBudgetConfiguration(ratio: 0.1, minimumPerSecond: 0.5), clock: .manual(clock))
        for _ in 0..<100 { budget.recordRequest() }
        var granted = 0
        while budget.tryWithdraw() { granted += 1 }
        #expect(granted == 10 + 5)
        #expect(budget.usage.retries == 15)
    }

    @Test("The window slides: old requests and retries expire")
    func slides() {
        let clock = ManualClock()
        let budget = RetryBudget(RetryBudgetConfiguration(ratio: 0.5, minimumPerSecond: 0), clock: .manual(clock))
        for _ in 0..<10 { budget.recordRequest() }
        #expect((0..<5).allSatisfy { _ in budget.tryWithdraw() })
        #expect(budget.tryWithdraw() == false)
        clock.advance(by: .seconds(5))
        #expect(budget.tryWithdraw() == false)
        for _ in 0..<2 { budget.recordRequest() }
        #expect(budget.tryWithdraw())
        clock.advance(by: .seconds(6))
        #expect(budget.usage.requests == 2)
        #expect(budget.usage.retries == 1)
        clock.advance(by: .seconds(60))
        #expect(budget.usage.requests == 0)
        #expect(budget.tryWithdraw() == false)
    }

    @Test("Full outage amplification stays at or below 1.1×")
    func amplification() async throws {
        let clock = ManualClock()
        let budget = RetryBudget(RetryBudgetConfiguration(ratio: 0.1, minimumPerSecond: 0), clock: .manual(clock))
        let operation = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        let retry = RetryStrategy(
            policy: StandardRetryPolicy(maxAttempts: 3, backoff: .constant(.zero), jitter: .none), budget: budget,
            random: SharedRandomSource(seed: 1))
        let context = makeContext(clock)
        var budgetRejections = 0
        for _ in 0..<1_000 {
            do {
                _ = try await retry.execute(context, next: operation.callAsFunction)
            } catch let error as ResilienceError where error.code == .budgetExhausted {
                budgetRejections += 1
            } catch {}
        }
        #expect(operation.callCount == 1_100)
        #expect(budgetRejections > 0)
    }

    @Test("Funded by failed first attempts: a healthy spell leaves no credit, an outage gets a tenth of its failures")
    func failureFundingLeavesNoCreditForAnOutage() {
        let clock = ManualClock()
        let budget = RetryBudget(.smoothed, clock: .manual(clock))
        // Two minutes of a healthy key at 4 requests/s.
        for _ in 0..<480 {
            budget.recordRequest()
            clock.advance(by: .milliseconds(250))
        }
        // A 2 s outage: 8 failed first attempts earn ⌊0.8⌋ = 0 retries (a budget funded by the requests of the
        // last 30 s would allow 12 at once).
        var granted = 0
        for _ in 0..<8 {
            budget.recordRequest()
            budget.recordFailure()
            if budget.tryWithdraw() { granted += 1 }
            clock.advance(by: .milliseconds(250))
        }
        #expect(granted == 0)
        // The outage goes on for 5 minutes: never more than a tenth of its failures, and close to it.
        for _ in 0..<1_192 {
            budget.recordRequest()
            budget.recordFailure()
            if budget.tryWithdraw() { granted += 1 }
            clock.advance(by: .milliseconds(250))
        }
        #expect(granted <= 120)
        #expect(granted >= 115)
    }

    @Test("Requests funding keeps the healthy spell's credit: the same short outage retries at once")
    func requestFundingSpendsTheCreditOfTheHealthySpell() {
        let clock = ManualClock()
        var configuration = RetryBudgetConfiguration.smoothed
        configuration.funding = .requests
        let budget = RetryBudget(configuration, clock: .manual(clock))
        for _ in 0..<480 {
            budget.recordRequest()
            clock.advance(by: .milliseconds(250))
        }
        var granted = 0
        for _ in 0..<8 {
            budget.recordRequest()
            budget.recordFailure()
            if budget.tryWithdraw() { granted += 1 }
            clock.advance(by: .milliseconds(250))
        }
        #expect(granted == 8)
    }

    @Test("A fresh or quiet scope retries its first failure, then one in ten requests")
    func quietScopesDrawOnTheFloor() {
        let clock = ManualClock()
        let budget = RetryBudget(.smoothed, clock: .manual(clock))
        // One request every 50 s (0.02/s), every one failing, for 20 minutes: the window never holds 10.
        var granted: [Int] = []
        for index in 0..<24 {
            budget.recordRequest()
            budget.recordFailure()
            if budget.tryWithdraw() { granted.append(index) }
            clock.advance(by: .seconds(50))
        }
        // The first failure spends the floor's one retry; each request earns back 0.1 of it.
        #expect(granted == [0, 10, 20])
        // A scope whose window holds 10 requests judges by its failures instead: one failure earns no retry.
        let busy = RetryBudget(.smoothed, clock: .manual(clock))
        for _ in 0..<10 { busy.recordRequest() }
        busy.recordFailure()
        #expect(busy.tryWithdraw() == false)
        #expect(busy.usage == (requests: 10, retries: 0, allowance: 0))
    }

    @Test("A sheddable request's retry leaves the floor and the reserved share to default and critical ones")
    func sheddableRetriesYieldTheReserve() {
        let clock = ManualClock()
        let quiet = RetryBudget(.smoothed, clock: .manual(clock))
        quiet.recordRequest()
        quiet.recordFailure()
        #expect(quiet.tryWithdraw(priority: .sheddable) == false)
        #expect(quiet.tryWithdraw(priority: .default))
        let busy = RetryBudget(.smoothed, clock: .manual(clock))
        for _ in 0..<100 {
            busy.recordRequest()
            busy.recordFailure()
        }
        var sheddable = 0
        while busy.tryWithdraw(priority: .sheddable) { sheddable += 1 }
        var critical = 0
        while busy.tryWithdraw(priority: .critical) { critical += 1 }
        #expect(sheddable == 8)
        #expect(critical == 2)
    }

    @Test("Through the retry stage: failures fund retries, a healthy spell funds none")
    func retryStageFundsRetriesByFailures() async throws {
        let clock = ManualClock()
        let budget = RetryBudget(.smoothed, clock: .manual(clock))
        let healthy = ScriptedOperation<Int>([.success(1)])
        let retry = RetryStrategy(
            policy: StandardRetryPolicy(maxAttempts: 3, backoff: .constant(.zero), jitter: .none), budget: budget,
            random: SharedRandomSource(seed: 1))
        let context = makeContext(clock)
        for _ in 0..<1_000 { _ = try await retry.execute(context, next: healthy.callAsFunction) }
        let outage = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        var budgetRejections = 0
        for _ in 0..<100 {
            do {
                _ = try await retry.execute(context, next: outage.callAsFunction)
            } catch let error as ResilienceError where error.code == .budgetExhausted {
                budgetRejections += 1
            } catch {}
        }
        // ⌊0.1 × failures⌋ at each failure: the 10th, 20th, … earn one retry each (which fails, and funds none).
        // Every execution ends refused: at its first failure, or at its granted retry's failure.
        #expect(outage.callCount == 110)
        #expect(budgetRejections == 100)
    }

    @Test("Funded by failures, a refused retry goes after its backoff once a later first attempt has succeeded")
    func evidenceOfALiveServerFundsRetriesByRequests() {
        let clock = ManualClock()
        let time = ResilienceClock.manual(clock)
        let budget = RetryBudget(.smoothed, clock: time)
        for _ in 0..<100 { budget.recordRequest() }
        budget.recordRequest()
        budget.recordFailure()
        #expect(budget.tryWithdraw() == false)
        let failedAt = time.now()
        clock.advance(by: .milliseconds(500))
        // No success since the failure: an outage, as far as the budget can tell.
        #expect(budget.tryWithdraw(afterFailureAt: failedAt) == false)
        // A success that started before the failure says nothing about the server after it.
        budget.recordSuccess(startedAt: ResilienceInstant(offset: failedAt.offset - .milliseconds(100)))
        #expect(budget.tryWithdraw(afterFailureAt: failedAt) == false)
        // One that started after it does: retries draw on 10 % of the window's 101 requests.
        budget.recordSuccess(startedAt: time.now())
        var granted = 0
        while budget.tryWithdraw(afterFailureAt: failedAt) { granted += 1 }
        #expect(granted == 10)
        #expect(budget.tryWithdraw(afterFailureAt: failedAt, priority: .critical) == false)
    }

    @Test("Through the retry stage: an outage's refused retry waits out its backoff and fails, a brownout's goes")
    func retryStageWaitsForEvidence() async throws {
        let clock = ManualClock()
        let time = ResilienceClock.manual(clock)
        let budget = RetryBudget(.smoothed, clock: time)
        let retry = RetryStrategy(
            policy: StandardRetryPolicy(maxAttempts: 2, backoff: .constant(.seconds(1)), jitter: .none),
            budget: budget, random: SharedRandomSource(seed: 1))
        let context = makeContext(clock)
        let healthy = ScriptedOperation<Int>([.success(1)])
        for _ in 0..<20 { _ = try await retry.execute(context, next: healthy.callAsFunction) }
        // Outage: nothing succeeds while the refused retry waits, so it fails after its second.
        let outage = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        let refused = Task { try await retry.execute(context, next: outage.callAsFunction) }
        await clock.waitForSleepers()
        clock.advance(by: .seconds(1))
        let error = await #expect(throws: ResilienceError.self) { try await refused.value }
        #expect(error?.code == .budgetExhausted && error?.retryAfter == .zero)
        #expect(outage.callCount == 1)
        // Brownout: another caller's first attempt succeeds during the backoff, so the retry goes (and succeeds).
        let brownout = ScriptedOperation<Int>([.failure(TestFailure.serverError), .success(2)])
        let retried = Task { try await retry.execute(context, next: brownout.callAsFunction) }
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(500))
        _ = try await retry.execute(context, next: healthy.callAsFunction)
        clock.advance(by: .milliseconds(500))
        #expect(try await retried.value == 2)
        #expect(brownout.callCount == 2)
    }

    @Test("A refused retry drawn short by jitter waits to its unjittered delay only while its scope has other traffic")
    func refusedRetryWaitsForEvidenceOnlyBesideOtherTraffic() async throws {
        let (clock, retry, context, healthy) = try await scopeWithShortDraws()
        // Alone: no first attempt starts while the refused retry waits, so it gives up at its drawn 100 ms.
        let alone = ScriptedOperation<Int>([.failure(TestFailure.serverError), .success(2)])
        let lone = Task { try await retry.execute(context, next: alone.callAsFunction) }
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(100))
        let error = await #expect(throws: ResilienceError.self) { try await lone.value }
        #expect(error?.code == .budgetExhausted && error?.retryAfter == .zero)
        #expect(alone.callCount == 1)
        // Beside other traffic: a first attempt started while it waited (a 404, so no evidence either way), so
        // at 100 ms it waits on to 1 s; a success that starts at 600 ms lets it go then.
        let (held, brownout) = await startRefusedRetryBesideTraffic(retry, context, clock)
        clock.advance(by: .milliseconds(50))
        await clock.waitForSleepers()
        #expect(brownout.callCount == 1)
        try await expectRetryGoes(
            held, brownout, evidenceAfter: .milliseconds(500), askAfter: .milliseconds(400),
            in: (clock, retry, context, healthy))
    }

    @Test(
        "A refused retry that wakes past its unjittered delay still waits for the evidence wait",
        .timeLimit(.minutes(1)))
    func lateWakeKeepsTheEvidenceWait() async throws {
        let scope = try await scopeWithShortDraws(.smoothedWithEvidenceWait)
        let (clock, retry, context, _) = scope
        let (held, brownout) = await startRefusedRetryBesideTraffic(retry, context, clock)
        // Its 100 ms draw and its 1 s unjittered delay pass in one step: it asks once, late, and sleeps on to 2 s
        // (the rule it replaced gave up here). Yield until it sleeps again, for at most 10 s of real time.
        clock.advance(by: .milliseconds(1000))
        let patience = ContinuousClock.now + .seconds(10)
        while clock.sleeperCount == 0 && ContinuousClock.now < patience { await Task.yield() }
        try #require(clock.sleeperCount == 1)
        #expect(brownout.callCount == 1)
        try await expectRetryGoes(
            held, brownout, evidenceAfter: .milliseconds(450), askAfter: .milliseconds(500), in: scope)
    }

    /// Starts a request whose first attempt fails at once and whose retry the budget refuses, then, 50 ms later,
    /// another caller's first attempt (a 404: traffic beside the refused retry, but no evidence either way).
    func startRefusedRetryBesideTraffic(
        _ retry: RetryStrategy, _ context: ResilienceContext, _ clock: ManualClock
    ) async -> (Task<Int, any Error>, ScriptedOperation<Int>) {
        let brownout = ScriptedOperation<Int>([.failure(TestFailure.serverError), .success(3)])
        let held = Task { try await retry.execute(context, next: brownout.callAsFunction) }
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(50))
        let missing = ScriptedOperation<Int>([.failure(TestFailure.notFound)])
        _ = try? await retry.execute(context, next: missing.callAsFunction)
        return (held, brownout)
    }

    /// Runs a successful first attempt of `scope` `evidenceAfter` from now and checks that the refused retry
    /// `held` goes at its next ask, `askAfter` later, and not before.
    func expectRetryGoes(
        _ held: Task<Int, any Error>, _ brownout: ScriptedOperation<Int>, evidenceAfter: Duration, askAfter: Duration,
        in scope: (ManualClock, RetryStrategy, ResilienceContext, ScriptedOperation<Int>)
    ) async throws {
        let (clock, retry, context, healthy) = scope
        clock.advance(by: evidenceAfter)
        _ = try await retry.execute(context, next: healthy.callAsFunction)
        clock.advance(by: askAfter - .milliseconds(1))
        await clock.waitForSleepers()
        #expect(brownout.callCount == 1)
        clock.advance(by: .milliseconds(1))
        #expect(try await held.value == 3)
        #expect(brownout.callCount == 2)
    }

    @Test("Beside other traffic, a retry refused for want of allowance at its draw asks again at its unjittered delay")
    func refusedRetryAsksAgainOnceTheWindowHasGrown() async throws {
        let (clock, retry, context, healthy) = try await scopeWithShortDraws()
        // Three callers fail at once; their 3 failures fund no retry, so all three wait.
        let operations = (0..<3).map { _ in ScriptedOperation<Int>([.failure(TestFailure.serverError), .success(2)]) }
        let callers = operations.map { operation in
            Task { try await retry.execute(context, next: operation.callAsFunction) }
        }
        await clock.waitForSleepers(count: 3)
        // A success shows the server answers: the window's 24 requests allow 2 retries, and two go at 100 ms;
        // the third, refused for want of allowance, waits on (the old rule gave up here).
        clock.advance(by: .milliseconds(50))
        _ = try await retry.execute(context, next: healthy.callAsFunction)
        clock.advance(by: .milliseconds(50))
        await clock.waitForSleepers()
        // Six more requests make it 30 in the window: 3 retries, so the third goes at its unjittered 1 s.
        for _ in 0..<6 { _ = try await retry.execute(context, next: healthy.callAsFunction) }
        clock.advance(by: .milliseconds(900))
        for caller in callers { #expect(try await caller.value == 2) }
        #expect(operations.map(\.callCount) == [2, 2, 2])
    }

    @Test("Beside other traffic, a refused retry that sees no success gives up at its unjittered delay")
    func refusedRetryGivesUpAtItsUnjitteredDelay() async throws {
        let (clock, retry, context, _) = try await scopeWithShortDraws()
        let outage = ScriptedOperation<Int>([.failure(TestFailure.serverError)])
        let first = Task { try await retry.execute(context, next: outage.callAsFunction) }
        await clock.waitForSleepers()
        // A second caller's first attempt fails while the first waits: traffic, and no evidence of a live server.
        let second = Task { try await retry.execute(context, next: outage.callAsFunction) }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .milliseconds(100))
        // Each started while the other waited, so both wait on to their unjittered delay.
        await clock.waitForSleepers(count: 2)
        #expect(outage.callCount == 2)
        clock.advance(by: .milliseconds(900))
        for caller in [first, second] {
            let error = await #expect(throws: ResilienceError.self) { try await caller.value }
            #expect(error?.code == .budgetExhausted)
        }
        #expect(outage.callCount == 2)
    }

    @Test("A refused retry beside other traffic asks again at its unjittered delay and at the evidence wait")
    func refusedRetryWaitsForEvidenceUpToTheEvidenceWait() async throws {
        let scope = try await scopeWithShortDraws(.smoothedWithEvidenceWait)
        let (clock, retry, context, healthy) = scope
        let (held, brownout) = await startRefusedRetryBesideTraffic(retry, context, clock)
        // Refused at its 100 ms draw and at its unjittered 1 s: no first attempt has succeeded since the failure.
        clock.advance(by: .milliseconds(50))
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(900))
        await clock.waitForSleepers()
        #expect(brownout.callCount == 1)
        // A success that starts at 1.5 s is the evidence; the retry goes when it asks again at 2 s.
        try await expectRetryGoes(
            held, brownout, evidenceAfter: .milliseconds(500), askAfter: .milliseconds(500), in: scope)
        // Alone in its scope (no first attempt starts while it waits), a refused retry still gives up at its draw.
        clock.advance(by: .seconds(30))
        for _ in 0..<20 { _ = try await retry.execute(context, next: healthy.callAsFunction) }
        let alone = ScriptedOperation<Int>([.failure(TestFailure.serverError), .success(2)])
        let lone = Task { try await retry.execute(context, next: alone.callAsFunction) }
        await clock.waitForSleepers()
        clock.advance(by: .milliseconds(100))
        let error = await #expect(throws: ResilienceError.self) { try await lone.value }
        #expect(error?.code == .budgetExhausted)
        #expect(alone.callCount == 1)
    }

    @Test(
        "A refused retry does not wait for evidence into its deadline: a retry at the deadline is not attempted",
        .timeLimit(.minutes(1)))
    func refusedRetryDoesNotWaitToItsDeadline() async throws {
        let (clock, retry, base, healthy) = try await scopeWithShortDraws()
        // The deadline comes 800 ms after the failure, before the backoff's unjittered 1 s.
        var context = base
        context.deadline = ResilienceInstant(offset: .milliseconds(800))
        let (held, brownout) = await startRefusedRetryBesideTraffic(retry, context, clock)
        let finished = LockedBox(false)
        let outcome = Task { () -> Int in
            defer { finished.mutate { $0 = true } }
            return try await held.value
        }
        // Refused at its 100 ms draw, beside other traffic. Yield until it has ended or sleeps again, for at most
        // 10 s of real time.
        clock.advance(by: .milliseconds(50))
        let patience = ContinuousClock.now + .seconds(10)
        while clock.sleeperCount == 0 && !finished.value && ContinuousClock.now < patience { await Task.yield() }
        // A success at 500 ms shows the server answers, but the only later ask would come at the deadline, where
        // the retry would start with no time left.
        clock.advance(by: .milliseconds(400))
        _ = try await retry.execute(base, next: healthy.callAsFunction)
        clock.advance(by: .milliseconds(300))
        let error = await #expect(throws: ResilienceError.self) { try await outcome.value }
        #expect(error?.code == .budgetExhausted)
        #expect(brownout.callCount == 1)
    }

    /// A failure-funded budget's retry stage whose jitter always draws 100 ms of a 1 s backoff, after 20 healthy
    /// calls (so the window judges by its failures, which fund no retry yet); and the healthy operation.
    func scopeWithShortDraws(
        _ configuration: RetryBudgetConfiguration = .smoothed
    ) async throws -> (ManualClock, RetryStrategy, ResilienceContext, ScriptedOperation<Int>) {
        let clock = ManualClock()
        let retry = RetryStrategy(
            policy: DrawnShortPolicy(drawn: .milliseconds(100), unjittered: .seconds(1)),
            budget: RetryBudget(configuration, clock: .manual(clock)), random: SharedRandomSource(seed: 1))
        let context = makeContext(clock)
        let healthy = ScriptedOperation<Int>([.success(1)])
        for _ in 0..<20 { _ = try await retry.execute(context, next: healthy.callAsFunction) }
        return (clock, retry, context, healthy)
    }

    @Test("Many concurrent tasks: exact counts, no deadlock")
    func stress() async {
        let clock = ManualClock()
        let budget = RetryBudget(RetryBudgetConfiguration(ratio: 0.1, minimumPerSecond: 1), clock: .manual(clock))
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask { for _ in 0..<250 { budget.recordRequest() } }
            }
        }
        let granted = LockedBox(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    for _ in 0..<50 where budget.tryWithdraw() { granted.mutate { $0 += 1 } }
                }
            }
        }
        #expect(granted.value == 1_600 + 10)
        #expect(budget.usage == (requests: 16_000, retries: 1_610, allowance: 1_610))
    }
}

@Suite("Hostile settings")
struct HostileSettingsTests {
    @Test("Huge, negative and NaN settings neither trap nor hang")
    func hostile() async throws {
        let clock = ManualClock()
        for configuration in [
            RetryBudgetConfiguration(ratio: .nan, minimumPerSecond: .infinity, window: .seconds(Int64.max), buckets: 0),
            RetryBudgetConfiguration(ratio: -1, minimumPerSecond: -1, window: .seconds(-5), buckets: Int.max),
        ] {
            let budget = RetryBudget(configuration, clock: .manual(clock))
            budget.recordRequest()
            _ = budget.tryWithdraw()
            #expect(budget.usage.requests == 1)
        }
        let operation = ScriptedOperation<Int>([.success(1)])
        let context = makeContext(clock)
        #expect(try await TimeoutStrategy(.seconds(Int64.max)).execute(context, next: operation.callAsFunction) == 1)
        #expect(try await TimeoutStrategy(.seconds(-3)).execute(context, next: operation.callAsFunction) == 1)
        #expect(
            try await HedgingStrategy(delay: .seconds(Int64.max)).execute(context, next: operation.callAsFunction)
                == 1)
        var random = SeededRandomNumberGenerator(seed: 1)
        let jitter = Jitter.proportional(.nan).apply(to: .seconds(1), using: &random)
        #expect(jitter == .seconds(1))
    }

    @Test("A budget's description shows the ratio it applies, for any ratio")
    func descriptionClampsRatio() {
        let cases: [(Double, String)] = [
            (.nan, "ratio: 0%"), (.infinity, "ratio: 0%"), (-.infinity, "ratio: 0%"), (1e300, "ratio: 100000%"),
            (-1, "ratio: 0%"), (0.1, "ratio: 10%"),
        ]
        for (ratio, text) in cases {
            let description = RetryBudgetConfiguration(ratio: ratio).description
            #expect(description.hasPrefix(text + ","), "ratio \(ratio): \(description)")
            #expect(RetryBudget(RetryBudgetConfiguration(ratio: ratio)).description.contains(text))
        }
    }
}

/// A policy whose jitter always draws `drawn` of an `unjittered` backoff, for the refused retry's wait.
private struct DrawnShortPolicy: RetryPolicy {
    let drawn: Duration
    let unjittered: Duration

    func decide<Random: RandomNumberGenerator>(_ attempt: RetryAttempt, using random: inout Random) -> RetryDecision {
        if attempt.failure.category == .notFound { return .stop(.notRetryable) }
        return attempt.number >= 2 ? .stop(.attemptsExhausted) : .retry(after: drawn, unjitteredDelay: unjittered)
    }

    var policyDescription: String { "drawn-short" }
}

extension RetryBudgetConfiguration {
    /// `.smoothed` with a 2 s evidence wait, as `.interactive` has.
    fileprivate static var smoothedWithEvidenceWait: RetryBudgetConfiguration {
        var configuration = RetryBudgetConfiguration.smoothed
        configuration.evidenceWait = .seconds(2)
        return configuration
    }
}
