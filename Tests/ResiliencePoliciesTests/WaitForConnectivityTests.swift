import ResiliencePolicies
import ResilienceTesting
import Testing

/// An error the network layer would throw while the device is offline.
private struct Offline: ClassifiedError {
    var classification: FailureClassification {
        FailureClassification(category: .networkUnreachable, code: .noConnection, isTransient: true)
    }
}

@Suite("WaitForConnectivityStrategy")
struct WaitForConnectivityTests {
    @Test("Offline before the call: it waits for the path, then runs once")
    func waitsBeforeRunning() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let monitor = ScriptedConnectivityMonitor(.unsatisfied)
        let runs = LockedBox(0)
        let pipeline = Pipeline { WaitForConnectivityStrategy(monitor: monitor) }
        let call = Task {
            try await pipeline.execute(makeContext(clock, sink: sink)) { _ in
                runs.mutate { $0 += 1 }
                return "jobs"
            }
        }
        while monitor.listenerCount == 0 { await Task.yield() }
        #expect(runs.value == 0)
        clock.advance(by: .seconds(7))
        monitor.setOnline(true)
        #expect(try await call.value == "jobs")
        #expect(runs.value == 1)
        let wait = try #require(sink.first(.connectivityWait))
        #expect(wait.duration == .seconds(7) && wait.detail == "satisfied")
    }

    @Test("A network-unreachable failure while the path is down costs no retry attempt, budget or breaker failure")
    func unreachableWaitsAndRunsAgain() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let monitor = ScriptedConnectivityMonitor(.satisfied)
        var configuration = ConsecutiveFailureBreaker.Configuration()
        configuration.failureThreshold = 1
        let breaker = ConsecutiveFailureBreaker(configuration)
        let budget = RetryBudget(RetryBudgetConfiguration(ratio: 0.1, minimumPerSecond: 0), clock: .manual(clock))
        let pipeline = Pipeline {
            RetryStrategy(policy: StandardRetryPolicy.standard, budget: budget)
            CircuitBreakerStrategy(breaker: breaker)
            WaitForConnectivityStrategy(monitor: monitor)
        }
        let runs = LockedBox(0)
        let call = Task {
            try await pipeline.execute(makeContext(clock, sink: sink)) { _ in
                let run = runs.mutate {
                    $0 += 1; return $0
                }
                if run == 1 {
                    monitor.setOnline(false)  // the device lost its network during the request
                    throw Offline()
                }
                return run
            }
        }
        while monitor.listenerCount == 0 { await Task.yield() }
        monitor.setOnline(true)
        #expect(try await call.value == 2)
        #expect(sink.count(.attemptStarted) == 1 && sink.count(.attemptFailed) == 0)
        #expect(sink.count(.retryScheduled) == 0 && sink.count(.budgetExhausted) == 0)
        #expect(sink.count(.breakerTransition) == 0)
        #expect(sink.count(.connectivityWait) == 1)
    }

    @Test("A network-unreachable failure while the path looks fine is rethrown for the retry stage to judge")
    func unreachableOnAGoodPathIsRethrown() async {
        let clock = ManualClock()
        let monitor = ScriptedConnectivityMonitor(.satisfied)
        let pipeline = Pipeline { WaitForConnectivityStrategy(monitor: monitor) }
        await #expect(throws: Offline.self) {
            try await pipeline.execute(makeContext(clock)) { _ -> Int in throw Offline() }
        }
        #expect(monitor.listenerCount == 0)
    }

    @Test("The wait ends at the deadline: never run, deadline exceeded, and a gave-up event")
    func deadline() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let monitor = ScriptedConnectivityMonitor(.unsatisfied)
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(5))
            WaitForConnectivityStrategy(monitor: monitor)
        }
        let call = Task { try await pipeline.execute(makeContext(clock, sink: sink)) { _ in 1 } }
        await clock.waitForSleepers()
        clock.advance(by: .seconds(5))
        await #expect(throws: ResilienceError.self) { try await call.value }
        #expect(sink.first(.connectivityWait)?.detail == "gave-up")
        #expect(sink.first(.connectivityWait)?.duration == .seconds(5))
    }

    @Test("Cancelling a waiting call ends it at once with CancellationError")
    func cancellation() async {
        let clock = ManualClock()
        let monitor = ScriptedConnectivityMonitor(.unsatisfied)
        let pipeline = Pipeline { WaitForConnectivityStrategy(monitor: monitor) }
        let call = Task { try await pipeline.execute(makeContext(clock)) { _ in 1 } }
        while monitor.listenerCount == 0 { await Task.yield() }
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
    }

    @Test("A monitor that stops while a call waits: the call runs (nobody can say the network is back), no timeout")
    func monitorStopsWhileWaiting() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let monitor = ScriptedConnectivityMonitor(.unsatisfied)
        let pipeline = Pipeline {
            TotalDeadlineStrategy(.seconds(30))
            WaitForConnectivityStrategy(monitor: monitor)
        }
        let runs = LockedBox(0)
        let call = Task {
            try await pipeline.execute(makeContext(clock, sink: sink)) { _ in
                runs.mutate { $0 += 1 }
                return "jobs"
            }
        }
        while monitor.listenerCount == 0 { await Task.yield() }
        clock.advance(by: .seconds(2))
        monitor.stop()
        // Not "deadline exceeded" 28 s before the deadline: the wait ended because the monitor stopped.
        #expect(try await call.value == "jobs")
        #expect(runs.value == 1)
        let wait = try #require(sink.first(.connectivityWait))
        #expect(wait.detail == "monitor-stopped" && wait.duration == .seconds(2))
        // A later call on the stopped monitor (its last path: offline) runs at once; a network-unreachable
        // failure is rethrown for the retry stage, as no wait can end it.
        #expect(try await pipeline.execute(makeContext(clock)) { _ in 2 } == 2)
        await #expect(throws: Offline.self) {
            try await pipeline.execute(makeContext(clock)) { _ -> Int in throw Offline() }
        }
    }

    @Test("The background policy waits out Low Data Mode; the standard one runs on it")
    func constrained() async throws {
        let constrained = NetworkPath(status: .satisfied, isConstrained: true)
        #expect(ConnectivityWaitPolicy.standard.accepts(constrained))
        #expect(!ConnectivityWaitPolicy.background.accepts(constrained))
        #expect(
            !ConnectivityWaitPolicy(defersWhileExpensive: true).accepts(
                NetworkPath(status: .satisfied, isExpensive: true)))
        let clock = ManualClock()
        let monitor = ScriptedConnectivityMonitor(constrained)
        let pipeline = Pipeline { WaitForConnectivityStrategy(monitor: monitor, policy: .background) }
        let call = Task { try await pipeline.execute(makeContext(clock)) { _ in 1 } }
        while monitor.listenerCount == 0 { await Task.yield() }
        monitor.setPath(.satisfied)
        #expect(try await call.value == 1)
        #expect(
            pipeline.pipelineDescription == "wait-for-connectivity(maximumWait: 300.0 seconds, defers: constrained)")
    }

    @Test("A path that keeps coming and going cannot hold a call forever: at most maximumWaits waits")
    func maximumWaits() async throws {
        let clock = ManualClock()
        let monitor = ScriptedConnectivityMonitor(.satisfied)
        let pipeline = Pipeline {
            WaitForConnectivityStrategy(monitor: monitor, policy: ConnectivityWaitPolicy(maximumWaits: 2))
        }
        let runs = LockedBox(0)
        let call = Task {
            try await pipeline.execute(makeContext(clock)) { _ -> Int in
                runs.mutate { $0 += 1 }
                monitor.setOnline(false)
                throw Offline()
            }
        }
        for _ in 0..<2 {
            while monitor.listenerCount == 0 { await Task.yield() }
            monitor.setOnline(true)
            while monitor.listenerCount != 0 { await Task.yield() }
        }
        await #expect(throws: Offline.self) { try await call.value }
        #expect(runs.value == 3)
    }
}

