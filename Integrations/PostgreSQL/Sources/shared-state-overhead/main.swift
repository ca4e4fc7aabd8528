// shared-state-overhead: what shared limiting costs on the hot path and per store call.
//
// (a) `SharedRateLimiter.tryAcquire(now:)` with a leased batch available, on the in-memory store and on
//     PostgreSQL, against a plain `TokenBucketLimiter` in the same run (the baseline): per-call p50/p99 and
//     the ratio of the p50s. Calls that start a background lease are timed separately.
// (b) One decision (`leaseTokens`, one statement) round trip to PostgreSQL: p50/p99.
// (c) One breaker compare-and-set (`updateBreaker`: a sequence value, the row, the change notification) and one
//     breaker read, from the database and from memory while breaker notifications are live.
//
//   .ci/postgres.sh swift run -c release --package-path Integrations/PostgreSQL \
//       --scratch-path .build-integrations shared-state-overhead
//
// OVERHEAD_RATE_TABLE=unlogged (or logged) sets the rate table's persistence first; PG_FSYNC=on in
// .ci/postgres.sh starts the cluster with fsync and synchronous commit on (the production setting).
//
// Without the RESILIENCE_PG_* variables .ci/postgres.sh sets, only the in-memory part runs.
import Foundation
import PostgresNIO
import ResiliencePolicies
import ResiliencePostgreSQL

let environment = ProcessInfo.processInfo.environment
let batch = 64
let rounds = 400
let decisions = Int(environment["OVERHEAD_DECISIONS"] ?? "") ?? 2000
let clock = ResilienceClock.continuous
let timer = ContinuousClock()

struct OverheadError: Error, CustomStringConvertible {
    let description: String
}

func nanoseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
}

struct Samples {
    var values: [Double] = []

    func percentile(_ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
    }

    var p50: Double { percentile(0.50) }
    var p99: Double { percentile(0.99) }

    func line(_ label: String, unit: Double = 1, suffix: String = "ns") -> String {
        let p50 = String(format: "%.0f", percentile(0.50) / unit)
        let p99 = String(format: "%.0f", percentile(0.99) / unit)
        return "\(label.padding(toLength: 52, withPad: " ", startingAt: 0)) p50 \(p50) \(suffix)  p99 \(p99) \(suffix)"
            + "  (n = \(values.count))"
    }
}

/// Times one admission; fails unless it was admitted.
func timedAdmit(_ limiter: any RateLimiter) throws -> Double {
    let start = timer.now
    let decision = limiter.tryAcquire(now: clock.now())
    let elapsed = start.duration(to: timer.now)
    guard case .admitted = decision else { throw OverheadError(description: "not admitted: \(decision)") }
    return nanoseconds(elapsed)
}

/// The plain token bucket, full enough for every call.
func measureBaseline() throws -> Samples {
    var configuration = TokenBucketLimiter.Configuration()
    configuration.burst = rounds * batch
    configuration.refillPerSecond = 1_000_000
    let limiter = TokenBucketLimiter(configuration)
    var samples = Samples()
    for _ in 0..<(rounds * (batch / 2 - 1)) { samples.values.append(try timedAdmit(limiter)) }
    return samples
}

