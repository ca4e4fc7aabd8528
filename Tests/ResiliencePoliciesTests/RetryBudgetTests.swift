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

    @Test(
        "The interactive budget at an app's 0.5 requests/s: a 20 % brownout keeps every retry, an outage its documented share"
    )
    func interactiveAtItsTraffic() {
        let clock = ManualClock()
        let budget = RetryBudget(.interactive, clock: .manual(clock))
        // 10 minutes of one request every 2 s, 2 of every 10 failing: once the window has filled (30 s),
        // every failure gets its retry.
        var refused = 0
        for index in 0..<300 {
            budget.recordRequest()
            if [0, 5].contains(index % 10), !budget.tryWithdraw(), index >= 15 { refused += 1 }
            clock.advance(by: .seconds(2))
        }
        #expect(refused == 0)
        // Then 20 minutes in which every request fails and asks for a retry: once the brownout has left the
        // 30 s window, the budget grants its documented ratio + floor ÷ rate (times 30 ÷ 29 for the slide).
        var granted = 0
        for index in 0..<600 {
            budget.recordRequest()
            if budget.tryWithdraw(), index >= 15 { granted += 1 }
            clock.advance(by: .seconds(2))
        }
        let perRequest = Double(granted) / 585
        let configuration = RetryBudgetConfiguration.interactive
        #expect(perRequest <= (configuration.ratio + configuration.minimumPerSecond / 0.5) * 30 / 29 + 0.005)
        #expect(perRequest >= configuration.ratio - 0.01)
    }

    @Test(
        "The presets' budgets: a quiet key gets one retry per 30 s, not one per second",
        arguments: [RetryBudgetConfiguration.smoothed, RetryBudgetConfiguration.interactive])
    func quietKeysGetOneRetryPerWindow(configuration: RetryBudgetConfiguration) {
        let clock = ManualClock()
        let budget = RetryBudget(configuration, clock: .manual(clock))
        // A key sending one request every 10 s for 20 minutes, every one failing and asking for a retry.
        var granted = 0
        for _ in 0..<120 {
            budget.recordRequest()
            if budget.tryWithdraw() { granted += 1 }
            clock.advance(by: .seconds(10))
        }
        // One retry per 30 s window (3 requests × ratio never makes a whole one): a third of the requests.
        #expect(granted == 40)
        #expect(configuration.ratio >= 0.1 && configuration.ratio <= 0.2)
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
}
