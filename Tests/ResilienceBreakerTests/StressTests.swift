import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Stress")
struct StressTests {
    @Test func manyTasksOnOneBreakerCountExactly() async {
        var configuration = ConsecutiveFailureBreaker.Configuration.standard
        configuration.failureThreshold = 10_000
        let breaker = ConsecutiveFailureBreaker(configuration)
        let counts = await withTaskGroup(of: (admitted: Int, transitions: Int).self) { group in
            for _ in 0..<100 {
                group.addTask {
                    var admitted = 0
                    var transitions = 0
                    for _ in 0..<100 {
                        guard let permit = breaker.admit(now: at(1)).permit else { continue }
                        admitted += 1
                        if breaker.record(.failure(Failures.server), for: permit, now: at(1)) != nil {
                            transitions += 1
                        }
                    }
                    return (admitted, transitions)
                }
            }
            var total = (admitted: 0, transitions: 0)
            for await result in group {
                total.admitted += result.admitted
                total.transitions += result.transitions
            }
            return total
        }
        #expect(counts.admitted == 10_000)
        #expect(counts.transitions == 1)
        #expect(breaker.metrics(now: at(1)).totalOpens == 1)
        #expect(breaker.metrics(now: at(1)).state == .open)
    }

    @Test func pipelinesAliveAtOnceShareOneScopeWhileOthersComeAndGo() async throws {
        let clock = ResilienceClock.manual(ManualClock())
        let scopes = PresetScopes(.standard, clock: clock)
        // Four scopes alive through the whole test: every task must get the same one for each host.
        let kept = (0..<4).map { scopes.scope(named: "host-\($0)") }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var mismatches = 0
                    for round in 0..<2_000 {
                        let host = round % 4
                        // A pipeline of a kept host, built and dropped, and a pipeline of a host nobody keeps.
                        let scope = scopes.scope(named: "host-\(host)")
                        if scope !== kept[host] { mismatches += 1 }
                        _ = Pipeline.preset(.standard, clock: clock, scope: scope)
                        let passing = scopes.scope(named: "passing-\(task)-\(round)")
                        _ = Pipeline.preset(.standard, clock: clock, scope: passing)
                    }
                    return mismatches
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
        #expect(scopes.names == ["host-0", "host-1", "host-2", "host-3"])
    }
}
