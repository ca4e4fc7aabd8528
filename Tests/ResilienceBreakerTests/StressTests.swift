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

    @Test func manyTasksOnOneBucketAdmitExactlyTheBurst() async {
        let bucket = TokenBucketLimiter(.rate(0, burst: 1000))
        let admitted = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    (0..<20).reduce(0) { count, _ in bucket.tryAcquire(now: at(0)).permit == nil ? count : count + 1 }
                }
            }
            return await group.reduce(0, +)
        }
        #expect(admitted == 1000)
    }

    @Test func manyTasksThroughOneBulkheadNeverExceedTheLimit() async throws {
        let bulkhead = ConcurrencyLimiter(.limit(4, queued: 1000))
        let running = LockedBox((now: 0, peak: 0, done: 0))
        let context = ResilienceContext(key: "stress")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    let permit = try await bulkhead.waitForPermit(context: context)
                    running.mutate {
                        $0.now += 1; $0.peak = max($0.peak, $0.now)
                    }
                    await Task.yield()
                    running.mutate {
                        $0.now -= 1; $0.done += 1
                    }
                    bulkhead.release(permit, outcome: .accepted, now: at(0))
                }
            }
            try await group.waitForAll()
        }
        #expect(running.value.done == 200)
        #expect(running.value.peak <= 4)
        #expect(bulkhead.occupancy == (0, 0))
    }
}
