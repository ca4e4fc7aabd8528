import Foundation
import PostgresNIO
import ResiliencePostgreSQL
import ResilienceTesting
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// A table prefix no other test uses (`[a-z_]` only).
func freshPrefix(_ name: String) -> String {
    "resilience_\(name)_" + String((0..<8).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement()! })
}

/// Waits, polling every 10 ms, until `condition` holds or `limit` passes; returns whether it held.
func eventually(within limit: Duration, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: limit)
    while clock.now < end {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

/// What `run()` threw; it is cancelled after `limit` (and then throws nothing).
func runOutcome(of store: PostgresCoordinationStore, within limit: Duration) async -> (any Error)? {
    let running = Task { () -> (any Error)? in
        do {
            try await store.run()
            return nil
        } catch {
            return error
        }
    }
    let stopper = Task {
        try? await Task.sleep(for: limit)
        running.cancel()
    }
    defer { stopper.cancel() }
    return await running.value
}

@Suite("The schema as SQL files")
struct PostgresSchemaFileTests {
    static let schemaDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Schema")

    static func file(_ name: String) throws -> String {
        try String(contentsOf: schemaDirectory.appendingPathComponent(name), encoding: .utf8)
    }

    @Test func theShippedFilesAreTheSQLTheStoreRuns() throws {
        let schema = PostgresCoordinationSchema()
        #expect(try Self.file("001-tables.sql") == schema.migration(to: 1))
        #expect(try Self.file("002-expiry-indexes-and-breaker-notifications.sql") == schema.migration(to: 2))
        #expect(try Self.file("grants.sql") == schema.grants)
        #expect(try Self.file("optional-unlogged-rate-table.sql") == schema.rateTablePersistence(unlogged: true))
        #expect(schema.migration(to: PostgresCoordinationSchema.currentVersion + 1) == nil)
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.schemaDirectory.path).filter {
            $0.first?.isNumber == true
        }
        #expect(files.count == PostgresCoordinationSchema.currentVersion)
    }

    @Test func aPrefixKeepsOnlyLowercaseLettersAndUnderscores() {
        #expect(PostgresCoordinationSchema(prefix: "App_1; DROP").prefix == "pp_")
        #expect(PostgresCoordinationSchema(prefix: "123").prefix == "resilience_coordination")
    }
}

@Suite("PostgreSQL store operation", .serialized, .timeLimit(.minutes(3)))
struct PostgresOperationTests {
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func theSQLFilesMakeAWorkingSchemaWithoutRunTimeDDL() async throws {
        // What a migration tool does: apply each file in order; then a store with DDL off works.
        let prefix = "resilience_coordination"
        try await TestDatabase.withClient { client in
            let schema = PostgresCoordinationSchema(prefix: prefix)
            for version in 1...PostgresCoordinationSchema.currentVersion {
                let sql = try #require(schema.migration(to: version))
                try await client.withConnection { connection in
                    _ = try await connection.query(PostgresQuery(unsafeSQL: "BEGIN"), logger: connection.logger)
                    for statement in Self.statements(sql) {
                        _ = try await connection.query(PostgresQuery(unsafeSQL: statement), logger: connection.logger)
                    }
                    _ = try await connection.query(PostgresQuery(unsafeSQL: "COMMIT"), logger: connection.logger)
                }
            }
        }
        var configuration = TestDatabase.configuration(prefix: prefix)
        configuration.createsSchema = false
        try await TestDatabase.withStore(configuration) { store in
            try await store.migrate()
            let update = BreakerRecordUpdate(key: "files", expectedVersion: 0, state: .closed, timeToLive: .seconds(5))
            _ = try await store.updateBreaker(update)
            #expect(try await store.breakerRecord(key: "files") != nil)
        }
    }

    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aMissingTableWithDDLSkippedFailsLoudly() async throws {
        var configuration = TestDatabase.configuration(prefix: freshPrefix("missing"))
        configuration.createsSchema = false
        let thrown = try await TestDatabase.withClient { client in
            // The application's client, which the application runs: calls work before the store's run().
            let store = PostgresCoordinationStore(client: client, configuration: configuration)
            await #expect(throws: CoordinationStoreError.self) { _ = try await Self.calledWithoutRun(store) }
            #expect(store.lastError?.code == .schemaMissing)
            return await runOutcome(of: store, within: .seconds(5)).map { $0 as? PostgresStoreError }
        }
        let error = try #require(thrown ?? nil, "run() did not throw a PostgresStoreError")
        #expect(error.code == .schemaMissing)
        #expect(error.isConfigurationError)
        #expect(error.message.contains("Schema/*.sql"))
    }

    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aRoleWithoutPrivilegesFailsLoudlyAndTheGrantsFileFixesIt() async throws {
        let prefix = freshPrefix("grants")
        let role = "resilience_unprivileged"
        try await TestDatabase.withStore(prefix: prefix) { owner in try await owner.migrate() }
        try await TestDatabase.withClient { client in
            _ = try await client.query(
                PostgresQuery(
                    unsafeSQL: """
                        DO $$ BEGIN CREATE ROLE \(role) LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$
                        """))
        }
        var configuration = TestDatabase.configuration(prefix: prefix)
        configuration.createsSchema = false
        let refused = PostgresCoordinationStore(
            connection: TestDatabase.connection(username: role), configuration: configuration)
        let thrown = await runOutcome(of: refused, within: .seconds(5))
        let error = try #require(
            thrown as? PostgresStoreError, "run() did not throw a PostgresStoreError: \(thrown as Any)")
        #expect(error.code == .insufficientPrivilege)

