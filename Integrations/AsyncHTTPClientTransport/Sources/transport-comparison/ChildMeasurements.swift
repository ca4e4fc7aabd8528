import Foundation
import ResilienceTransport

/// What one child process measures for one transport; each returns numbers for a JSON line.
enum ChildMeasurements {
    /// The process's peak resident set (VmHWM) in kB, from /proc.
    static func peakResidentKilobytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Double(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    static func context(timeout: Duration) -> ResilienceContext {
        ResilienceContext(
            key: "comparison", deadline: ResilienceClock.continuous.now().advanced(by: timeout),
            classifier: TransportErrorClassifier.standard)
    }

    static func code(of error: any Error) -> Double {
        let code = (error as? TransportError)?.code.rawValue ?? "NET_999"
        return Double(code.dropFirst(4)) ?? 999
    }

    /// Warm up (one small request), then the bomb: baseline and peak VmHWM, outcome and time.
    static func bomb(_ kind: TransportKind, url: URL) async -> [String: Double] {
        let (transport, close) = kind.make()
        let warm = url.deletingLastPathComponent().appendingPathComponent("warm")
        _ = try? await transport.send(HTTPRequest(url: warm), context: context(timeout: .seconds(10)))
        let baseline = peakResidentKilobytes()
        let started = ContinuousClock.now
        var tooLarge = 0.0
        do {
            _ = try await transport.send(HTTPRequest(url: url), context: context(timeout: .seconds(60)))
        } catch {
            tooLarge = (error as? TransportError)?.code == .responseTooLarge ? 1 : 0
        }
        let elapsed = ContinuousClock.now - started
        let peak = peakResidentKilobytes()
        await close()
        return [
            "baselineKB": baseline, "peakKB": peak, "tooLarge": tooLarge,
            "milliseconds": Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15,
        ]
    }

    /// `requests` GETs, `concurrency` at a time, after a warm-up round: throughput and latency percentiles.
    static func load(_ kind: TransportKind, url: URL, requests: Int, concurrency: Int) async -> [String: Double] {
        let (transport, close) = kind.make()
        _ = await run(transport, url: url, requests: concurrency, concurrency: concurrency)
        let started = ContinuousClock.now
        let (latencies, errors) = await run(transport, url: url, requests: requests, concurrency: concurrency)
        let elapsed = ContinuousClock.now - started
        await close()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
        }
        return [
            "requestsPerSecond": Double(latencies.count) / seconds, "p50Milliseconds": percentile(0.50),
            "p99Milliseconds": percentile(0.99), "errors": Double(errors),
        ]
    }

    private static func run(
        _ transport: any HTTPTransport, url: URL, requests: Int, concurrency: Int
    ) async -> ([Double], Int) {
        await withTaskGroup(of: ([Double], Int).self) { group in
            for worker in 0..<concurrency {
                let share = requests / concurrency + (worker < requests % concurrency ? 1 : 0)
                group.addTask {
                    var latencies: [Double] = []
                    var errors = 0
                    latencies.reserveCapacity(share)
                    for _ in 0..<share {
                        let start = ContinuousClock.now
                        do {
                            let response = try await transport.send(
                                HTTPRequest(url: url), context: context(timeout: .seconds(30)))
                            if response.status != 200 { errors += 1 }
                            let taken = ContinuousClock.now - start
                            latencies.append(
                                Double(taken.components.seconds) * 1000 + Double(taken.components.attoseconds) / 1e15)
                        } catch {
                            errors += 1
                        }
                    }
                    return (latencies, errors)
                }
            }
            var all: [Double] = []
            var errors = 0
            for await (latencies, failed) in group {
                all += latencies
                errors += failed
            }
            return (all, errors)
        }
    }

    /// Two POSTs on one keep-alive connection; the server resets the second after reading it.
    static func resetPost(_ kind: TransportKind, url: URL) async -> [String: Double] {
        let (transport, close) = kind.make()
        let body = Data(#"{"title":"keep-alive"}"#.utf8)
        let request = HTTPRequest(method: .post, url: url, body: body)
        _ = try? await transport.send(request, context: context(timeout: .seconds(3)))
        let started = ContinuousClock.now
        var code = 0.0
        do {
            _ = try await transport.send(request, context: context(timeout: .seconds(3)))
        } catch {
            code = Self.code(of: error)
        }
        let elapsed = ContinuousClock.now - started
        await close()
        return [
            "code": code,
            "milliseconds": Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15,
        ]
    }
}
