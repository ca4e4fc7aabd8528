import ResilienceCore
import Testing

@testable import StormSimulation

/// Small cases solved by hand: exact network delays and service times, so every number is predictable.
@Suite struct SimulatorArithmeticTests {
    /// A server with no randomness: 10 ms each way, `workers` × `service`.
    func exactServer(workers: Int = 1, service: Duration = .milliseconds(100)) -> ServerModel {
        var server = ServerModel()
        server.workers = workers
        server.serviceTime = service
        server.serviceSpread = 0
        server.networkDelay = .milliseconds(10)
        server.networkDelaySpread = .zero
        return server
    }

    func batch(_ count: Int, clients: Int? = nil) -> Workload {
        var workload = Workload.batch(count: count, horizon: .seconds(30))
        if let clients { workload.clients = clients }
        return workload
    }

    let noRetry = ClientStrategy(name: "no retry", retryPolicy: nil, maxAttempts: 1)
    let immediate = ClientStrategy(name: "immediate", retryPolicy: ImmediateRetry(maxAttempts: 4), maxAttempts: 4)

    @Test func oneSuccessfulRequestTakesTwoNetworkDelaysAndOneServiceTime() {
        let scenario = Scenario(
            id: "one", title: "one", server: exactServer(), workload: batch(1), attemptTimeout: nil)
        let result = StormSimulator.run(scenario, strategy: noRetry, seed: 1)
        #expect(result.logicalRequests == 1)
        #expect(result.attempts == 1)
        #expect(result.successes == 1)
        #expect(result.latency(at: 0.5) == .milliseconds(120))
        #expect(result.completionTime == .milliseconds(120))
    }

    @Test func aSingleWorkerServesAQueueInOrder() {
        let scenario = Scenario(
            id: "queue", title: "queue", server: exactServer(), workload: batch(3, clients: 1), attemptTimeout: nil)
        let result = StormSimulator.run(scenario, strategy: noRetry, seed: 1)
        #expect(result.successes == 3)
        #expect(result.latency(at: 0.01) == .milliseconds(120))
        #expect(result.latency(at: 0.5) == .milliseconds(220))
        #expect(result.latency(at: 1) == .milliseconds(320))
        #expect(result.completionTime == .milliseconds(320))
    }

    @Test func immediateRetryAgainstADeadServerMakesFourCallsOfTwentyMilliseconds() {
        var server = exactServer()
        server.failureProbability = 1
        let scenario = Scenario(id: "dead", title: "dead", server: server, workload: batch(1), attemptTimeout: nil)
        let result = StormSimulator.run(scenario, strategy: immediate, seed: 1)
        #expect(result.attempts == 4)
        #expect(result.failures == 1)
        #expect(result.amplification == 4)
        #expect(result.completionTime == .milliseconds(80))
    }

    @Test func aBlackHoleIsNoticedOnlyByTheTimeout() {
        var server = exactServer()
        server.faults = [FaultWindow(start: .zero, duration: .seconds(60), kind: .blackHole)]
        let scenario = Scenario(
            id: "hole", title: "hole", server: server, workload: batch(1), attemptTimeout: .seconds(1))
        let once = StormSimulator.run(scenario, strategy: noRetry, seed: 1)
        #expect(once.failures == 1)
        #expect(once.completionTime == .seconds(1))
        let four = StormSimulator.run(scenario, strategy: immediate, seed: 1)
        #expect(four.attempts == 4)
        #expect(four.completionTime == .seconds(4))
    }

    @Test func optimisticConcurrencyLetsOneOfTwoSimultaneousWritersWin() {
        var server = exactServer()
        server.contention = true
        let scenario = Scenario(
            id: "occ", title: "occ", server: server, workload: batch(2), attemptTimeout: nil)
        let alone = StormSimulator.run(scenario, strategy: noRetry, seed: 1)
        #expect(alone.successes == 1)
        #expect(alone.failures == 1)
        // The loser learns at 40 ms, retries at once: read at 50 ms, write at 70 ms, answer at 80 ms.
        let retried = StormSimulator.run(scenario, strategy: immediate, seed: 1)
        #expect(retried.successes == 2)
        #expect(retried.attempts == 3)
        #expect(retried.completionTime == .milliseconds(80))
    }

