import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Pipeline presets")
struct PipelinePresetTests {
    @Test("The standard preset builds the default order with the documented settings")
    func standardOrder() {
        let pipeline = Pipeline.standard(clock: .manual(ManualClock()), random: SharedRandomSource(seed: 1))
        #expect(
            pipeline.stages.map(\.name) == ["total-deadline", "retry", "circuit-breaker", "server-quota", "timeout"])
        let text = pipeline.pipelineDescription
        #expect(text.contains("total-deadline(limit: 60.0 seconds, mode: cooperative)"))
        #expect(text.contains("retry(policy: standard(maxAttempts: 3"))
        #expect(text.contains("budget: "))
        // A failure-ratio breaker that opens only when every call of a whole 10 s window failed (it does not shed
        // a brownout, however heavy) or went unanswered (a hung server).
        #expect(
            text.contains(
                "failure-ratio(window: 10.0 seconds, ratio: 1.0, minimum: 40, observed: 10.0 seconds, unanswered: 3 in 5.0 seconds)"
            ))
        #expect(text.contains("server-quota(max-wait: 60.0 seconds, spread: false)"))
        // No client-side rate cap.
        #expect(!text.contains("token-bucket"))
        #expect(text.contains("timeout(limit: 30.0 seconds, mode: cooperative)"))
    }

    @Test(
        "Interactive and background presets carry their own numbers",
        arguments: [
            (
                "interactive", "limit: 10.0 seconds", "maxAttempts: 2",
                "ratio: 1.0, minimum: 40, observed: 10.0 seconds, unanswered: 3 in 5.0 seconds)",
                "limit: 10.0 seconds"
            ),
            (
                "background", "limit: 300.0 seconds", "maxAttempts: 6",
                "ratio: 1.0, minimum: 40, observed: 10.0 seconds, unanswered: 3 in 5.0 seconds)",
                "limit: 60.0 seconds"
            ),
        ])
    func otherPresets(name: String, total: String, attempts: String, breaker: String, attempt: String) {
        let clock = ResilienceClock.manual(ManualClock())
        let pipeline = name == "interactive" ? Pipeline.interactive(clock: clock) : Pipeline.background(clock: clock)
        let descriptions = pipeline.stages.map(\.description)
        #expect(descriptions.count == 5)
        #expect(descriptions[0].contains(total))
        #expect(descriptions[1].contains(attempts))
        #expect(descriptions[2].contains(breaker))
        #expect(descriptions[3].hasPrefix("server-quota"))
        #expect(descriptions[4].contains(attempt))
    }

    @Test("Each preset counts retries with the budget meant for its traffic")
    func budgets() {
        #expect(PipelinePreset.standard.retryBudget == .smoothed)
        #expect(PipelinePreset.background.retryBudget == .smoothed)
        #expect(PipelinePreset.interactive.retryBudget == .interactive)
        let clock = ResilienceClock.manual(ManualClock())
        for pipeline in [Pipeline.standard(clock: clock), Pipeline.background(clock: clock)] {
            #expect(pipeline.stages[1].description.contains("ratio: 10%"))
            #expect(pipeline.stages[1].description.contains("funding: failed first attempts"))
        }
        let interactive = Pipeline.interactive(clock: clock).stages[1].description
        #expect(interactive.contains("ratio: 10%, minimum: 0.05/s, window: 20.0 seconds"))
        #expect(interactive.contains("funding: failed first attempts, evidence wait: 2.0 seconds"))
    }

    @Test(
        "An app's quiet key on the interactive preset retries a lone failure after its backoff, with no other call to vouch for the server"
    )
    func interactiveRetriesALoneFailure() async throws {
        let clock = ManualClock()
        let pipeline = Pipeline.interactive(clock: .manual(clock), random: SharedRandomSource(seed: 7))
        // Seven healthy calls over 30 s (one per 5 s): a history, but fewer than the 10 requests in its 20 s
        // window a scope needs to judge by its failures, so the lone failure draws on the floor; no other call
        // falls inside its 250 ms backoff.
        for call in 0..<7 {
            if call > 0 { clock.advance(by: .seconds(5)) }
            #expect(try await pipeline.execute(makeContext(clock)) { _ in "ok" } == "ok")
        }
        clock.advance(by: .seconds(5))
        let operation = ScriptedOperation<String>([.failure(TestFailure.serverError), .success("ok")])
        let task = Task { try await pipeline.execute(makeContext(clock)) { try await operation($0) } }
        #expect(try await drive(clock, task, sleeps: 1) == "ok")
        #expect(operation.callCount == 2)
    }

    @Test("One line swaps one stage's policy and leaves the others alone")
    func swapOneStage() {
        let clock = ResilienceClock.manual(ManualClock())
        let standard = Pipeline.standard(clock: clock).stages
        let swapped = Pipeline.standard(clock: clock) { $0.breaker = .consecutiveFailures(.standard) }.stages
        #expect(swapped[2].description.contains("consecutive-failures"))
        #expect(!standard[2].description.contains("consecutive-failures"))
        #expect(Array(swapped[0..<2]) == Array(standard[0..<2]))
        #expect(Array(swapped[3...]) == Array(standard[3...]))
        let bulkhead = Pipeline.standard(clock: clock) { $0.limiter = .concurrency(.limit(4, queued: 2)) }
        #expect(
            bulkhead.stages.map(\.name) == [
                "total-deadline", "retry", "circuit-breaker", "server-quota", "rate-limiter", "timeout",
            ])
        #expect(bulkhead.stages[4].description.contains("bulkhead(concurrent: 4, queue: 2, sheddable: 3)"))
    }

    @Test("A stage set to nil is left out")
    func leaveOut() {
        let pipeline = Pipeline.standard(clock: .manual(ManualClock())) {
            $0.serverQuota = nil
            $0.totalDeadline = nil
            $0.retryBudget = nil
        }
        #expect(pipeline.stages.map(\.name) == ["retry", "circuit-breaker", "timeout"])
        #expect(!pipeline.pipelineDescription.contains("budget"))
    }

    @Test("Each pipeline gets its own breaker: tripping one leaves the other closed")
    func ownBreaker() async throws {
        let clock = ManualClock()
        let settings: (inout PipelinePreset) -> Void = { $0.retry = nil }
        let first = Pipeline.standard(clock: .manual(clock), random: SharedRandomSource(seed: 3), settings)
        let second = Pipeline.standard(clock: .manual(clock), random: SharedRandomSource(seed: 3), settings)
        let context = makeContext(clock)
        // The standard breaker judges a whole 10 s window of at least 40 calls: five failures a second for 10 s
        // trip it.
        for step in 0...50 {
            if step > 0 { clock.advance(by: .milliseconds(200)) }
            await #expect(throws: TestFailure.self) {
                try await first.execute(context) { _ -> Int in throw TestFailure.serverError }
            }
        }
        let rejection = await #expect(throws: ResilienceError.self) {
            try await first.execute(context) { _ in 1 }
        }
        #expect(rejection?.code == .circuitOpen)
        #expect(try await second.execute(context) { _ in 2 } == 2)
    }

    @Test(
        "Calls held until the server's quota resets are not calls the server left unanswered: the breaker stays closed")
    func quotaHoldsDoNotOpenTheBreaker() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let pipeline = Pipeline.standard(clock: .manual(clock), random: SharedRandomSource(seed: 7))
        let context = makeContext(clock, sink: sink)
        // The server answers (so the breaker judges silence: 3 calls, 5 s) and says its quota resets in 30 s.
        let first = try await pipeline.execute(context) { inner in
            inner.quotaObserver?.observe(ServerQuota(remaining: 0, resetAfter: .seconds(30)), now: inner.clock.now())
            return 0
        }
        #expect(first == 0)
        let held = (1...5).map { index in Task { try await pipeline.execute(context) { _ in index } } }
        // (Bounded waits: a call refused instead of held would never be counted here.)
        for _ in 0..<100_000 where sink.count(.rateLimited) < 5 || clock.sleeperCount < 5 { await Task.yield() }
        clock.advance(by: .seconds(15))
        // Fifteen seconds on, a sixth call finds five calls held: the quota holds them, the server does not.
        let late = Task { try await pipeline.execute(context) { _ in 6 } }
        for _ in 0..<100_000 where sink.count(.rateLimited) < 6 || clock.sleeperCount < 6 { await Task.yield() }
        clock.advance(by: .seconds(15))
        var results: [Int?] = []
        for call in held + [late] { results.append(try? await call.value) }
        #expect(results == [1, 2, 3, 4, 5, 6])
        #expect(sink.count(.breakerTransition) == 0)
    }

    @Test("The standard pipeline retries a server error, then succeeds within the attempt deadline")
    func retriesThenSucceeds() async throws {
        let clock = ManualClock()
        let pipeline = Pipeline.standard(clock: .manual(clock), random: SharedRandomSource(seed: 5))
        let operation = ScriptedOperation<String>([.failure(TestFailure.serverError), .success("ok")])
        let deadlines = LockedBox<[Duration?]>([])
        let task = Task {
            try await pipeline.execute(makeContext(clock)) { context in
                let now = context.clock.now()
                deadlines.mutate { $0.append(context.remaining(now: now)) }
                return try await operation(context)
            }
        }
        #expect(try await drive(clock, task, sleeps: 1) == "ok")
        #expect(operation.callCount == 2)
        #expect(deadlines.value.first == .seconds(30))
    }

    @Test("An interactive attempt gets the whole 10 s, capped by the total deadline")
    func interactiveDeadlines() async throws {
        let clock = ManualClock()
        let pipeline = Pipeline.interactive(clock: .manual(clock)) { $0.retry = nil }
        let remaining = try await pipeline.execute(makeContext(clock)) { context in
            context.remaining(now: context.clock.now())
        }
        #expect(remaining == .seconds(10))
        let tight = Pipeline.interactive(clock: .manual(clock)) {
            $0.retry = nil
            $0.totalDeadline = .seconds(2)
        }
        let capped = try await tight.execute(makeContext(clock)) { context in
            context.remaining(now: context.clock.now())
        }
        #expect(capped == .seconds(2))
    }

    @Test("No preset caps the client's own rate: 50 calls at the same instant all run at once")
    func noClientSideRateCap() async throws {
        for preset in [PipelinePreset.standard, .interactive, .background] {
            #expect(preset.limiter == nil)
            let clock = ManualClock()
            let pipeline = Pipeline.preset(preset, clock: .manual(clock), random: SharedRandomSource(seed: 2))
            let context = makeContext(clock)
            for call in 0..<50 {
                #expect(try await pipeline.execute(context) { _ in call } == call)
            }
            #expect(clock.now == ManualClock().now)
        }
    }

    @Test(
        "Every preset honours a quota the server advertised on a success: no call before the reset",
        arguments: ["standard", "interactive", "background"])
    func serverQuotaPacing(name: String) async throws {
        let clock = ManualClock()
        let random = SharedRandomSource(seed: 4)
        let pipeline =
            switch name {
            case "interactive": Pipeline.interactive(clock: .manual(clock), random: random)
            case "background": Pipeline.background(clock: .manual(clock), random: random)
            default: Pipeline.standard(clock: .manual(clock), random: random)
            }
        var headers = HTTPHeaders()
        headers.add(name: "RateLimit", value: #""default";r=0;t=5"#)
        let exhausted = headers
        let context = makeContext(clock)
        try await pipeline.execute(context) { inner in inner.reportQuota(from: exhausted) }
        let calls = LockedBox(0)
        let next = Task { try await pipeline.execute(context) { _ in calls.mutate { $0 += 1 } } }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(4.9))
        #expect(calls.value == 0)
        clock.advance(by: .seconds(0.1))
        try await next.value
        #expect(calls.value == 1)
    }
}
