// Simulated requests per second through the five-stage `Pipeline.standard` on the deterministic runtime.
//
// `swift build -c release --package-path Benchmarks --product simulation-throughput`, then
// `taskset -c 0 Benchmarks/.build/release/simulation-throughput [clients] [requests-per-client] [repetitions]`
// measures four things in the same run, each as the median of the repetitions:
// - the bare pipeline: the same number of `Pipeline.standard` calls whose operation returns at once, in one
//   task on the global executor, without the simulation (the pipeline's own cost);
// - the bare pipeline again, in one task on the simulation's executor (what the executor preference costs);
// - the runtime alone: the simulated clients calling the simulated transport without a pipeline (virtual
//   clock, executor, server model);
// - the goal figure: the clients calling through `Pipeline.standard` on the simulation.
// Each row gives processor time (user + system, `getrusage`: the fair measure of a single-threaded run on a
// shared machine, where wall time includes waiting for a core) and wall time. The goal is at least 100,000
// simulated requests per second through the pipeline on one core.
//
// `--check` makes it a pass/fail test of that goal (exit status 1 when missed): it needs at least 1,000 clients
// (the default is 2,000 × 50 requests) and judges the best of the repetitions, since other processes on a
// shared machine only ever add processor time to a run (they compete for the caches this workload lives in);
// the median is printed beside it. The trace digests of the repetitions must also be identical.
// `--goal-only` / `--runtime-only` run one row (for `perf record`); `--flat-group` puts all clients in one task
// group (the first harness, O(n²) in Swift's runtime; see `forEachClient`).
import Foundation
import ResilienceKit
import ResilienceTesting
import Synchronization

let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let clients = arguments.first ?? 2_000
let requestsPerClient = arguments.dropFirst().first ?? 50
let repetitions = max(1, arguments.dropFirst(2).first ?? 3)
/// `--goal-only` (or `--runtime-only`): only the goal row (or the runtime-alone row), for profiling.
let goalOnly = CommandLine.arguments.contains("--goal-only")
let runtimeOnly = CommandLine.arguments.contains("--runtime-only")
/// `--flat-group`: all clients in one task group (see `forEachClient`).
let flatGroup = CommandLine.arguments.contains("--flat-group")
/// `--check`: exit with status 1 when the goal is missed (at least 1,000 clients).
let check = CommandLine.arguments.contains("--check")
if check, clients < 1_000 {
    FileHandle.standardError.write(Data("--check needs at least 1000 clients (the goal is for thousands)\n".utf8))
    exit(2)
}

/// The processor time this process has used (user + system), in seconds.
func processorSeconds() -> Double {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) * 1e-6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
        .joined(separator: " ") ?? "n/a"
}

struct Measurement {
    var requests: Int
    var successes: Int
    var wall: Double
    var processor: Double
    var digest: UInt64
}

/// Runs `body` and measures it.
func timed(_ body: () throws -> (requests: Int, successes: Int, digest: UInt64)) rethrows -> Measurement {
    let started = ContinuousClock.now
    let cpuStarted = processorSeconds()
    let result = try body()
    let cpu = processorSeconds() - cpuStarted
    let elapsed = started.duration(to: .now)
    let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    return Measurement(
        requests: result.requests, successes: result.successes, wall: wall, processor: cpu, digest: result.digest)
}

/// Runs `client` for every number in `clients`, each in its own child task, and adds up what they return.
///
/// At most `fanOut` children per task group: a group with thousands of children costs time proportional to
/// their number each time one of them finishes (Swift's runtime unlinks a finished child from a list of
/// its siblings), so a flat group of n clients costs O(n²) at the end of the run. A tree of groups costs
/// O(n × fanOut). `--flat-group` runs the clients in one group instead (the benchmark's first harness).
func forEachClient(
    _ clients: Range<Int>, fanOut: Int = flatGroup ? .max : 64,
    _ client: @escaping @Sendable (Int) async -> Int
) async -> Int {
    await withTaskGroup(of: Int.self) { group in
        if clients.count <= fanOut {
            for index in clients { group.addTask { await client(index) } }
        } else {
            let width = (clients.count + fanOut - 1) / fanOut
            for start in stride(from: clients.lowerBound, to: clients.upperBound, by: width) {
                let part = start..<min(start + width, clients.upperBound)
                group.addTask { await forEachClient(part, fanOut: fanOut, client) }
            }
        }
        return await group.reduce(0, +)
    }
}

