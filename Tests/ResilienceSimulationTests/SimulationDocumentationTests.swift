import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

/// The worked example of `Docs/Simulation.md` (fewer clients), and the aggregator over simulated sources.
@Suite struct SimulationDocumentationTests {
    static func brownout(seed: UInt64, clients: Int) throws -> (Int, SimulatedServer.Statistics) {
        let simulation = Simulation(seed: seed)
        let server = SimulatedServer(
            simulation: simulation,
            configuration: .init(
                workers: 30, serviceTime: .exponential(mean: .milliseconds(100)),
                networkDelay: .absoluteNormal(mean: .milliseconds(10), standardDeviation: .milliseconds(2)),
                faults: [
                    SimulatedFault(
                        .brownout(failureProbability: 0.3, status: 503), from: .seconds(10), until: .seconds(30))
                ]))
        let clock = simulation.resilienceClock

        @Sendable func makeClient(_ index: Int) -> any HTTPTransport {
            let pipeline = Pipeline.standard(clock: clock, random: simulation.random(stream: UInt64(index)))
            return ResilientTransport(wrapping: SimulatedHTTPTransport(server: server), pipeline: { _ in pipeline })
        }

        let succeeded = try simulation.run {
            await withTaskGroup(of: Int.self) { group in
                for index in 0..<clients {
                    let transport = makeClient(index)
                    group.addTask {
                        var generator = simulation.generator(stream: 1_000 + UInt64(index))
                        var succeeded = 0
                        for _ in 0..<40 {
                            try? await simulation.clock.sleep(
                                for: LatencyDistribution.exponential(mean: .seconds(1)).sample(using: &generator))
                            let request = HTTPRequest(url: URL(string: "https://api.example/jobs")!)
                            let context = ResilienceContext(key: "api", clock: clock)
                            if (try? await transport.send(request, context: context)) != nil { succeeded += 1 }
                        }
                        return succeeded
                    }
                }
                return await group.reduce(0, +)
            }
        }
        return (succeeded, server.statistics)
    }

    @Test func theWorkedExampleRetriesThroughTheBrownout() throws {
        let (succeeded, load) = try Self.brownout(seed: 42, clients: 30)
        let offered = 30 * 40
        // 30 % failures for half the run: without retries about 85 % would succeed. The standard preset's budget
        // (10 % of the last 30 s's requests) wins back part of the rest, never more than its 10 %.
        #expect(succeeded > offered * 86 / 100)
        #expect(succeeded < offered)
        #expect(load.arrivals > offered)
        #expect(load.arrivals < offered * 13 / 10)
        let again = try Self.brownout(seed: 42, clients: 30)
        #expect(again.0 == succeeded)
        #expect(again.1 == load)
    }

    struct Job: Decodable, Sendable { var id: Int }

    @Test func theAggregatorRunsOverSimulatedSources() throws {
        let simulation = Simulation(seed: 3)
        let clock = simulation.resilienceClock
        let body = Data(#"[{"id": 1}, {"id": 2}]"#.utf8)
        let healthy = SimulatedServer(simulation: simulation, configuration: .init(successBody: body))
        let slow = SimulatedServer(
            simulation: simulation,
            configuration: .init(serviceTime: .constant(.seconds(20)), randomStream: 2, successBody: body))
        let down = SimulatedServer(
            simulation: simulation,
            configuration: .init(
                faults: [SimulatedFault(.outage(status: nil), from: .zero, until: .seconds(3600))], randomStream: 3))
        var aggregator = Aggregator<Job>(
            configuration: AggregatorConfiguration(sourceTimeout: .seconds(5)), clock: clock)
        for (name, server) in [("healthy", healthy), ("slow", slow), ("down", down)] {
            aggregator.register(
                JSONAPISource<Job>(
                    id: SourceID(name), transport: SimulatedHTTPTransport(server: server),
                    endpoint: { _, _ in HTTPRequest(url: URL(string: "https://\(name).example/jobs")!) }),
                pipeline: Pipeline.standard(clock: clock, random: simulation.random(stream: 9)))
        }
        let frozen = aggregator
        let result = try simulation.run { try await frozen.fetch() }
        #expect(result.items.map(\.id) == [1, 2])
        #expect(result.report.failedCount == 2)
        // The slow source was abandoned at its 5 s timeout; the outage retried with backoff meanwhile.
        #expect(simulation.clock.now.offset >= .seconds(5))
        #expect(simulation.clock.now.offset < .seconds(20))
    }
}
