import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("ScriptedOperation")
struct ScriptedOperationTests {
    @Test("Follows the script, repeats the last step, counts calls and records contexts")
    func script() async throws {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.failure(TestFailure.serverError), .success(1)])
        var context = makeContext(clock)
        await #expect(throws: TestFailure.serverError) { try await operation(context) }
        context.attempt = 2
        #expect(try await operation(context) == 1)
        #expect(try await operation(context) == 1)
        #expect(operation.callCount == 3)
        #expect(operation.attempts == [1, 2, 2])
    }

    @Test("Delayed steps sleep on the manual clock; an empty script throws")
    func delayedAndEmpty() async throws {
        let clock = ManualClock()
        let operation = ScriptedOperation<Int>([.delayed(.seconds(3), .success(5))], manualClock: clock)
        let task = Task { try await operation(ResilienceContext(key: "k")) }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(3))
        #expect(try await task.value == 5)
        await #expect(throws: ScriptedOperation<Int>.EmptyScript.self) {
            try await ScriptedOperation<Int>([])(makeContext(clock))
        }
    }
}
