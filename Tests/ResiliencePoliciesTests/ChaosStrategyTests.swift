import ResiliencePolicies
import ResilienceTesting
import Testing

/// The chaos stages: injection rate, run-time switch, seeded determinism, and what each one injects.
@Suite("Chaos stages")
struct ChaosStrategyTests {
    /// Runs `calls` sequential calls through a pipeline of every chaos stage seeded with `seed`, and returns
    /// what happened to each call, one line per call, with the events they emitted.
    static func trace(seed: UInt64, calls: Int = 200) async throws -> String {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let random = SharedRandomSource(seed: seed)
        let behaviour = ChaosBehaviourStrategy(try ChaosInjection(rate: 0.1, random: random)) { _ in }
        let outcome = ChaosOutcomeStrategy(try ChaosInjection(rate: 0.1, random: random), outcome: "injected")
        let fault = ChaosFaultStrategy(try ChaosInjection(rate: 0.2, random: random))
        let latency = try ChaosLatencyStrategy(try ChaosInjection(rate: 0.3, random: random), latency: .zero)
        let pipeline = Pipeline {
            behaviour
            outcome
            fault
            latency
        }
        var lines: [String] = []
        for call in 0..<calls {
            let context = ResilienceContext.test(key: "k", operation: "call-\(call)", clock: clock, telemetry: sink)
            do {
                let value = try await pipeline.execute(context) { _ in "real" }
                lines.append("\(call) \(value)")
            } catch {
                lines.append("\(call) \(error)")
            }
        }
        let events = sink.events(.chaosInjected).map {
            "\($0.operation) \($0.detail ?? "") \($0.duration.map { "\($0)" } ?? "-")"
        }
        return (lines + events).joined(separator: "\n")
    }

    @Test("Same seed, byte-identical trace; another seed, another trace")
    func deterministic() async throws {
        let first = try await Self.trace(seed: 42)
        let second = try await Self.trace(seed: 42)
        #expect(Array(first.utf8) == Array(second.utf8))
        #expect(first != (try await Self.trace(seed: 43)))
        #expect(first.contains("injected") && first.contains("chaos fault") && first.contains("latency"))
    }

    @Test("The injection rate holds over many calls; rate 0 never injects, rate 1 always does")
    func injectionRate() async throws {
        let random = SharedRandomSource(seed: 7)
        let stage = ChaosFaultStrategy(try ChaosInjection(rate: 0.25, random: random))
        var failures = 0
        for _ in 0..<4_000 {
            do { _ = try await stage.execute(.test()) { _ in 1 } } catch is ChaosFault { failures += 1 }
        }
        #expect((900...1_100).contains(failures))
        let never = ChaosFaultStrategy(try ChaosInjection(rate: 0))
        let always = ChaosFaultStrategy(try ChaosInjection(rate: 1))
        for _ in 0..<100 {
            #expect(try await never.execute(.test()) { _ in 1 } == 1)
            await #expect(throws: ChaosFault.serviceUnavailable) { try await always.execute(.test()) { _ in 1 } }
        }
    }

    @Test("The switch turns injection off and on at run time; a closure switch is asked on each call")
    func runtimeSwitch() async throws {
        let chaos = ChaosSwitch(isEnabled: false)
        let stage = ChaosFaultStrategy(try ChaosInjection(rate: 1, enabled: chaos))
        #expect(try await stage.execute(.test()) { _ in 1 } == 1)
        chaos.isEnabled = true
        await #expect(throws: ChaosFault.self) { try await stage.execute(.test()) { _ in 1 } }
        chaos.isEnabled = false
        #expect(try await stage.execute(.test()) { _ in 1 } == 1)

        let asked = LockedState(initialState: 0)
        let flag = LockedState(initialState: true)
        let closure = ChaosSwitch {
            asked.withLock { $0 += 1 }
            return flag.withLock { $0 }
        }
        let outcome = ChaosOutcomeStrategy(try ChaosInjection(rate: 1, enabled: closure), outcome: 99)
        #expect(try await outcome.execute(.test()) { _ in 1 } == 99)
        flag.withLock { $0 = false }
        #expect(try await outcome.execute(.test()) { _ in 1 } == 1)
        #expect(asked.withLock { $0 } == 2)
        closure.isEnabled = false
        flag.withLock { $0 = true }
        #expect(closure.isEnabled, "setting a closure switch has no effect")
    }

