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

    /// Keys are bound as parameters, so quotes and any printable text are plain data; a key or holder the
    /// server cannot hold (a NUL character; a key longer than the primary key's index entry allows) is refused
    /// as an invalid request before the database is asked, not reported as the store being unavailable (which
    /// would make the shared policies follow their failure mode on every call for that key, for ever).
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func hostileKeysArePlainDataOrInvalidRequests() async throws {
        try await TestDatabase.withStore(prefix: freshPrefix("keys")) { store in
            try await store.migrate()
            let quota = SharedRateQuota(permits: 10, per: .seconds(1))
            // Printable but not compressible, so the index holds it as it is.
            func noise(_ length: Int) -> String {
                String((0..<length).map { _ in Character(UnicodeScalar(UInt8.random(in: 33...126))) })
            }
            let longest = noise(PostgresCoordinationStore.maximumKeyLength)
            for key in ["it's \"quoted\"; DROP TABLE x; --", "e\u{301}\u{202E}\u{FEFF}", longest] {
                #expect(try await store.leaseTokens(TokenLeaseRequest(key: key, count: 1, quota: quota)).granted == 1)
                let update = BreakerRecordUpdate(
                    key: key, expectedVersion: 0, state: .open, openFor: .zero, timeToLive: .seconds(60))
                guard case .applied(let record) = try await store.updateBreaker(update) else {
                    Issue.record("the first write of \(key.prefix(20)) should apply")
                    continue
                }
                #expect(try await store.breakerRecord(key: key)?.version == record.version)
                #expect(try await store.acquireProbe(key: key, holder: "h'1", ttl: .seconds(5)).granted)
                try await store.releaseProbe(key: key, holder: "h'1")
            }
            let rows = try await store.rowCount()
            let refused = [
                ("a NUL", "nul\u{0}key"), ("10 KB", noise(10_000)),
                ("one byte too long", noise(PostgresCoordinationStore.maximumKeyLength - 1) + "é"),
            ]
            for (what, key) in refused {
                let calls: [(String, () async throws -> Void)] = [
                    (
                        "leaseTokens",
                        { _ = try await store.leaseTokens(TokenLeaseRequest(key: key, count: 1, quota: quota)) }
                    ),
                    ("breakerRecord", { _ = try await store.breakerRecord(key: key) }),
                    (
                        "updateBreaker",
                        {
                            _ = try await store.updateBreaker(
                                BreakerRecordUpdate(
                                    key: key, expectedVersion: 0, state: .closed, timeToLive: .seconds(9)))
                        }
                    ),
                    ("acquireProbe", { _ = try await store.acquireProbe(key: key, holder: "h", ttl: .seconds(1)) }),
                    ("releaseProbe", { try await store.releaseProbe(key: key, holder: "h") }),
                ]
                for (name, call) in calls {
                    #expect(await Self.invalidRequest(call), "\(name) with a key of \(what)")
                }
            }
            #expect(
                await Self.invalidRequest {
                    _ = try await store.acquireProbe(key: "k", holder: "h\u{0}", ttl: .seconds(1))
                })
            #expect(await Self.invalidRequest { try await store.releaseProbe(key: "k", holder: "h\u{0}") })
            #expect(try await store.rowCount() == rows, "nothing stored for a refused request")
            #expect(store.lastError == nil, "\(String(describing: store.lastError))")
        }
    }

    /// A valid quota or horizon far beyond any real schedule (a burst of `Int.max`, a horizon of centuries) is
    /// leased like any other, never an arithmetic overflow in the process or in the statement.
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func extremeQuotasAndHorizonsAreLeasedWithoutOverflow() async throws {
        try await TestDatabase.withStore(prefix: freshPrefix("extreme")) { store in
            try await store.migrate()
            let quotas = [
                SharedRateQuota(permits: 1, per: .seconds(1), burst: .max),
                SharedRateQuota(permits: 1, per: .seconds(Int64.max), burst: 3),
                SharedRateQuota(permits: .max, per: .seconds(Int64.max), burst: .max),
            ]
            for (index, quota) in quotas.enumerated() {
                for horizon in [Duration.zero, .seconds(Int64.max)] {
                    let request = TokenLeaseRequest(
                        key: "extreme-\(index)", count: .max, quota: quota, horizon: horizon)
                    let lease = try await store.leaseTokens(request)
                    #expect(lease.granted >= 1, "\(quota), horizon \(horizon): \(lease)")
                    #expect(lease.retryAfter == .zero)
                }
            }
            #expect(store.lastError == nil, "\(String(describing: store.lastError))")
        }
    }

    /// Whether `call` throws ``CoordinationStoreError/invalidRequest(_:)``.
    static func invalidRequest(_ call: () async throws -> Void) async -> Bool {
        do {
            try await call()
            return false
        } catch {
            if case .invalidRequest = error as? CoordinationStoreError { return true }
            Issue.record("threw \(error)")
            return false
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
