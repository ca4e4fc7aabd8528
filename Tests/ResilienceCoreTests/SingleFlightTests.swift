import ResilienceCore
import ResilienceTesting
import Testing

/// Request coalescing: one run for many concurrent callers, each caller's own cancellation, no leak.
@Suite("SingleFlight")
struct SingleFlightTests {
    /// Yields until `condition` holds; fails the test after a bounded number of turns instead of hanging.
    static func settle(_ what: Comment, _ condition: () -> Bool) async {
        for _ in 0..<200_000 {
            if condition() { return }
            await Task.yield()
        }
        Issue.record("never settled: \(what)")
    }

    @Test("1,000 concurrent callers: one run, 1,000 results, an empty table afterwards")
    func thousandCallers() async throws {
        let flights = SingleFlight<String>()
        let gate = CallGate()
        let runs = LockedState(initialState: 0)
        let callers = 1_000
        let results = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
            for _ in 0..<callers {
                group.addTask {
                    let (value, shared) = try await flights.run("profile/42") {
                        runs.withLock { $0 += 1 }
                        try await gate.pass()
                        return 42
                    }
                    return (value, shared)
                }
            }
            await Self.settle("every caller waits") { flights.callerCount(for: "profile/42") == callers }
            #expect(flights.inFlightCount == 1)
            gate.open()
            var results: [(Int, Bool)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(runs.withLock { $0 } == 1)
        #expect(results.count == callers)
        #expect(results.allSatisfy { $0.0 == 42 })
        #expect(results.filter { !$0.1 }.count == 1)
        #expect(flights.inFlightCount == 0)
        #expect(flights.callerCount(for: "profile/42") == 0)
    }

    @Test("Every caller gets the run's error")
    func sharedError() async {
        struct Upstream: Error, Equatable { var code: Int }
        let flights = SingleFlight<String>()
        let gate = CallGate()
        await withTaskGroup(of: (any Error)?.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        _ = try await flights.run("k") { () async throws -> Int in
                            try await gate.pass()
                            throw Upstream(code: 503)
                        }
                        return nil
                    } catch { return error }
                }
            }
            await Self.settle("ten callers wait") { flights.callerCount(for: "k") == 10 }
            gate.open()
            var errors: [Upstream] = []
            for await error in group {
                if let upstream = error as? Upstream { errors.append(upstream) }
            }
            #expect(errors == Array(repeating: Upstream(code: 503), count: 10))
        }
        #expect(flights.inFlightCount == 0)
    }

    @Test("The run's error keeps its classification: a shared 503 is a transient server error, not unknown")
    func sharedErrorClassified() async throws {
        let flights = SingleFlight<String>()
        let context = ResilienceContext.test()
        let gate = CallGate()
        let starter = Task {
            try await flights.run("k") { () async throws -> Int in
                try await gate.pass()
                throw TestFailure.serverError
            }
        }
        await Self.settle("the run waits") { gate.waitingCount == 1 }
        let joiner = Task { try await flights.runBorrowing("k") { () async throws -> Int in 0 } }
        await Self.settle("two callers") { flights.callerCount(for: "k") == 2 }
        gate.open()
        for caller in [starter, joiner] {
            guard case .failure(let error) = await caller.result else {
                Issue.record("the caller did not fail")
                continue
            }
            // Classified as thrown, the way every stage and the aggregator classify it.
            #expect(context.classify(error).code == "HTTP_503")
        }
        #expect(flights.inFlightCount == 0)
    }

    @Test("One caller cancelled: it alone throws CancellationError, the others get the result")
    func oneCallerCancels() async throws {
        let flights = SingleFlight<String>()
        let gate = CallGate()
        let operation: @Sendable () async throws -> String = {
            try await gate.pass()
            return "feed"
        }
        let first = Task { try await flights.run("feed", operation) }
        await Self.settle("the run started") { gate.waitingCount == 1 }
        let others = (0..<5).map { _ in Task { try await flights.run("feed", operation) } }
        await Self.settle("six callers wait") { flights.callerCount(for: "feed") == 6 }
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        #expect(flights.callerCount(for: "feed") == 5)
        #expect(gate.cancellations == 0)
        gate.open()
        for other in others { #expect(try await other.value.output == "feed") }
        #expect(gate.arrivals == 1)
        #expect(flights.inFlightCount == 0)
    }

    @Test("Every caller cancelled: the run is cancelled and the key is free for a fresh run")
    func allCallersCancel() async throws {
        let flights = SingleFlight<String>()
        let gate = CallGate()
        let operation: @Sendable () async throws -> String = {
            try await gate.pass()
            return "feed"
        }
        let callers = (0..<3).map { _ in Task { try await flights.run("feed", operation) } }
        await Self.settle("three callers wait") { flights.callerCount(for: "feed") == 3 && gate.waitingCount == 1 }
        for caller in callers { caller.cancel() }
        for caller in callers { await #expect(throws: CancellationError.self) { try await caller.value } }
        await Self.settle("the run was cancelled") { gate.cancellations == 1 }
        #expect(flights.inFlightCount == 0)
        gate.open()
        let fresh = try await flights.run("feed", operation)
        #expect(fresh.output == "feed")
        #expect(!fresh.shared)
        #expect(gate.arrivals == 2)
    }

    @Test("The borrowing form: the starter cancelled waits for the run, the others get its result")
    func borrowingStarterCancels() async throws {
        let flights = SingleFlight<String>()
        let gate = CallGate()
        let runs = LockedState(initialState: 0)
        let starter = Task {
            try await flights.runBorrowing("k") {
                runs.withLock { $0 += 1 }
                try await gate.pass()
                return 7
            }
        }
        await Self.settle("the run started") { gate.waitingCount == 1 }
        let joiner = Task { try await flights.run("k") { () async throws -> Int in 0 } }
        await Self.settle("two callers wait") { flights.callerCount(for: "k") == 2 }
        starter.cancel()
        await Self.settle("the starter left") { flights.callerCount(for: "k") == 1 }
        gate.open()
        #expect(try await joiner.value.output == 7)
        #expect(try await joiner.value.shared)
        await #expect(throws: CancellationError.self) { try await starter.value }
        #expect(runs.withLock { $0 } == 1)
        #expect(flights.inFlightCount == 0)
    }

    @Test("Different keys and different output types never share a run")
    func keysAndTypesApart() async throws {
        let flights = SingleFlight<String>()
        let gate = CallGate()
        async let a = flights.run("a") { () async throws -> Int in
            try await gate.pass()
            return 1
        }
        async let b = flights.run("b") { () async throws -> Int in
            try await gate.pass()
            return 2
        }
        async let text = flights.run("a") { () async throws -> String in
            try await gate.pass()
            return "a"
        }
        await Self.settle("three runs") { gate.waitingCount == 3 }
        #expect(flights.inFlightCount == 3)
        gate.open()
        let (first, second, third) = try await (a, b, text)
        #expect(first.output == 1 && second.output == 2 && third.output == "a")
        #expect(!first.shared && !second.shared && !third.shared)
        #expect(flights.inFlightCount == 0)
    }

    @Test("A caller cancelled before it arrives throws at once and starts nothing")
    func cancelledBeforeArrival() async {
        let flights = SingleFlight<String>()
        let runs = LockedState(initialState: 0)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await flights.run("k") { runs.withLock { $0 += 1 } }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(runs.withLock { $0 } == 0)
        #expect(flights.inFlightCount == 0)
    }

}
