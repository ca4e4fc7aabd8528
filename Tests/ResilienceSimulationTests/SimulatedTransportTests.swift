import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

/// The simulated transport's exchange: one sleep per request, during which the server decides the answer at
/// the request's arrival. Checked against the timeline the transport documents (network delay in, service,
/// network delay out), deadlines before and after the arrival, a refused connection and cancellation.
@Suite struct SimulatedTransportTests {
    /// A server of one worker with 100 ms of service and 10 ms of network delay each way.
    static func server(_ simulation: Simulation, faults: [SimulatedFault] = []) -> SimulatedServer {
        SimulatedServer(
            simulation: simulation,
            configuration: .init(
                workers: 1, serviceTime: .constant(.milliseconds(100)), networkDelay: .constant(.milliseconds(10)),
                faults: faults))
    }

    static let request = HTTPRequest(url: URL(string: "https://api.example/jobs")!)

    /// Sends one request at the start with `deadline` (from the start) and reports how it ended and when.
    static func exchange(
        _ simulation: Simulation, _ server: SimulatedServer, deadline: Duration? = nil
    ) throws -> (outcome: String, at: Duration) {
        let transport = SimulatedHTTPTransport(server: server)
        let clock = simulation.resilienceClock
        return try simulation.run {
            let context = ResilienceContext(
                key: "api", deadline: deadline.map { ResilienceInstant(offset: $0) }, clock: clock)
            do {
                let response = try await transport.send(request, context: context)
                return ("\(response.status)", simulation.clock.now.offset)
            } catch {
                return ("\(error)", simulation.clock.now.offset)
            }
        }
    }

    @Test func theAnswerComesBackAfterTheWayInTheServiceAndTheWayOut() throws {
        let simulation = Simulation(seed: 1, recordsTrace: true)
        let server = Self.server(simulation)
        let result = try Self.exchange(simulation, server)
        #expect(result.outcome == "200")
        #expect(result.at == .milliseconds(120))
        // The server saw the request when it arrived (10 ms), not when the task sent or got it back.
        #expect(simulation.trace.text == "10000000 #1 1 200")
        #expect(server.statistics.arrivals == 1)
        #expect(simulation.clock.sleeperCount == 0)
    }

    @Test func aDeadlineBeforeTheArrivalEndsThereAndTheServerNeverSeesTheRequest() throws {
        let simulation = Simulation(seed: 1)
        let server = Self.server(simulation)
        let result = try Self.exchange(simulation, server, deadline: .milliseconds(5))
        #expect(result.outcome == "\(SimulatedTransportError.timedOut)")
        #expect(result.at == .milliseconds(5))
        #expect(server.statistics.arrivals == 0)
    }

    @Test func aDeadlineAfterTheArrivalEndsThereAndTheServerStillServes() throws {
        let simulation = Simulation(seed: 1)
        let server = Self.server(simulation)
        let result = try Self.exchange(simulation, server, deadline: .milliseconds(50))
        #expect(result.outcome == "\(SimulatedTransportError.timedOut)")
        #expect(result.at == .milliseconds(50))
        #expect(server.statistics.arrivals == 1)
        #expect(server.statistics.succeeded == 1)
    }

    @Test func aRefusedConnectionIsReportedOneRoundTripLater() throws {
        let simulation = Simulation(seed: 1)
        let server = Self.server(
            simulation, faults: [SimulatedFault(.outage(status: nil), from: .zero, until: .seconds(1))])
        let result = try Self.exchange(simulation, server)
        #expect(result.outcome == "\(SimulatedTransportError.connectionRefused)")
        #expect(result.at == .milliseconds(20))
        #expect(server.statistics.rejected == 1)
    }

    @Test func cancellingWhileTheAnswerIsOnItsWayEndsAtOnceAndLeavesNoSleeper() throws {
        let simulation = Simulation(seed: 1)
        let server = Self.server(simulation)
        let transport = SimulatedHTTPTransport(server: server)
        let clock = simulation.resilienceClock
        let (outcome, end) = try simulation.run {
            let exchange = Task(executorPreference: simulation.executor) { () -> String in
                do {
                    let context = ResilienceContext(key: "api", clock: clock)
                    return "\(try await transport.send(Self.request, context: context).status)"
                } catch {
                    return "\(type(of: error)) at \(simulation.clock.now.offset)"
                }
            }
            // After the arrival (10 ms), before the answer is back (120 ms).
            try await simulation.clock.sleep(for: .milliseconds(50))
            exchange.cancel()
            return (await exchange.value, simulation.clock.now.offset)
        }
        #expect(outcome == "CancellationError at 0.05 seconds")
        #expect(end == .milliseconds(50))
        #expect(server.statistics.arrivals == 1)
        #expect(simulation.clock.sleeperCount == 0)
    }

    @Test func exchangesThatArriveTogetherAreServedInTheOrderTheyWereSent() throws {
        let simulation = Simulation(seed: 1)
        let server = Self.server(simulation)
        let transport = SimulatedHTTPTransport(server: server)
        let clock = simulation.resilienceClock
        let finished = try simulation.run {
            await withTaskGroup(of: (Int, Duration).self) { group in
                for index in 0..<3 {
                    group.addTask {
                        let context = ResilienceContext(key: "api", clock: clock)
                        _ = try? await transport.send(Self.request, context: context)
                        return (index, simulation.clock.now.offset)
                    }
                }
                var finished: [Int: Duration] = [:]
                for await (index, at) in group { finished[index] = at }
                return finished
            }
        }
        // One worker: the first sent is served first, each 100 ms after the one before.
        #expect(finished == [0: .milliseconds(120), 1: .milliseconds(220), 2: .milliseconds(320)])
    }
}