    @Test func hedgingLaunchesASecondAttemptOnlyForSlowRequests() {
        var server = exactServer(workers: 0)
        server.slowFraction = 1
        server.slowServiceMinimum = .milliseconds(500)
        server.slowServiceTailMean = .zero
        let scenario = Scenario(id: "hedge", title: "hedge", server: server, workload: batch(1), attemptTimeout: nil)
        let hedged = StormSimulator.run(
            scenario, strategy: noRetry.hedged(after: .milliseconds(100), name: "h"), seed: 1)
        #expect(hedged.hedges == 1)
        #expect(hedged.attempts == 2)
        // Both attempts are slow: the first answers at 520 ms, before the hedge (100 + 520 ms).
        #expect(hedged.latency(at: 1) == .milliseconds(520))
        let fast = Scenario(
            id: "fast", title: "fast", server: exactServer(workers: 0), workload: batch(1), attemptTimeout: nil)
        let notNeeded = StormSimulator.run(
            fast, strategy: noRetry.hedged(after: .milliseconds(200), name: "h"), seed: 1)
        #expect(notNeeded.hedges == 0)
    }

    @Test func theSameSeedGivesTheSameResult() {
        let scenario = StormScenarios.outage(.quick)
        let first = StormSimulator.run(scenario, strategy: immediate, seed: 7)
        let second = StormSimulator.run(scenario, strategy: immediate, seed: 7)
        #expect(first == second)
        let other = StormSimulator.run(scenario, strategy: immediate, seed: 8)
        #expect(first.attemptsPerBucket != other.attemptsPerBucket)
    }
}

/// Hostile configurations end quickly with a result, never a trap or a hang.
@Suite struct HostileConfigurationTests {
    @Test func nonsenseParametersAreClampedNotTrusted() {
        var server = ServerModel()
        server.workers = -3
        server.serviceTime = .seconds(Int64.max)
        server.failureProbability = .nan
        server.networkDelaySpread = .seconds(-5)
        server.faults = [
            FaultWindow(start: .seconds(-10), duration: .seconds(Int64.max), failureProbability: .infinity)
        ]
        var workload = Workload()
        workload.requestsPerSecond = .nan
        workload.batchSize = -7
        workload.clients = -1
        workload.horizon = .seconds(Int64.max)
        let scenario = Scenario(
            id: "hostile", title: "hostile", server: server, workload: workload, attemptTimeout: .seconds(-1),
            bucket: .zero)
        let result = StormSimulator.run(
            scenario, strategy: ClientStrategy(name: "x", retryPolicy: ImmediateRetry(maxAttempts: 4), maxAttempts: 4),
            seed: 1)
        #expect(result.logicalRequests == 0)
        #expect(result.attempts == 0)
    }

    @Test func aDeadServerWithHugeDurationsStillFinishesEveryRequest() {
        var server = ServerModel()
        server.workers = -3
        server.serviceTime = .seconds(Int64.max)
        server.faults = [FaultWindow(start: .zero, duration: .seconds(Int64.max), kind: .blackHole)]
        let scenario = Scenario(
            id: "dead", title: "dead", server: server, workload: .batch(count: 5, horizon: .seconds(Int64.max)),
            attemptTimeout: .seconds(2))
        let result = StormSimulator.run(
            scenario, strategy: ClientStrategy(name: "x", retryPolicy: ImmediateRetry(maxAttempts: 2), maxAttempts: 2),
            seed: 1)
        #expect(result.logicalRequests == 5)
        #expect(result.attempts == 10)
        #expect(result.failures == 5)
        #expect(result.completionTime == .seconds(4))
    }
}
