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
}
