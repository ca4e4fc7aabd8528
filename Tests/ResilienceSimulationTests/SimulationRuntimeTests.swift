import Foundation
import ResilienceKit
import ResilienceTesting
import Synchronization
import Testing

/// The deterministic runtime: real pipelines, virtual time, reproducible traces.
@Suite struct SimulationRuntimeTests {
    /// Many clients, each with its own `Pipeline.standard` plus hedging and an enforced timeout, against a
    /// server with a brownout and slow responses; returns the trace's text and the server's statistics.
    static func storm(seed: UInt64, clients: Int = 40, requests: Int = 15) throws -> (String, UInt64, Int) {
        let simulation = Simulation(seed: seed, recordsTrace: true)
        let server = SimulatedServer(
            simulation: simulation,
            configuration: .init(
                workers: 8, serviceTime: .exponential(mean: .milliseconds(20)),
                networkDelay: .absoluteNormal(mean: .milliseconds(10), standardDeviation: .milliseconds(2)),
                faults: [
                    SimulatedFault(
                        .brownout(failureProbability: 0.3, status: 503), from: .seconds(1), until: .seconds(3)),
                    SimulatedFault(
                        .slowResponses(probability: 0.05, extra: .constant(.milliseconds(400))), from: .zero,
                        until: .seconds(60)),
                ]))
        let transport = SimulatedHTTPTransport(server: server)
        let sink = SimulationTelemetrySink(trace: simulation.trace)
        let clock = simulation.resilienceClock
        let succeeded = try simulation.run {
            await withTaskGroup(of: Int.self) { group in
                for client in 0..<clients {
                    let random = simulation.random(stream: UInt64(client) + 1)
                    let hedging = Pipeline { HedgingStrategy(delay: .milliseconds(150)) }
                    let pipeline = Pipeline.standard(clock: clock, random: random) {
                        $0.timeoutMode = .enforced
                        $0.attemptTimeout = .milliseconds(300)
                    }
                    group.addTask {
                        var generator = simulation.generator(stream: 10_000 + UInt64(client))
                        var succeeded = 0
                        for _ in 0..<requests {
                            try? await simulation.clock.sleep(
                                for: LatencyDistribution.exponential(mean: .milliseconds(200)).sample(
                                    using: &generator))
                            let context = ResilienceContext(
                                key: "client-\(client)", telemetry: sink, clock: clock)
                            let status = try? await hedging.execute(context) { hedge in
                                try await pipeline.execute(hedge) { attempt in
                                    let response = try await transport.send(
                                        HTTPRequest(url: URL(string: "https://api.example/jobs")!), context: attempt)
                                    guard response.isSuccess else { throw HTTPStatusError(response: response) }
                                    return response.status
                                }
                            }
                            if status == 200 { succeeded += 1 }
                        }
                        return succeeded
                    }
                }
                return await group.reduce(0, +)
            }
        }
        return (simulation.trace.text, simulation.trace.digest, succeeded)
    }

    @Test func sameSeedGivesTheSameTraceByteForByte() throws {
        let first = try Self.storm(seed: 7)
        let second = try Self.storm(seed: 7)
        #expect(first.0.utf8.count > 10_000)
        #expect(first.0 == second.0)
        #expect(first.1 == second.1)
        #expect(first.2 == second.2)
        // The run did exercise retries, hedges and timeouts.
        #expect(first.0.contains("hedge"))
        #expect(first.0.contains("retry"))
        let other = try Self.storm(seed: 8)
        #expect(other.1 != first.1)
    }

    @Test func sleepersWakeInTimeOrderAndTimeJumps() throws {
        let simulation = Simulation(seed: 1)
        let clock = simulation.clock
        let order = try simulation.run {
            await withTaskGroup(of: (Int, Duration).self) { group in
                for (index, delay) in [300, 100, 200, 100].enumerated() {
                    group.addTask {
                        try? await clock.sleep(for: .seconds(delay))
                        return (index, clock.now.offset)
                    }
                }
                var order: [(Int, Duration)] = []
                for await entry in group { order.append(entry) }
                return order
            }
        }
        #expect(order.map(\.0) == [1, 3, 2, 0])
        #expect(order.map(\.1) == [.seconds(100), .seconds(100), .seconds(200), .seconds(300)])
        #expect(simulation.clock.now.offset == .seconds(300))
    }

    @Test func thousandsOfSleepersWakeByDeadlineThenBySleepOrderEvenAfterMassCancellation() throws {
        let simulation = Simulation(seed: 1)
        let clock = simulation.clock
        let count = 3_000
        // Fifty distinct deadlines: many ties, which wake in the order the sleeps began.
        let deadlines = (0..<count).map { VirtualClock.Instant(offset: .seconds(1 + ($0 * 7_919) % 50)) }
        final class Log: Sendable {
            let woken = Mutex<[Int]>([])
            let cancelled = Mutex<[Int]>([])
        }
        let log = Log()
        try simulation.run {
            let sleepers = (0..<count).map { index in
                Task(executorPreference: simulation.executor) {
                    do {
                        try await clock.sleep(until: deadlines[index])
                        log.woken.withLock { $0.append(index) }
                    } catch {
                        #expect(clock.now.offset == .nanoseconds(1))
                        log.cancelled.withLock { $0.append(index) }
                    }
                }
            }
            // Every sleeper is asleep once this wakes; cancelling two of three leaves most of the heap stale,
            // which makes the clock compact it.
            try await clock.sleep(for: .nanoseconds(1))
            for (index, sleeper) in sleepers.enumerated() where index % 3 != 0 { sleeper.cancel() }
            for sleeper in sleepers { await sleeper.value }
        }
        let expected = (0..<count).filter { $0 % 3 == 0 }.sorted { (deadlines[$0], $0) < (deadlines[$1], $1) }
        #expect(log.woken.withLock { $0 } == expected)
        #expect(log.cancelled.withLock { $0 }.count == count - expected.count)
        #expect(clock.now.offset == .seconds(50))
        #expect(clock.sleeperCount == 0)
    }

