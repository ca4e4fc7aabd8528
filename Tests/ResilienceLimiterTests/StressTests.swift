import ResiliencePolicies
import ResilienceTesting
import Testing

@Suite("Limiter stress", .timeLimit(.minutes(1)))
struct LimiterStressTests {
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