    @Test("The fault is classified as configured and retried like the real failure")
    func faultIsClassified() async throws {
        let clock = ManualClock()
        let timeout = ChaosFault(FailureClassification(category: .timeout, code: "NET_001"))
        let fault = ChaosFaultStrategy(try ChaosInjection(rate: 1), fault: timeout)
        let pipeline = Pipeline {
            RetryStrategy(policy: StandardRetryPolicy(maxAttempts: 2), random: SharedRandomSource(seed: 1))
            fault
        }
        let sink = RecordingTelemetrySink()
        let context = makeContext(clock, sink: sink)
        let task = Task { try await pipeline.execute(context) { _ in 1 } }
        let error = await #expect(throws: ChaosFault.self) { _ = try await drive(clock, task, sleeps: 1) }
        #expect(error?.classification.category == .timeout)
        #expect(sink.count(.chaosInjected) == 2)
        #expect(sink.count(.retryScheduled) == 1)
    }

    @Test("Latency delays on the context's clock and gives way to the deadline")
    func latency() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let stage = try ChaosLatencyStrategy(try ChaosInjection(rate: 1), latency: .seconds(3))
        let context = ResilienceContext.test(clock: clock, telemetry: sink)
        let task = Task { try await stage.execute(context) { _ in "late" } }
        await clock.waitForSleepers(count: 1)
        #expect(clock.nextDeadline?.offset == .seconds(3))
        clock.advance(by: .seconds(3))
        #expect(try await task.value == "late")
        #expect(sink.first(.chaosInjected)?.duration == .seconds(3))

        let tight = ResilienceContext.test(clock: clock, timeout: .seconds(1))
        let timedOut = Task { try await stage.execute(tight) { _ in "late" } }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        let error = await #expect(throws: ResilienceError.self) { try await timedOut.value }
        #expect(error?.code == .deadlineExceeded)
        #expect(throws: ChaosConfigurationError.negativeLatency(.seconds(-1))) {
            try ChaosLatencyStrategy(try ChaosInjection(rate: 1), latency: .seconds(-1))
        }
    }

    @Test("A behaviour runs before the call; its error fails the call")
    func behaviour() async throws {
        let ran = LockedState(initialState: [String]())
        let stage = ChaosBehaviourStrategy(try ChaosInjection(rate: 1)) { context in
            ran.withLock { $0.append(context.operation) }
        }
        #expect(try await stage.execute(.test(operation: "fetch")) { _ in 5 } == 5)
        #expect(ran.withLock { $0 } == ["fetch"])
        let failing = ChaosBehaviourStrategy(try ChaosInjection(rate: 1)) { _ in throw TestFailure.serverError }
        let called = LockedState(initialState: false)
        await #expect(throws: TestFailure.self) {
            try await failing.execute(.test()) { _ in called.withLock { $0 = true } }
        }
        #expect(!called.withLock { $0 })
    }

    @Test("An outcome is returned only for its own output type")
    func outcomeType() async throws {
        let stage = ChaosOutcomeStrategy(try ChaosInjection(rate: 1), outcome: HTTPResponse(status: 503))
        #expect(try await stage.execute(.test()) { _ in HTTPResponse(status: 200) }.status == 503)
        #expect(try await stage.execute(.test()) { _ in "text" } == "text")
    }

    @Test("Bad rates are typed errors; descriptions show the settings")
    func configuration() throws {
        for rate in [-0.1, 1.5, Double.nan, .infinity] {
            #expect(throws: ChaosConfigurationError.self) { try ChaosInjection(rate: rate) }
        }
        let chaos = ChaosSwitch(isEnabled: false)
        let fault = ChaosFaultStrategy(try ChaosInjection(rate: 0.1, enabled: chaos))
        let latency = try ChaosLatencyStrategy(try ChaosInjection(rate: 0.5, enabled: chaos), latency: .seconds(2))
        let pipeline = Pipeline {
            fault
            latency
        }
        #expect(
            pipeline.pipelineDescription
                == "chaos-fault(rate: 0.1, enabled: false, fault: server-error HTTP_503) → "
                + "chaos-latency(rate: 0.5, enabled: false, latency: 2.0 seconds)")
    }
}
