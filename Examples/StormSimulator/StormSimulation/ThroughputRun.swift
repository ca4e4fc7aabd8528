import Foundation
import ResilienceKit
import ResilienceTesting

/// How fast the simulator runs (`storm-simulator --throughput`): `clients` clients of 1 request/s each send
/// through `Pipeline.standard` (five stages: total deadline, retry with budget, breaker, limiter, attempt
/// timeout) to a healthy server with 3× headroom for `seconds` virtual seconds, on the deterministic runtime,
/// timed in processor time (`CLOCK_PROCESS_CPUTIME_ID`: fair on a shared machine, since other processes only
/// add wall time).
@available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
public struct ThroughputRun: Sendable {
    /// How many clients, each with its own pipeline.
    public var clients: Int
    /// Virtual seconds the clients send for.
    public var seconds: Int

    /// Creates a run.
    ///
    /// - Parameters:
    ///   - clients: How many clients, each with its own pipeline (≥ 1).
    ///   - seconds: Virtual seconds the clients send for (≥ 1).
    public init(clients: Int = 10_000, seconds: Int = 10) {
        self.clients = max(1, clients)
        self.seconds = max(1, seconds)
    }

    /// What one repetition measured.
    public struct Result: Sendable {
        /// Requests the clients started.
        public var requests: Int
        /// Processor seconds the run took.
        public var processorSeconds: Double
        /// Simulated requests per processor-second.
        public var requestsPerProcessorSecond: Double { Double(requests) / max(processorSeconds, 1e-9) }
    }

    /// Runs once with `seed`.
    public func measure(seed: UInt64) -> Result {
        let offered = Double(clients)
        let run = TrafficRun(
            server: SimulatedServer.Configuration(
                workers: max(1, Int((offered * 3 * 0.1).rounded())), queueLimit: 100_000,
                serviceTime: .exponential(mean: .milliseconds(100)),
                networkDelay: .absoluteNormal(mean: .milliseconds(10), standardDeviation: .milliseconds(2)),
                faults: []),
            offeredPerSecond: offered, duration: .seconds(seconds), ratePerClient: 1)
        let start = Self.processorTime()
        let measurement = run.measure(StrategyCatalog.standard, seed: seed)
        return Result(requests: measurement.totalOffered, processorSeconds: Self.processorTime() - start)
    }

    /// The processor time this process has used, in seconds.
    static func processorTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
