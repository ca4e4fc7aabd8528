// Simulated requests per second through the five-stage `Pipeline.standard` on the deterministic runtime.
//
// `swift run -c release --package-path Benchmarks simulation-throughput [clients] [requests-per-client]`
// prints the wall-clock throughput of the simulation (one core: the runtime is single-threaded) and, as a
// baseline from the same run, the throughput of the same clients calling the simulated transport without a
// pipeline. The goal is at least 100,000 simulated requests per second through the pipeline.
import Foundation
import ResilienceKit
import ResilienceTesting

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let clients = arguments.first ?? 2_000
let requestsPerClient = arguments.dropFirst().first ?? 50

/// The processor time this process has used (user + system), in seconds: the fair measure of a
/// single-threaded run on a shared machine, where wall time includes waiting for a core.
func processorSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) * 1e-6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Runs one simulation and returns (requests, successes, wall seconds, processor seconds, trace digest).
@available(macOS 15.0, *)
func measure(
    clients: Int, requestsPerClient: Int, throughPipeline: Bool, seed: UInt64
) throws -> (Int, Int, Double, Double, UInt64) {
    let simulation = Simulation(seed: seed)
    let server = SimulatedServer(
        simulation: simulation,
        configuration: .init(workers: 400, serviceTime: .exponential(mean: .milliseconds(50))))
    let transport = SimulatedHTTPTransport(server: server)
    let clock = simulation.resilienceClock
    let request = HTTPRequest(url: URL(string: "https://api.example/jobs")!)
    let started = ContinuousClock.now
    let cpuStarted = processorSeconds()
    let successes = try simulation.run {
        await withTaskGroup(of: Int.self) { group in
            for client in 0..<clients {
                group.addTask {
                    let pipeline = Pipeline.standard(clock: clock, random: simulation.random(stream: UInt64(client)))
                    var generator = simulation.generator(stream: 1_000_000 + UInt64(client))
                    let context = ResilienceContext(key: "client", clock: clock)
                    var successes = 0
                    for _ in 0..<requestsPerClient {
                        try? await simulation.clock.sleep(
                            for: LatencyDistribution.exponential(mean: .seconds(1)).sample(using: &generator))
                        let response: HTTPResponse?
                        if throughPipeline {
                            response = try? await pipeline.execute(context) { attempt in
                                try await transport.send(request, context: attempt)
                            }
                        } else {
                            response = try? await transport.send(request, context: context)
                        }
                        if response?.isSuccess == true { successes += 1 }
                    }
                    return successes
                }
            }
            return await group.reduce(0, +)
        }
    }
    let elapsed = started.duration(to: .now)
    let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    return (clients * requestsPerClient, successes, wall, processorSeconds() - cpuStarted, simulation.trace.digest)
}

func report(_ label: String, _ result: (Int, Int, Double, Double, UInt64)) -> Double {
    let rate = Double(result.0) / result.3
    print(
        "\(label): \(result.0) requests (\(result.1) succeeded) in \(String(format: "%.3f", result.3)) s of processor"
            + " time (\(String(format: "%.3f", result.2)) s wall) = \(Int(rate)) simulated requests per processor-second;"
            + " trace digest \(String(result.4, radix: 16))")
    return rate
}

if #available(macOS 15.0, *) {
    _ = try measure(clients: clients, requestsPerClient: requestsPerClient, throughPipeline: true, seed: 1)  // warm-up
    let baseline = report(
        "transport only (baseline)",
        try measure(clients: clients, requestsPerClient: requestsPerClient, throughPipeline: false, seed: 1))
    let pipelined = report(
        "Pipeline.standard (5 stages)",
        try measure(clients: clients, requestsPerClient: requestsPerClient, throughPipeline: true, seed: 1))
    print(
        "ratio pipeline/baseline: \(String(format: "%.2f", pipelined / baseline)); goal ≥ 100000/s: "
            + (pipelined >= 100_000 ? "met" : "missed"))
}