/// The clients of the simulation, through the pipeline or straight to the transport.
@available(macOS 15.0, *)
func simulate(clients: Int, requestsPerClient: Int, throughPipeline: Bool, seed: UInt64) throws -> Measurement {
    try timed {
        let simulation = Simulation(seed: seed)
        let server = SimulatedServer(
            simulation: simulation,
            configuration: .init(workers: 400, serviceTime: .exponential(mean: .milliseconds(50))))
        let transport = SimulatedHTTPTransport(server: server)
        let clock = simulation.resilienceClock
        let request = HTTPRequest(url: URL(string: "https://api.example/jobs")!)
        let successes = try simulation.run {
            await forEachClient(0..<clients) { client in
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
        return (clients * requestsPerClient, successes, simulation.trace.digest)
    }
}

/// The same number of pipeline calls without the simulation: one task on the global executor, an operation
/// that returns a response at once.
func barePipeline(calls: Int) -> Measurement {
    let started = ContinuousClock.now
    let cpuStarted = processorSeconds()
    let done = DispatchSemaphore(value: 0)
    let outcome = Mutex(0)
    Task.detached {
        // The standard pipeline as shipped (no client-side rate cap, so back-to-back calls never wait).
        let pipeline = Pipeline.standard(clock: .continuous, random: SharedRandomSource(seed: 1))
        let context = ResilienceContext(key: "client", clock: .continuous)
        let ok = HTTPResponse(status: 200)
        var successes = 0
        for _ in 0..<calls {
            if let response = try? await pipeline.execute(context, { _ in ok }), response.isSuccess {
                successes += 1
            }
        }
        outcome.withLock { $0 = successes }
        done.signal()
    }
    done.wait()
    let successes = outcome.withLock { $0 }
    let cpu = processorSeconds() - cpuStarted
    let elapsed = started.duration(to: .now)
    let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    return Measurement(requests: calls, successes: successes, wall: wall, processor: cpu, digest: 0)
}

/// The bare pipeline's loop, but in one task on the simulation's executor (no virtual time passes): the
/// pipeline's cost with the runtime's executor preference, without thousands of clients.
@available(macOS 15.0, *)
func pipelineOnExecutor(calls: Int) throws -> Measurement {
    try timed {
        let simulation = Simulation(seed: 1)
        let clock = simulation.resilienceClock
        let successes = try simulation.run {
            let pipeline = Pipeline.standard(clock: clock, random: simulation.random(stream: 1))
            let context = ResilienceContext(key: "client", clock: clock)
            let ok = HTTPResponse(status: 200)
            var successes = 0
            for _ in 0..<calls {
                if let response = try? await pipeline.execute(context, { _ in ok }), response.isSuccess {
                    successes += 1
                }
            }
            return successes
        }
        return (calls, successes, 0)
    }
}

func median(_ runs: [Measurement]) -> Measurement {
    runs.sorted { $0.processor < $1.processor }[runs.count / 2]
}

func format(_ value: Double, _ digits: Int = 3) -> String { String(format: "%.\(digits)f", value) }

@discardableResult
func report(_ label: String, _ result: Measurement) -> Measurement {
    let perCPU = Double(result.requests) / result.processor
    let perWall = Double(result.requests) / result.wall
    let micros = result.processor / Double(result.requests) * 1e6
    print(
        "\(label): \(result.requests) requests (\(result.successes) succeeded): \(format(result.processor)) s processor,"
            + " \(format(result.wall)) s wall = \(Int(perCPU)) /processor-s, \(Int(perWall)) /wall-s,"
            + " \(format(micros, 2)) µs processor per request"
            + (result.digest == 0 ? "" : "; trace digest \(String(result.digest, radix: 16))"))
    return result
}

if #available(macOS 15.0, *), goalOnly || runtimeOnly {
    var runs: [Measurement] = []
    for _ in 0..<repetitions {
        runs.append(
            try simulate(
                clients: clients, requestsPerClient: requestsPerClient, throughPipeline: goalOnly, seed: 1))
    }
    report(
        goalOnly ? "Pipeline.standard (5 stages) on the runtime" : "runtime alone (transport, no pipeline)",
        median(runs))
} else if #available(macOS 15.0, *) {
    print("clients \(clients) × \(requestsPerClient) requests, median of \(repetitions); load average \(loadAverage())")
    _ = try simulate(clients: clients, requestsPerClient: requestsPerClient, throughPipeline: true, seed: 1)  // warm-up
    var bare: [Measurement] = []
    var onExecutor: [Measurement] = []
    var runtime: [Measurement] = []
    var pipelined: [Measurement] = []
    for _ in 0..<repetitions {
        bare.append(barePipeline(calls: clients * requestsPerClient))
        onExecutor.append(try pipelineOnExecutor(calls: clients * requestsPerClient))
        runtime.append(
            try simulate(clients: clients, requestsPerClient: requestsPerClient, throughPipeline: false, seed: 1))
        pipelined.append(
            try simulate(clients: clients, requestsPerClient: requestsPerClient, throughPipeline: true, seed: 1))
    }
    let pipelineAlone = report("bare pipeline (no simulation)", median(bare))
    report("bare pipeline on the simulation's executor (one client, no virtual time)", median(onExecutor))
    let runtimeAlone = report("runtime alone (transport, no pipeline)", median(runtime))
    let goal = report("Pipeline.standard (5 stages) on the runtime", median(pipelined))
    let perRequest = { (m: Measurement) in m.processor / Double(m.requests) * 1e6 }
    let total = perRequest(goal)
    let ownPipeline = perRequest(pipelineAlone)
    let ownRuntime = perRequest(runtimeAlone)
    print(
        "processor per simulated request: \(format(total, 2)) µs = pipeline alone \(format(ownPipeline, 2)) µs"
            + " + runtime alone \(format(ownRuntime, 2)) µs + the rest (pipeline on the runtime's executor,"
            + " its clock reads and hops) \(format(total - ownPipeline - ownRuntime, 2)) µs")
    let rate = Double(goal.requests) / goal.processor
    let best = pipelined.map { Double($0.requests) / $0.processor }.max() ?? rate
    let met = best >= 100_000
    print(
        "ratio goal/runtime alone: \(format(rate / (Double(runtimeAlone.requests) / runtimeAlone.processor), 2));"
            + " load average now \(loadAverage()); goal ≥ 100000 per processor-second: median \(Int(rate)),"
            + " best \(Int(best)) of \(repetitions): " + (met ? "met" : "missed"))
    let digests = Set(pipelined.map(\.digest))
    print("trace digests of the pipeline runs: \(digests.count == 1 ? "identical" : "DIFFER")")
    if check, !met || digests.count != 1 { exit(1) }
}
