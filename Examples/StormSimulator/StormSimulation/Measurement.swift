/// What one run of one strategy in one scenario with one seed measured, per second and in total.
public struct Measurement: Sendable {
    /// Requests the clients started, per second of their start.
    public var offered: [Int]
    /// Requests that succeeded, per second of their start.
    public var succeeded: [Int]
    /// Requests that reached the server, per second of their arrival.
    public var arrivals: [Int]
    /// Requests that arrived while their client was told to wait (`Retry-After`).
    public var earlyRequests: Int
    /// Requests a client sent after it had received a `Retry-After` that had not passed yet (the early
    /// arrivals minus those already on the wire when the server answered).
    public var sentEarly: Int
    /// The latency of every successful request, in nanoseconds, sorted.
    public var latencies: [Int64]
    /// The attempts that reached the transport below the pipelines, and their failures, by attempt number.
    public var attempts = AttemptCounts()

    /// Requests started in total.
    public var totalOffered: Int { offered.reduce(0, +) }
    /// Requests that succeeded in total.
    public var totalSucceeded: Int { succeeded.reduce(0, +) }
    /// Requests that reached the server in total.
    public var totalArrivals: Int { arrivals.reduce(0, +) }

    /// The share of requests that succeeded.
    public var successRate: Double { totalOffered == 0 ? 0 : Double(totalSucceeded) / Double(totalOffered) }

    /// Server arrivals ÷ requests offered over whole seconds `range`.
    public func loadRatio(_ range: Range<Int>) -> Double {
        let arrived = range.reduce(0) { $0 + (arrivals.indices.contains($1) ? arrivals[$1] : 0) }
        let started = range.reduce(0) { $0 + (offered.indices.contains($1) ? offered[$1] : 0) }
        return started == 0 ? 0 : Double(arrived) / Double(started)
    }

    /// Mean server arrivals per second over `range`.
    public func meanArrivals(_ range: Range<Int>) -> Double {
        let arrived = range.reduce(0) { $0 + (arrivals.indices.contains($1) ? arrivals[$1] : 0) }
        return Double(arrived) / Double(max(range.count, 1))
    }

    /// The share of the requests started in the whole seconds `range` that succeeded (1 when none started).
    public func successRate(_ range: Range<Int>) -> Double {
        let started = range.reduce(0) { $0 + (offered.indices.contains($1) ? offered[$1] : 0) }
        let served = range.reduce(0) { $0 + (succeeded.indices.contains($1) ? succeeded[$1] : 0) }
        return started == 0 ? 1 : Double(served) / Double(started)
    }

    /// The share of the requests started in second `second` that succeeded.
    public func successRate(second: Int) -> Double {
        guard offered.indices.contains(second), offered[second] > 0 else { return 1 }
        return Double(succeeded[second]) / Double(offered[second])
    }

    /// Seconds after `start` until every later second (before `end`) served at least `share` of its
    /// requests; `nil` when that never happened.
    public func recovery(after start: Int, until end: Int, share: Double = 0.95) -> Int? {
        var recovered: Int?
        for second in start..<end {
            if successRate(second: second) >= share {
                if recovered == nil { recovered = second }
            } else {
                recovered = nil
            }
        }
        return recovered.map { $0 - start }
    }

    /// The latency at `quantile` (nearest rank) of the successful requests.
    public func latency(at quantile: Double) -> Duration? {
        guard !latencies.isEmpty else { return nil }
        let rank = Int((quantile * Double(latencies.count)).rounded(.up))
        return .nanoseconds(latencies[min(max(rank, 1), latencies.count) - 1])
    }
}

/// Attempts and their failures by attempt number (1 for first attempts, 2 for first retries, …), over a run.
public struct AttemptCounts: Sendable, Hashable {
    /// Attempts made, indexed by attempt number − 1.
    public private(set) var made: [Int] = []
    /// Attempts that failed, indexed by attempt number − 1.
    public private(set) var failed: [Int] = []

    /// Creates empty counts.
    public init() {}

    /// Counts one attempt of 1-based `number` and whether it failed.
    mutating func record(number: Int, failed isFailure: Bool) {
        let index = max(number, 1) - 1
        while made.count <= index {
            made.append(0)
            failed.append(0)
        }
        made[index] += 1
        if isFailure { failed[index] += 1 }
    }

    /// Attempts of 1-based `number` made.
    public func made(number: Int) -> Int { made.indices.contains(number - 1) ? made[number - 1] : 0 }

    /// Attempts of 1-based `number` that failed.
    public func failed(number: Int) -> Int { failed.indices.contains(number - 1) ? failed[number - 1] : 0 }

    /// Attempts after the first (retries) made.
    public var retries: Int { made.dropFirst().reduce(0, +) }

    /// Retries that succeeded.
    public var successfulRetries: Int { retries - failed.dropFirst().reduce(0, +) }
}
