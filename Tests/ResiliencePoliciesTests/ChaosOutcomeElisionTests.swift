import ResilienceTesting
import Testing

@testable import ResiliencePolicies

/// A pipeline leaves out its chaos outcome stages for the calls they would pass through: same results, same
/// events, same random draws, and the stages back from the next call once a switch is flipped on.
@Suite("Chaos outcome stages left out while switched off")
struct ChaosOutcomeElisionTests {
    struct ThirdPartyStage: ResilienceStrategy {
        func execute<Output: Sendable>(
            _ context: ResilienceContext, next: (ResilienceContext) async throws -> Output
        ) async throws -> Output {
            try await next(context)
        }

        var stageDescription: StageDescription { StageDescription(name: "third-party") }
    }

    @Test("A pipeline with an outcome stage has the form without it; one without, or with a third party's, has none")
    func formExistsOnlyWhereItCan() throws {
        let off = try ChaosInjection(rate: 1, enabled: ChaosSwitch(isEnabled: false))
        let withOutcome = Pipeline {
            RetryStrategy(policy: StandardRetryPolicy.standard)
            ChaosOutcomeStrategy(off, outcome: 0)
        }
        #expect(withOutcome.withoutChaosOutcomes != nil)
        #expect(withOutcome.stages.map(\.name) == ["retry", "chaos-outcome"], "the description keeps the stage")
        #expect(Pipeline { RetryStrategy(policy: StandardRetryPolicy.standard) }.withoutChaosOutcomes == nil)
        let withThirdParty = Pipeline {
            ThirdPartyStage()
            ChaosOutcomeStrategy(off, outcome: 0)
        }
        #expect(withThirdParty.withoutChaosOutcomes == nil)
    }

    @Test("A call takes the form without outcome stages only when each would pass it through")
    func whichCallsTakeTheForm() throws {
        let numbers = ChaosSwitch(isEnabled: false)
        let words = ChaosSwitch(isEnabled: true)
        let includeWords = true
        let numberOutcome = ChaosOutcomeStrategy(try ChaosInjection(rate: 1, enabled: numbers), outcome: 7)
        let wordOutcome = ChaosOutcomeStrategy(try ChaosInjection(rate: 1, enabled: words), outcome: "chaos")
        let pipeline = Pipeline {
            numberOutcome
            TimeoutStrategy(.seconds(5))
            if includeWords { wordOutcome }
        }
        let form = try #require(pipeline.withoutChaosOutcomes)
        #expect(form.box.stageDescriptions.map(\.name) == ["timeout"])
        #expect(form.passes(Int.self), "the word stage never injects into an Int")
        #expect(!form.passes(String.self), "the word stage is on")
        #expect(form.passes(Double.self))
        numbers.isEnabled = true
        #expect(!form.passes(Int.self))
        words.isEnabled = false
        #expect(form.passes(String.self))
        let asked = try ChaosInjection(rate: 1, enabled: ChaosSwitch { false })
        let closure = Pipeline { ChaosOutcomeStrategy(asked, outcome: 1) }
        #expect(closure.withoutChaosOutcomes?.passes(Int.self) == false, "a closure switch is asked by the stage")
    }

    @Test("Flipping a switch takes effect from the next call, in both directions")
    func flipping() async throws {
        let chaos = ChaosSwitch(isEnabled: false)
        let sink = RecordingTelemetrySink()
        let outcome = ChaosOutcomeStrategy(try ChaosInjection(rate: 1, enabled: chaos), outcome: 503)
        let pipeline = Pipeline {
            RetryStrategy(policy: StandardRetryPolicy.standard)
            outcome
        }
        let context = ResilienceContext.test(telemetry: sink)
        #expect(try await pipeline.execute(context) { _ in 200 } == 200)
        chaos.isEnabled = true
        #expect(try await pipeline.execute(context) { _ in 200 } == 503)
        #expect(try await pipeline.execute(context) { _ in "text" } == "text", "another output type runs")
        chaos.isEnabled = false
        #expect(try await pipeline.execute(context) { _ in 200 } == 200)
        #expect(sink.events(.chaosInjected).count == 1)
    }

    /// Runs the same calls (some failing, some retried) through `pipeline` and returns what each returned and
    /// the events and random draws they made.
    static func run(_ pipeline: Pipeline, random: SharedRandomSource, clock: ManualClock) async -> [String] {
        let sink = RecordingTelemetrySink()
        var lines: [String] = []
        for call in 0..<40 {
            let context = ResilienceContext.test(key: "k", operation: "call-\(call)", clock: clock, telemetry: sink)
            let failures = call % 3
            var attempts = 0
            do {
                let value = try await pipeline.execute(context) { _ in
                    attempts += 1
                    if attempts <= failures { throw ChaosFault.serviceUnavailable }
                    return call
                }
                lines.append("\(call) \(value) after \(attempts)")
            } catch {
                lines.append("\(call) \(error) after \(attempts)")
            }
        }
        for event in sink.events { lines.append("\(event.kind) \(event.operation)") }
        let draw: Double = random.nextUnit()
        lines.append("draw \(draw)")
        return lines
    }

    @Test("Switched off, a pipeline behaves exactly as the same stages without the outcome stage")
    func sameBehaviour() async throws {
        @PipelineBuilder
        func stages(_ random: SharedRandomSource, _ clock: ManualClock) -> some ResilienceStrategy {
            RetryStrategy(
                policy: StandardRetryPolicy(backoff: .constant(.zero), jitter: .none),
                budget: RetryBudget(clock: .manual(clock)), random: random)
            CircuitBreakerStrategy(breaker: ConsecutiveFailureBreaker(.standard, random: random))
            ChaosFaultStrategy(try! ChaosInjection(rate: 0.2, random: random))
        }
        let withOutcome: (SharedRandomSource, ManualClock) -> Pipeline = { random, clock in
            let off = try! ChaosInjection(rate: 0.5, enabled: ChaosSwitch(isEnabled: false), random: random)
            return Pipeline {
                stages(random, clock)
                ChaosOutcomeStrategy(off, outcome: -1)
            }
        }
        let randomA = SharedRandomSource(seed: 11)
        let clockA = ManualClock()
        let randomB = SharedRandomSource(seed: 11)
        let clockB = ManualClock()
        let pipeline = withOutcome(randomA, clockA)
        #expect(pipeline.withoutChaosOutcomes?.passes(Int.self) == true)
        let left = await Self.run(pipeline, random: randomA, clock: clockA)
        let right = await Self.run(Pipeline { stages(randomB, clockB) }, random: randomB, clock: clockB)
        #expect(left == right)
        #expect(left.contains { $0.contains("chaos") }, "the fault stage injected")
    }
}
