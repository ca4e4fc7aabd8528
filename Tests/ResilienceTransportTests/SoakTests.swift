import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

/// 2,000 requests through URLSessionTransport + a 3-attempt retry against FaultServer's seeded chaos
/// (10 % transient faults: resets, 503s, stalls). Success must be within 0.5 points of 1 − 0.1³.
///
/// The attempt timeout is what turns a stall (a request never answered) into a retry. It is 1 s, far above a
/// healthy loopback answer even on a loaded 2-core machine, so only the server's faults fail attempts, not a
/// healthy answer that a busy machine delayed.
@Suite("Soak over FaultServer")
struct SoakTests {
    @Test("2,000 requests with 10 % transient faults succeed at ≈ 99.9 %")
    func soak() async throws {
        var configuration = FaultServerConfiguration()
        configuration.seed = 2_026
        let server = try FaultServer(configuration: configuration)
        defer { server.stop() }
        server.script("/jobs", .chaos(.transient(probability: 0.1)))
        let pipeline = TestOnlyRetryPipeline(maximumAttempts: 3, attemptTimeout: .seconds(1))
        var transportConfiguration = URLSessionTransportConfiguration()
        transportConfiguration.maximumConnectionsPerHost = 32
        let transport = ResilientTransport(wrapping: URLSessionTransport(configuration: transportConfiguration)) { _ in
            pipeline
        }
        let url = server.url("/jobs")
        let total = 2_000
        let concurrency = 16
        let started = ContinuousClock.now
        let succeeded = await withTaskGroup(of: Bool.self) { group in
            var launched = 0
            var successes = 0
            func launch() {
                group.addTask {
                    let context = ResilienceContext(key: "soak", clock: .continuous)
                    return (try? await transport.send(HTTPRequest(url: url), context: context).status) == 200
                }
                launched += 1
            }
            while launched < min(concurrency, total) { launch() }
            for await success in group {
                if success { successes += 1 }
                if launched < total { launch() }
            }
            return successes
        }
        let rate = Double(succeeded) / Double(total)
        let elapsed = ContinuousClock.now - started
        let served = server.requestCount
        print("soak: \(succeeded)/\(total) succeeded (\(rate * 100) %), \(served) requests served, \(elapsed)")
        #expect(abs(rate - 0.999) <= 0.005)
        #expect(served >= total + total / 20)
        #expect(served <= total + total / 5)
        // FoundationNetworking (curl) silently resends a request once when a reused keep-alive connection
        // dies before any response byte, so the server may see more requests than the pipeline made attempts.
        #expect(served >= pipeline.attempts.value)
    }
}