@Suite("Presets and connectivity")
struct PresetConnectivityTests {
    @Test("Interactive and background wait for the path when given a monitor; standard does not; no monitor, no stage")
    func presets() {
        let monitor = ScriptedConnectivityMonitor()
        let names = { (pipeline: Pipeline) in pipeline.stages.map(\.name) }
        #expect(
            names(Pipeline.interactive { $0.connectivity = monitor }) == [
                "total-deadline", "retry", "wait-for-connectivity", "circuit-breaker", "server-quota", "timeout",
            ])
        #expect(names(Pipeline.background { $0.connectivity = monitor }).contains("wait-for-connectivity"))
        #expect(!names(Pipeline.standard { $0.connectivity = monitor }).contains("wait-for-connectivity"))
        #expect(!names(Pipeline.interactive()).contains("wait-for-connectivity"))
        #expect(PipelinePreset.background.connectivityWait == .background)
    }

    @Test("Calls held while the device is offline are not calls the server left unanswered: the breaker stays closed")
    func offlineWaitsDoNotOpenTheBreaker() async throws {
        let clock = ManualClock()
        let sink = RecordingTelemetrySink()
        let monitor = ScriptedConnectivityMonitor(.satisfied)
        let pipeline = Pipeline.interactive(clock: .manual(clock), random: SharedRandomSource(seed: 5)) {
            $0.connectivity = monitor
        }
        let context = makeContext(clock, sink: sink)
        // The breaker has seen the server answer, so it judges silence from now on (3 calls, 5 s).
        #expect(try await pipeline.execute(context) { _ in 0 } == 0)
        monitor.setOnline(false)
        let held = (1...4).map { index in Task { try await pipeline.execute(context) { _ in index } } }
        // (Bounded waits: a call that failed instead of waiting for the network would never be heard here.)
        for _ in 0..<100_000 where monitor.listenerCount < 4 { await Task.yield() }
        #expect(monitor.listenerCount == 4)
        clock.advance(by: .seconds(8))
        // Eight seconds later a fifth call finds four calls waiting: they wait for the network, not the server.
        let late = Task { try await pipeline.execute(context) { _ in 5 } }
        // A breaker that opened would reject the fifth call instead of letting it wait.
        for _ in 0..<100_000 where monitor.listenerCount < 5 { await Task.yield() }
        monitor.setOnline(true)
        var results: [Int?] = []
        for call in held + [late] { results.append(try? await call.value) }
        #expect(results == [1, 2, 3, 4, 5])
        #expect(sink.count(.breakerTransition) == 0)
    }
}