    @Test func aTimeLimitBetweenTwoNanosecondsIsTheExactEndTime() throws {
        let simulation = Simulation(seed: 1, recordsTrace: true)
        let clock = simulation.clock
        let limit = Duration(secondsComponent: 2, attosecondsComponent: 500)  // 2 s and 500 attoseconds
        let ticks = try simulation.run(timeLimit: limit) {
            var ticks: [Duration] = []
            while (try? await clock.sleep(for: .milliseconds(700))) != nil { ticks.append(clock.now.offset) }
            simulation.trace.record("end")
            return ticks
        }
        #expect(ticks == [.milliseconds(700), .milliseconds(1_400)])
        #expect(clock.now.offset == limit)
        // Events are stamped in whole nanoseconds, rounded down.
        #expect(simulation.trace.text == "2000000000 end")
    }

    @Test func cancellingASleeperEndsItAtOnce() throws {
        let simulation = Simulation(seed: 1)
        let clock = simulation.clock
        let (outcome, end) = try simulation.run {
            let sleeper = Task(executorPreference: simulation.executor) { () -> String in
                do {
                    try await clock.sleep(for: .seconds(3600))
                    return "woke"
                } catch {
                    return "\(type(of: error)) at \(clock.now.offset)"
                }
            }
            try await clock.sleep(for: .seconds(5))
            sleeper.cancel()
            return (await sleeper.value, clock.now.offset)
        }
        #expect(outcome == "CancellationError at 5.0 seconds")
        #expect(end == .seconds(5))
        #expect(simulation.clock.sleeperCount == 0)
    }

    @Test func aRelayedSleepRunsItsStepAtEachDeadlineInTimeOrderAndResumesWhenItReturnsNil() throws {
        let simulation = Simulation(seed: 1)
        let clock = simulation.clock
        let log = LockedBox<[String]>([])
        let end = try simulation.run { () -> Duration in
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    try? await clock.sleep(until: .init(offset: .seconds(1))) {
                        let steps = log.mutate { log in
                            log.append("step at \(clock.now.offset)")
                            return log.count { $0.hasPrefix("step") }
                        }
                        return steps < 3 ? clock.now.advanced(by: .seconds(1)) : nil
                    }
                    log.mutate { $0.append("resumed at \(clock.now.offset)") }
                }
                group.addTask {
                    try? await clock.sleep(until: .init(offset: .milliseconds(1_500)))
                    log.mutate { $0.append("other at \(clock.now.offset)") }
                }
            }
            return clock.now.offset
        }
        #expect(
            log.value == [
                "step at 1.0 seconds", "other at 1.5 seconds", "step at 2.0 seconds", "step at 3.0 seconds",
                "resumed at 3.0 seconds",
            ])
        #expect(end == .seconds(3))
        #expect(clock.sleeperCount == 0)
    }

    @Test func cancellingARelayedSleepEndsItAtOnceAndRunsNoFurtherStep() throws {
        let simulation = Simulation(seed: 1)
        let clock = simulation.clock
        let steps = LockedBox<[Duration]>([])
        let outcome = try simulation.run { () -> String in
            let sleeper = Task(executorPreference: simulation.executor) { () -> String in
                do {
                    try await clock.sleep(until: .init(offset: .seconds(1))) {
                        steps.mutate { $0.append(clock.now.offset) }
                        return clock.now.advanced(by: .seconds(1))
                    }
                    return "resumed"
                } catch {
                    return "\(type(of: error)) at \(clock.now.offset)"
                }
            }
            try await clock.sleep(for: .milliseconds(4_500))
            sleeper.cancel()
            return await sleeper.value
        }
        #expect(outcome == "CancellationError at 4.5 seconds")
        #expect(steps.value == [.seconds(1), .seconds(2), .seconds(3), .seconds(4)])
        #expect(clock.sleeperCount == 0)
    }

    @Test func timeLimitCancelsTheBody() throws {
        let simulation = Simulation(seed: 1)
        let clock = simulation.clock
        let loops = try simulation.run(timeLimit: .seconds(10)) {
            var loops = 0
            while (try? await clock.sleep(for: .seconds(1))) != nil { loops += 1 }
            return loops
        }
        #expect(loops == 10)
    }

    @Test func workOnAnotherExecutorIsReported() {
        let simulation = Simulation(seed: 1)
        // The detached task cannot finish before the body waits for it (it would then wait for nothing, and
        // nothing would escape): it runs until the test lets it go, after the run.
        let released = LockedBox(false)
        #expect(throws: SimulationError.self) {
            try simulation.run {
                await Task.detached {
                    while !released.value { await Task.yield() }
                    return 42
                }
                .value
            }
        }
        released.mutate { $0 = true }
    }

    @Test func aWaitOutsideTheSimulationStallsItInsteadOfHanging() {
        let simulation = Simulation(seed: 1)
        let outside = Mutex<CheckedContinuation<Void, Never>?>(nil)
        #expect(throws: SimulationError.self) {
            try simulation.run {
                // Something no simulated task will ever do: only the world outside could resume it.
                await withCheckedContinuation { continuation in outside.withLock { $0 = continuation } }
            }
        }
        outside.withLock { $0?.resume() }
    }
}