        // With run-time DDL the role lacks CREATE as well (PostgreSQL 15 revokes it on `public`), or the tables
        // belong to another role: either way a typed privilege error, never "unavailable".
        try await TestDatabase.withClient(username: role) { client in
            let withDDL = PostgresCoordinationStore(
                client: client, configuration: TestDatabase.configuration(prefix: prefix))
            await #expect(throws: CoordinationStoreError.self) { _ = try await Self.calledWithoutRun(withDDL) }
            #expect(withDDL.lastError?.code == .insufficientPrivilege)
        }

        let grants = PostgresCoordinationSchema(prefix: prefix).grants.replacingOccurrences(
            of: ":\"app_role\"", with: role)
        try await TestDatabase.withClient { client in
            for statement in Self.statements(grants) { _ = try await client.query(PostgresQuery(unsafeSQL: statement)) }
        }
        try await TestDatabase.withStore(configuration, username: role) { granted in
            try await granted.migrate()
            #expect(try await granted.breakerRecord(key: "granted") == nil)
        }
    }

    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aSerializationFailureIsRetriedThenSurfaced() async throws {
        let prefix = freshPrefix("serial")
        try await TestDatabase.withStore(prefix: prefix) { owner in try await owner.migrate() }
        let quota = SharedRateQuota(permits: 1000, per: .seconds(1), burst: 1000)
        let request = TokenLeaseRequest(key: "serial", count: 1, quota: quota)
        for retries in [0, 3] {
            var connection = TestDatabase.connection()
            connection.options.additionalStartupParameters = [("default_transaction_isolation", "repeatable read")]
            var configuration = TestDatabase.configuration(prefix: prefix)
            configuration.serializationRetries = retries
            let store = PostgresCoordinationStore(connection: connection, configuration: configuration)
            let running = Task { try await store.run() }
            defer { running.cancel() }
            _ = try await store.leaseTokens(request)
            // Another transaction updates the row; the store's statement waits for its lock, then (repeatable
            // read) fails to serialize when it commits.
            let result = try await TestDatabase.withClient { client in
                try await client.withConnection { connection in
                    _ = try await connection.query("BEGIN", logger: connection.logger)
                    _ = try await connection.query(
                        PostgresQuery(
                            unsafeSQL: "UPDATE \(prefix)_rate SET decided_us = decided_us WHERE key = 'serial'"),
                        logger: connection.logger)
                    let lease = Task { () -> Result<TokenLease, CoordinationStoreError> in
                        do throws(CoordinationStoreError) {
                            return .success(try await store.leaseTokens(request))
                        } catch { return .failure(error) }
                    }
                    let waiting = try await eventually(within: .seconds(5)) {
                        let rows = try await client.query(
                            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
                        var count: Int64 = 0
                        for try await value in rows.decode(Int64.self) { count = value }
                        return count > 0
                    }
                    #expect(waiting, "the store's statement never waited for the row lock")
                    _ = try await connection.query("COMMIT", logger: connection.logger)
                    return await lease.value
                }
            }
            if retries == 0 {
                guard case .failure(.unavailable) = result else {
                    Issue.record("without retries the lease should fail as unavailable, got \(result)")
                    continue
                }
                #expect(store.lastError?.code == .serializationFailure)
                #expect(store.lastError?.sqlState == "40001")
            } else {
                #expect((try? result.get())?.granted == 1, "with retries the lease should succeed: \(result)")
            }
        }
    }

    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aBreakerChangeReachesAnotherInstanceFasterThanThePollInterval() async throws {
        let prefix = freshPrefix("notify")
        let key = "notified"
        try await TestDatabase.withStore(prefix: prefix) { writer in
            try await writer.migrate()
            try await TestDatabase.withStore(prefix: prefix) { reader in
                #expect(await eventually(within: .seconds(10)) { reader.isListeningForBreakerChanges })
                #expect(try await reader.breakerRecord(key: key) == nil)  // cached as absent from now on
                let changes = reader.breakerChanges()
                let clock = ContinuousClock()
                let written = clock.now
                let waiter = Task { () -> Duration? in
                    for await changed in changes where changed == key { return written.duration(to: clock.now) }
                    return nil
                }
                let stopper = Task {
                    try? await Task.sleep(for: .seconds(5))
                    waiter.cancel()
                }
                defer { stopper.cancel() }
                let update = BreakerRecordUpdate(
                    key: key, expectedVersion: 0, state: .open, openFor: .seconds(30), timeToLive: .seconds(60))
                guard case .applied(let record) = try await writer.updateBreaker(update) else {
                    Issue.record("the first write should apply")
                    return
                }
                let latency = try #require(await waiter.value, "no notification within 5 s")
                // SharedBreaker's default refreshInterval is 250 ms; the notification must beat it.
                #expect(latency < .milliseconds(250), "delivered after \(latency)")
                let seen = try await reader.breakerRecord(key: key)
                #expect(seen?.version == record.version)
                #expect(seen?.state == .open)
            }
        }
    }

    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func oneSweeperAtATimeOverIndexedExpiry() async throws {
        let prefix = freshPrefix("sweep")
        try await TestDatabase.withStore(prefix: prefix) { store in
            let quota = SharedRateQuota(permits: 1000, per: .seconds(1))
            for index in 0..<5 {
                _ = try await store.leaseTokens(TokenLeaseRequest(key: "sweep-\(index)", count: 1, quota: quota))
            }
            try await Task.sleep(for: .milliseconds(50))  // every row's schedule is idle again
            try await TestDatabase.withClient { client in
                let indexes = try await client.query(
                    PostgresQuery(
                        unsafeSQL: """
                            SELECT count(*) FROM pg_indexes WHERE indexname IN ('\(prefix)_rate_tat_us',
                                '\(prefix)_breaker_expires_us')
                            """))
                var count: Int64 = 0
                for try await (value) in indexes.decode(Int64.self) { count = value }
                #expect(count == 2)
                try await client.withConnection { connection in
                    _ = try await connection.query("BEGIN", logger: connection.logger)
                    _ = try await connection.query(
                        PostgresQuery(unsafeSQL: "SELECT pg_advisory_xact_lock(hashtext('\(prefix)_sweeper'))"),
                        logger: connection.logger)
                    #expect(try await store.trySweepExpired() == nil, "another instance holds the sweeper lock")
                    #expect(try await store.sweepExpired() == 0)
                    _ = try await connection.query("COMMIT", logger: connection.logger)
                }
            }
            #expect(try await store.trySweepExpired() == 5)
            #expect(try await store.rowCount() == 0)
        }
    }

    /// Many keys going idle (a rate limit per user) leave more expired rows than one statement deletes within the
    /// call's time limit; a sweep that tried would time out, roll back, and leave the table growing for ever.
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aLargeBacklogOfExpiredRowsIsSweptWithinTheCallTimeout() async throws {
        let prefix = freshPrefix("backlog")
        var configuration = TestDatabase.configuration(prefix: prefix)
        configuration.callTimeout = .milliseconds(500)
        try await TestDatabase.withStore(configuration) { store in
            try await store.migrate()
            let rows = 400_000
            try await TestDatabase.withClient { client in
                _ = try await client.query(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO \(prefix)_rate SELECT 'user-' || g, 0, 0, 1, 0, 0 FROM generate_series(1, \(rows)) g
                            """))
                _ = try await client.query(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO \(prefix)_breaker SELECT 'user-' || g, 'closed', g, 0, 0, 0, 0, NULL, 0
                            FROM generate_series(1, \(rows / 4)) g
                            """))
            }
            #expect(try await store.sweepExpired() == rows + rows / 4)
            #expect(try await store.rowCount() == 0)
        }
        // Half a million rows written and deleted leave a write-ahead log that a later test's immediate stop of the
        // server would replay on restart, lengthening its outage: a checkpoint leaves the cluster as it was.
        try await TestDatabase.withClient { client in _ = try await client.query("CHECKPOINT") }
    }

    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func theStoreIsAServiceThatStopsOnGracefulShutdown() async throws {
        let store = PostgresCoordinationStore(
            connection: TestDatabase.connection(), configuration: TestDatabase.configuration())
        try await testGracefulShutdown { trigger in
            let running = Task { try await store.run() }
            #expect(await eventually(within: .seconds(10)) { store.isListeningForBreakerChanges })
            trigger.triggerGracefulShutdown()
            let clock = ContinuousClock()
            let started = clock.now
            try await running.value
            #expect(started.duration(to: clock.now) < .seconds(5))
        }
    }

    /// One store call before `run()` was started (it prepares the schema itself).
    static func calledWithoutRun(_ store: PostgresCoordinationStore) async throws -> BreakerRecord? {
        try await store.breakerRecord(key: "anything")
    }

    /// The statements of a SQL file, split at `;` line ends outside dollar quotes.
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        var inDollarQuote = false
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("--") && current.isEmpty { continue }
            current += line + "\n"
            if line.contains("$notify$") { inDollarQuote.toggle() }
            if !inDollarQuote && line.hasSuffix(";") {
                statements.append(current)
                current = ""
            }
        }
        return statements
    }
}
