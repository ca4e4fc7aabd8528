import Foundation
import PostgresNIO
import ResiliencePolicies
import ResiliencePostgreSQL
import ResilienceTesting
import Testing

/// The cluster `.ci/postgres.sh` started, from its `RESILIENCE_PG_*` variables.
enum TestDatabase {
    static let environment = ProcessInfo.processInfo.environment
    static var isConfigured: Bool { environment["RESILIENCE_PG_PORT"] != nil }
    static let skipReason: Comment = "RESILIENCE_PG_PORT is not set: run .ci/postgres.sh to test against PostgreSQL"

    /// The connection to the test cluster, as `username` (the cluster's superuser by default).
    static func connection(username: String? = nil) -> PostgresClient.Configuration {
        var connection = PostgresClient.Configuration(
            host: environment["RESILIENCE_PG_HOST"] ?? "127.0.0.1",
            port: Int(environment["RESILIENCE_PG_PORT"] ?? "") ?? 5432,
            username: username ?? environment["RESILIENCE_PG_USER"] ?? "postgres",
            password: environment["RESILIENCE_PG_PASSWORD"],
            database: environment["RESILIENCE_PG_DATABASE"] ?? "postgres", tls: .disable)
        connection.options.connectTimeout = .seconds(2)
        return connection
    }

    static func configuration(prefix: String = "resilience_test") -> PostgresCoordinationStore.Configuration {
        var configuration = PostgresCoordinationStore.Configuration()
        configuration.tablePrefix = prefix
        return configuration
    }

    /// Runs `body` with a store (on a client of its own) that runs for the duration.
    static func withStore<Result: Sendable>(
        prefix: String = "resilience_test", _ body: (PostgresCoordinationStore) async throws -> Result
    ) async throws -> Result {
        try await withStore(configuration(prefix: prefix), body)
    }

    /// Runs `body` with a store of `configuration`, connected as `username`, that runs for the duration.
    static func withStore<Result: Sendable>(
        _ configuration: PostgresCoordinationStore.Configuration, username: String? = nil,
        _ body: (PostgresCoordinationStore) async throws -> Result
    ) async throws -> Result {
        let store = PostgresCoordinationStore(connection: connection(username: username), configuration: configuration)
        let running = Task { try await store.run() }
        defer { running.cancel() }
        return try await body(store)
    }

    /// Runs `body` with a plain client (for statements a test makes itself) that runs for the duration.
    static func withClient<Result: Sendable>(
        username: String? = nil, _ body: (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(configuration: connection(username: username))
        let running = Task { await client.run() }
        defer { running.cancel() }
        return try await body(client)
    }
}

@Suite("PostgreSQL coordination store", .serialized, .timeLimit(.minutes(3)))
struct PostgresStoreTests {
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func conformsToTheCoordinationStoreContract() async throws {
        try await TestDatabase.withStore { store in
            try await RateCoordinationStoreConformance(advance: { try? await Task.sleep(for: $0) }) { store }.check()
            try await BreakerCoordinationStoreConformance(advance: { try? await Task.sleep(for: $0) }) { store }.check()
        }
    }

    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func migratesOnceAndKeepsOneRowPerKey() async throws {
        try await TestDatabase.withStore(prefix: "resilience_rows") { store in
            try await store.migrate()
            try await store.migrate()
            let quota = SharedRateQuota(permits: 1000, per: .seconds(1), burst: 100)
            let before = try await store.rowCount()
            for _ in 0..<200 {
                _ = try await store.leaseTokens(TokenLeaseRequest(key: "rows-\(before)", count: 1, quota: quota))
            }
            #expect(try await store.rowCount() == before + 1)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await store.sweepExpired() >= 1)
        }
    }

    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func replicasShareOneLimitThroughTheDatabase() async throws {
        try await TestDatabase.withStore { store in
            let key = "shared-\(UInt64.random(in: 0...UInt64.max))"
            var configuration = SharedRateLimiter.Configuration(
                key: key, quota: SharedRateQuota(permits: 20, per: .seconds(1)))
            configuration.failureMode = .failClosed
            let replicas = (0..<3).map { _ in SharedRateLimiter(store: store, configuration) }
            let clock = ResilienceClock.continuous
            let start = clock.now()
            var admissions: [Duration] = []
            while start.duration(to: clock.now()) < .seconds(2) {
                for replica in replicas {
                    if case .admitted = replica.tryAcquire(now: clock.now()) {
                        admissions.append(start.duration(to: clock.now()))
                    }
                }
                try await Task.sleep(for: .milliseconds(2))
            }
            // 2 s at 20/s: at most 41 slots plus grace; the loaded machine may leave a few unused.
            #expect(admissions.count <= 42)
            #expect(admissions.count >= 30)
        }
    }
}

@Suite("PostgreSQL store without a server", .timeLimit(.minutes(1)))
struct PostgresUnavailableTests {
    @Test func aRefusedConnectionIsATypedFailureWithinTheDeadline() async throws {
        var connection = PostgresClient.Configuration(
            host: "127.0.0.1", port: 1, username: "nobody", password: nil, database: "none", tls: .disable)
        connection.options.connectTimeout = .milliseconds(500)
        let store = PostgresCoordinationStore(connection: connection)
        let running = Task { try await store.run() }
        defer { running.cancel() }
        let clock = ContinuousClock()
        let started = clock.now
        await #expect(throws: CoordinationStoreError.self) {
            try await store.breakerRecord(key: "k")
        }
        #expect(started.duration(to: clock.now) < .seconds(10))
        let limiter = SharedRateLimiter(
            store: store, .init(key: "k", quota: SharedRateQuota(permits: 10, per: .seconds(1))))
        _ = limiter.tryAcquire(now: ResilienceClock.continuous.now())
        try await Task.sleep(for: .milliseconds(600))
        #expect(limiter.isDegraded)
    }
}