/// A shared limiter whose slots are all due; each round times the admissions that find the batch more than
/// half full (no store work), then the one that starts a background lease, then waits for the lease.
func measureShared(store: any CoordinationStore, key: String) async throws -> (admit: Samples, leasing: Samples) {
    var configuration = SharedRateLimiter.Configuration(
        key: key, quota: SharedRateQuota(permits: 1_000_000, per: .seconds(1)))
    configuration.batchSize = batch
    configuration.horizon = .seconds(1)
    configuration.slotGrace = .seconds(60)
    configuration.storeDeadline = .seconds(5)
    let limiter = SharedRateLimiter(store: store, configuration)
    _ = limiter.tryAcquire(now: clock.now())
    var admit = Samples()
    var leasing = Samples()
    for _ in 0..<rounds {
        let waitStart = timer.now
        while limiter.leasedSlots(now: clock.now()) < batch - 1 {
            guard waitStart.duration(to: timer.now) < .seconds(10) else {
                throw OverheadError(description: "the store did not lease a batch within 10 s")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        try await Task.sleep(for: .milliseconds(1))  // every leased slot (≤ 64 µs ahead) is due
        while limiter.leasedSlots(now: clock.now()) > batch / 2 {
            admit.values.append(try timedAdmit(limiter))
        }
        leasing.values.append(try timedAdmit(limiter))
    }
    return (admit, leasing)
}

let port = environment["RESILIENCE_PG_PORT"].flatMap { Int($0) }

func connectionConfiguration(port: Int) -> PostgresClient.Configuration {
    PostgresClient.Configuration(
        host: environment["RESILIENCE_PG_HOST"] ?? "127.0.0.1", port: port,
        username: environment["RESILIENCE_PG_USER"] ?? "postgres", password: environment["RESILIENCE_PG_PASSWORD"],
        database: environment["RESILIENCE_PG_DATABASE"] ?? "postgres", tls: .disable)
}

func postgresStore() -> PostgresCoordinationStore? {
    guard let port else { return nil }
    let connection = connectionConfiguration(port: port)
    var configuration = PostgresCoordinationStore.Configuration()
    configuration.tablePrefix = "resilience_overhead"
    if let unlogged = environment["OVERHEAD_RATE_TABLE"] { configuration.rateTableUnlogged = unlogged == "unlogged" }
    return PostgresCoordinationStore(connection: connection, configuration: configuration)
}

/// One `leaseTokens` call per sample, each a single statement on the database.
func measureDecisions(_ store: PostgresCoordinationStore) async throws -> Samples {
    try await store.migrate()
    let quota = SharedRateQuota(permits: 1_000_000, per: .seconds(1), burst: 1000)
    let request = TokenLeaseRequest(key: "overhead-decisions", count: 1, quota: quota)
    for _ in 0..<50 { _ = try await store.leaseTokens(request) }  // warm the connection
    var samples = Samples()
    for _ in 0..<decisions {
        let start = timer.now
        let lease = try await store.leaseTokens(request)
        samples.values.append(nanoseconds(start.duration(to: timer.now)))
        guard lease.granted == 1 else { throw OverheadError(description: "decision not granted: \(lease)") }
    }
    return samples
}

/// `updateBreaker` compare-and-sets in a chain (each on the version the previous one stored).
func measureBreakerWrites(_ store: PostgresCoordinationStore) async throws -> Samples {
    let key = "overhead-breaker-\(UInt32.random(in: 0...UInt32.max))"
    var version: UInt64 = 0
    var samples = Samples()
    for index in 0..<(decisions / 4 + 20) {
        let update = BreakerRecordUpdate(
            key: key, expectedVersion: version, state: .closed, trips: 0, timeToLive: .seconds(60))
        let start = timer.now
        let result = try await store.updateBreaker(update)
        if index >= 20 { samples.values.append(nanoseconds(start.duration(to: timer.now))) }
        guard case .applied(let record) = result else { throw OverheadError(description: "conflict: \(result)") }
        version = record.version
    }
    return samples
}

/// `breakerRecord` reads of one key; from memory when the store listens for breaker changes.
func measureBreakerReads(_ store: PostgresCoordinationStore) async throws -> Samples {
    let key = "overhead-read"
    var samples = Samples()
    for index in 0..<(decisions + 20) {
        let start = timer.now
        _ = try await store.breakerRecord(key: key)
        if index >= 20 { samples.values.append(nanoseconds(start.duration(to: timer.now))) }
    }
    return samples
}

func ratio(_ shared: Samples, _ baseline: Samples) -> String {
    String(format: "%.2f×", shared.p50 / baseline.p50)
}

var emptyTimer = Samples()
for _ in 0..<10_000 {
    let start = timer.now
    emptyTimer.values.append(nanoseconds(start.duration(to: timer.now)))
}
print(emptyTimer.line("timer alone (included in every sample below)"))
let baseline = try measureBaseline()
print(baseline.line("TokenBucketLimiter.tryAcquire (baseline)"))
let memory = try await measureShared(store: InMemoryCoordinationStore(), key: "overhead-memory")
print(memory.admit.line("SharedRateLimiter admit, in-memory store") + "  p50 ratio \(ratio(memory.admit, baseline))")
print(memory.leasing.line("  … admit that starts a background lease"))
var goals = [("shared admit p50 ≤ 2 µs (in-memory store)", memory.admit.p50 <= 2000)]

if let store = postgresStore(), let port {
    let running = Task { try await store.run() }
    let postgres = try await measureShared(store: store, key: "overhead-\(UInt32.random(in: 0...UInt32.max))")
    print(
        postgres.admit.line("SharedRateLimiter admit, PostgreSQL store")
            + "  p50 ratio \(ratio(postgres.admit, baseline))")
    print(postgres.leasing.line("  … admit that starts a background lease"))
    let roundTrip = try await measureDecisions(store)
    print(roundTrip.line("PostgreSQL decision round trip (leaseTokens)", unit: 1000, suffix: "µs"))
    let writes = try await measureBreakerWrites(store)
    print(writes.line("PostgreSQL breaker compare-and-set (updateBreaker)", unit: 1000, suffix: "µs"))
    var listening = 0
    while !store.isListeningForBreakerChanges && listening < 500 {
        try await Task.sleep(for: .milliseconds(10))
        listening += 1
    }
    let cachedReads = try await measureBreakerReads(store)
    print(cachedReads.line("breakerRecord, notifications live (from memory)", unit: 1000, suffix: "µs"))
    goals.append(("shared admit p50 ≤ 2 µs (PostgreSQL store)", postgres.admit.p50 <= 2000))
    running.cancel()
    var polling = PostgresCoordinationStore.Configuration()
    polling.tablePrefix = "resilience_overhead"
    polling.listensForBreakerChanges = false
    polling.createsSchema = false
    let pollingStore = PostgresCoordinationStore(
        connection: connectionConfiguration(port: port), configuration: polling)
    let pollingRun = Task { try await pollingStore.run() }
    let databaseReads = try await measureBreakerReads(pollingStore)
    print(databaseReads.line("breakerRecord, no notifications (one SELECT)", unit: 1000, suffix: "µs"))
    pollingRun.cancel()
} else {
    print("RESILIENCE_PG_PORT is not set: PostgreSQL not measured (run through .ci/postgres.sh)")
}
for (goal, met) in goals { print("\(met ? "PASS" : "FAIL")  \(goal)") }
if goals.contains(where: { !$0.1 }) { exit(1) }
