import Foundation
import PostgresNIO
import ResiliencePostgreSQL
import ResilienceTesting
import Testing

/// A statement the server does not answer (waiting for a lock another session holds, as behind a migration's
/// `LOCK TABLE`) must not hold a call past its time limit.
@Suite("PostgreSQL store when the server stops answering", .serialized, .timeLimit(.minutes(2)))
struct PostgresOutageTests {
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aStatementWaitingForALockEndsAtTheCallTimeoutOrWhenCancelled() async throws {
        let prefix = freshPrefix("locked")
        var configuration = TestDatabase.configuration(prefix: prefix)
        configuration.callTimeout = .seconds(1)
        let quota = SharedRateQuota(permits: 1000, per: .seconds(1))
        let request = TokenLeaseRequest(key: "locked", count: 1, quota: quota)
        let clock = ContinuousClock()
        try await TestDatabase.withStore(configuration) { store in
            try await store.migrate()
            try await TestDatabase.withClient { client in
                try await client.withConnection { connection in
                    _ = try await connection.query("BEGIN", logger: connection.logger)
                    _ = try await connection.query(
                        PostgresQuery(unsafeSQL: "LOCK TABLE \(prefix)_rate IN ACCESS EXCLUSIVE MODE"),
                        logger: connection.logger)
                    // The lock is held for 6 s; each call must end long before.
                    let releaser = Task {
                        try? await Task.sleep(for: .seconds(6))
                        _ = try? await connection.query("COMMIT", logger: connection.logger)
                    }
                    defer { releaser.cancel() }

                    let started = clock.now
                    let timedOut = await Self.lease(request, from: store)
                    let took = started.duration(to: clock.now)
                    #expect(timedOut == .failure(.timedOut(.seconds(1))), "got \(timedOut)")
                    #expect(took < .seconds(3), "the call ended after \(took), not at its 1 s callTimeout")

                    // A caller that stops waiting earlier (a shared policy at its 250 ms storeDeadline) leaves the
                    // statement its chance until the callTimeout, and the call ends there, not with the lock.
                    let cancelledAt = clock.now
                    let call = Task { await Self.lease(request, from: store) }
                    try await Task.sleep(for: .milliseconds(250))
                    call.cancel()
                    let cancelled = await call.value
                    let cancelledTook = cancelledAt.duration(to: clock.now)
                    #expect((try? cancelled.get()) == nil, "got \(cancelled)")
                    #expect(cancelledTook < .seconds(3), "the cancelled call ended after \(cancelledTook)")
                    await releaser.value
                }
            }
            // With the lock released, the store answers again on fresh connections.
            #expect(try await store.leaseTokens(request).granted == 1)
        }
    }

    /// Every call that times out waiting for a lock leaves the server a backend still waiting for it; replicas
    /// calling on through a long lock (a migration's `LOCK TABLE`, a session holding a row) would fill the
    /// server's `max_connections` for every client of the database. The store cancels the abandoned statement.
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aStatementAbandonedAtTheCallTimeoutIsCancelledOnTheServer() async throws {
        let prefix = freshPrefix("abandoned")
        var configuration = TestDatabase.configuration(prefix: prefix)
        configuration.callTimeout = .seconds(1)
        let quota = SharedRateQuota(permits: 1000, per: .seconds(1))
        try await TestDatabase.withStore(configuration) { store in
            try await store.migrate()
            try await TestDatabase.withClient { client in
                try await client.withConnection { connection in
                    _ = try await connection.query("BEGIN", logger: connection.logger)
                    _ = try await connection.query(
                        PostgresQuery(unsafeSQL: "LOCK TABLE \(prefix)_rate IN ACCESS EXCLUSIVE MODE"),
                        logger: connection.logger)
                    for index in 0..<3 {
                        let request = TokenLeaseRequest(key: "abandoned-\(index)", count: 1, quota: quota)
                        let outcome = await Self.lease(request, from: store)
                        #expect(outcome == .failure(.timedOut(.seconds(1))), "got \(outcome)")
                    }
                    // The lock is still held: only a cancelled statement stops waiting for it.
                    let cancelled = try await eventually(within: .seconds(10)) {
                        try await Self.backendsWaitingForALock(on: "\(prefix)_rate") == 0
                    }
                    let left = try await Self.backendsWaitingForALock(on: "\(prefix)_rate")
                    #expect(cancelled, "\(left) server backends still wait for the lock after their calls ended")
                    _ = try await connection.query("COMMIT", logger: connection.logger)
                }
            }
            let request = TokenLeaseRequest(key: "abandoned-0", count: 1, quota: quota)
            #expect(try await store.leaseTokens(request).granted == 1)
        }
    }

    /// A primary fenced for a failover (`default_transaction_read_only`), or a standby reached before the new
    /// primary, refuses writes for a while: the calls fail as unavailable (the policies follow their failure
    /// mode), `run()` keeps running, and the store works again once the server accepts writes.
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aReadOnlyServerIsAnOutageNotAConfigurationError() async throws {
        let prefix = freshPrefix("readonly")
        let quota = SharedRateQuota(permits: 1000, per: .seconds(1))
        let request = TokenLeaseRequest(key: "read-only", count: 1, quota: quota)
        let store = PostgresCoordinationStore(
            connection: TestDatabase.connection(), configuration: TestDatabase.configuration(prefix: prefix))
        let running = Task { () -> (any Error)? in
            do {
                try await store.run()
                return nil
            } catch {
                return error
            }
        }
        defer { running.cancel() }
        #expect(try await store.leaseTokens(request).granted == 1)
        try await Self.setReadOnly(true)
        let refused: Result<Int, CoordinationStoreError>
        do {
            refused = await Self.lease(request, from: store)
            try await Self.setReadOnly(false)
        } catch {
            try? await Self.setReadOnly(false)
            throw error
        }
        guard case .failure(.unavailable) = refused else {
            Issue.record("a read-only server should make the call unavailable, got \(refused)")
            return
        }
        #expect(store.lastError?.code == .readOnly)
        let recovered = await eventually(within: .seconds(10)) {
            (try? await store.leaseTokens(request).granted) == 1
        }
        #expect(recovered, "the store did not work again once the server accepted writes")
        running.cancel()
        let thrown = await running.value
        #expect(thrown == nil, "run() threw \(thrown.map { "\($0)" } ?? "")")
    }

    /// After a failover, DNS or a proxy leads new connections to the new primary while the pool's connections
    /// still reach the old, fenced one. A connection that answered read-only (25006) is closed, so the call after
    /// the server accepts writes again runs on a new connection, opened through the current address.
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aConnectionThatAnsweredReadOnlyIsReplaced() async throws {
        let prefix = freshPrefix("readonlyconn")
        let quota = SharedRateQuota(permits: 1000, per: .seconds(1))
        let request = TokenLeaseRequest(key: "read-only-connection", count: 1, quota: quota)
        // One pooled connection, named after the test, and no listening one: the pool's only backend is the one
        // that answers read-only.
        var connection = TestDatabase.connection()
        connection.options.maximumConnections = 1
        connection.options.additionalStartupParameters = [("application_name", prefix)]
        var configuration = TestDatabase.configuration(prefix: prefix)
        configuration.listensForBreakerChanges = false
        let store = PostgresCoordinationStore(connection: connection, configuration: configuration)
        let running = Task { try await store.run() }
        defer { running.cancel() }
        #expect(try await store.leaseTokens(request).granted == 1)
        let before = try await Self.backends(named: prefix)
        try #require(before.count == 1, "expected the store's one connection, got backends \(before)")

        try await Self.setReadOnly(true)
        let refused: Result<Int, CoordinationStoreError>
        do {
            refused = await Self.lease(request, from: store)
            try await Self.setReadOnly(false)
        } catch {
            try? await Self.setReadOnly(false)
            throw error
        }
        #expect(store.lastError?.code == .readOnly, "got \(refused), last error \(String(describing: store.lastError))")

        let clock = ContinuousClock()
        let started = clock.now
        let recovered = await Self.lease(request, from: store)
        let took = started.duration(to: clock.now)
        #expect(recovered == .success(1), "the first call after the server accepted writes again got \(recovered)")
        #expect(took < .seconds(1), "the first call after the server accepted writes again took \(took)")
        let after = try await Self.backends(named: prefix)
        #expect(
            after.allSatisfy { !before.contains($0) },
            "the connection that answered read-only (backend \(before)) is still in use (backends \(after))")
    }

    /// After a failover the new primary's notifications never reach a listening connection left on the fenced
    /// old primary (or a standby): the store stops answering breaker reads from memory, listens again, and
    /// listens on a connection to a server that accepts writes.
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aListeningConnectionToAReadOnlyServerIsReplaced() async throws {
        let prefix = freshPrefix("readonlylisten")
        try await TestDatabase.withStore(TestDatabase.configuration(prefix: prefix)) { store in
            try await store.migrate()
            #expect(await eventually(within: .seconds(10)) { store.isListeningForBreakerChanges })
            let listener = try await Self.listeningBackends(of: prefix)
            try #require(listener.count == 1, "expected one listening backend, found \(listener)")
            try await Self.setReadOnly(true)
            let stopped: Bool
            do {
                stopped = await eventually(within: .seconds(5)) { !store.isListeningForBreakerChanges }
                try await Self.setReadOnly(false)
            } catch {
                try? await Self.setReadOnly(false)
                throw error
            }
            #expect(stopped, "still answering breaker reads from memory 5 s after the server became read-only")
            let relistening = try await eventually(within: .seconds(10)) {
                guard store.isListeningForBreakerChanges else { return false }
                return try await Self.listeningBackends(of: prefix).contains { !listener.contains($0) }
            }
            #expect(relistening, "not listening on another connection within 10 s of the server accepting writes")
        }
    }

    /// A failover to a server whose clock is behind the old primary's: the rate rows carry schedules on the old
    /// clock (here 60 s ahead). A key must go on at its rate, not be refused until the new clock catches up.
    @Test(.enabled(if: TestDatabase.isConfigured, TestDatabase.skipReason))
    func aRateRowWrittenOnAClockAheadDoesNotBlockItsKey() async throws {
        let prefix = freshPrefix("clockahead")
        let quota = SharedRateQuota(permits: 10, per: .seconds(1))
        let request = TokenLeaseRequest(key: "clock-ahead", count: 1, quota: quota)
        try await TestDatabase.withStore(TestDatabase.configuration(prefix: prefix)) { store in
            #expect(try await store.leaseTokens(request).granted == 1)
            try await TestDatabase.withClient { client in
                _ = try await client.query(
                    PostgresQuery(
                        unsafeSQL: "UPDATE \(prefix)_rate SET tat_us = tat_us + 60000000, "
                            + "decided_us = decided_us + 60000000"))
            }
            let lease = try await store.leaseTokens(request)
            #expect(
                lease.granted == 1 || lease.retryAfter < .seconds(1),
                "granted \(lease.granted), retry after \(lease.retryAfter): the old clock's lead blocks the key")
            let granted = try await eventually(within: .seconds(2)) {
                try await store.leaseTokens(request).granted == 1
            }
            #expect(granted, "the key was refused for 2 s after a row written on a clock 60 s ahead")
        }
    }

    /// The server processes of connections whose `application_name` is `name`.
    static func backends(named name: String) async throws -> [Int32] {
        try await TestDatabase.withClient { client in
            var pids: [Int32] = []
            let rows = try await client.query(
                "SELECT pid FROM pg_stat_activity WHERE application_name = \(name) ORDER BY pid")
            for try await pid in rows.decode(Int32.self) { pids.append(pid) }
            return pids
        }
    }

    /// Makes every session of the cluster read-only by default, or writable again (as a failover's fence does).
    static func setReadOnly(_ readOnly: Bool) async throws {
        try await TestDatabase.withClient { client in
            let setting =
                readOnly
                ? "ALTER SYSTEM SET default_transaction_read_only = on"
                : "ALTER SYSTEM RESET default_transaction_read_only"
            _ = try await client.query(PostgresQuery(unsafeSQL: setting))
            _ = try await client.query("SELECT pg_reload_conf()")
        }
        // The server's backends take the new default at their next command; give the reload a moment.
        try await Task.sleep(for: .milliseconds(500))
    }

    /// How many server backends wait for a lock in a statement naming `table`.
    static func backendsWaitingForALock(on table: String) async throws -> Int64 {
        try await TestDatabase.withClient { client in
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        + "AND position('\(table)' IN query) > 0"))
            var count: Int64 = 0
            for try await value in rows.decode(Int64.self) { count = value }
            return count
        }
    }

    /// The listening connection's server process stops (`SIGSTOP`): the connection stays open but nothing
    /// arrives on it, as when a network path or a failed-over server goes away without closing it. The store
    /// must notice, read breaker records from the database, and listen again on another connection.
    @Test(
        .enabled(
            if: SharedLimitDemoTests.canControlTheCluster,
            "needs the local cluster of .ci/postgres.sh (RESILIENCE_PG_CTL) to signal its server processes"))
    func aListeningConnectionThatStopsAnsweringIsReplaced() async throws {
        let prefix = freshPrefix("silent")
        var configuration = TestDatabase.configuration(prefix: prefix)
        configuration.callTimeout = .seconds(1)
        var writing = configuration
        writing.listensForBreakerChanges = false
        try await TestDatabase.withStore(configuration) { reader in
            try await TestDatabase.withStore(writing) { writer in
                try await Self.replaceSilentListener(of: reader, writer: writer, prefix: prefix)
            }
        }
    }

    /// The body of ``aListeningConnectionThatStopsAnsweringIsReplaced()``.
    static func replaceSilentListener(
        of reader: PostgresCoordinationStore, writer: PostgresCoordinationStore, prefix: String
    ) async throws {
        let key = "silent"
        let clock = ContinuousClock()
        try await writer.migrate()
        #expect(await eventually(within: .seconds(10)) { reader.isListeningForBreakerChanges })
        let closed = BreakerRecordUpdate(key: key, expectedVersion: 0, state: .closed, timeToLive: .seconds(60))
        guard case .applied(let first) = try await writer.updateBreaker(closed) else {
            Issue.record("the first write should apply")
            return
        }
        let cached = try await eventually(within: .seconds(5)) {
            try await reader.breakerRecord(key: key)?.version == first.version
        }
        #expect(cached)

        let listener = try await Self.listeningBackends(of: prefix)
        try #require(listener.count == 1, "expected one listening backend, found \(listener)")
        kill(listener[0], SIGSTOP)
        defer { kill(listener[0], SIGCONT) }
        let stopped = clock.now
        let open = BreakerRecordUpdate(
            key: key, expectedVersion: first.version, state: .open, openFor: .seconds(60),
            timeToLive: .seconds(120))
        guard case .applied(let second) = try await writer.updateBreaker(open) else {
            Issue.record("the second write should apply")
            return
        }
        // The record stays cached for up to 10 s (cachedRecordLifetime) when no notification comes; a
        // silent listening connection must be noticed long before that.
        let seen = await eventually(within: .seconds(8)) {
            (try? await reader.breakerRecord(key: key))?.version == second.version
        }
        let seenAfter = stopped.duration(to: clock.now)
        #expect(seen && seenAfter < .seconds(5), "the change was read \(seenAfter) after it was written")
        // Listening again on another connection, and notified of the next change.
        let stoppedBackend = listener[0]
        let relistening = try await eventually(within: .seconds(10)) {
            guard reader.isListeningForBreakerChanges else { return false }
            let backends = try await Self.listeningBackends(of: prefix)
            return backends.contains { $0 != stoppedBackend }
        }
        #expect(relistening, "not listening again on another connection within 10 s")
        let changes = reader.breakerChanges()
        let notified = Task { () -> Bool in
            for await changed in changes where changed == key { return true }
            return false
        }
        let stopper = Task {
            try? await Task.sleep(for: .seconds(5))
            notified.cancel()
        }
        defer { stopper.cancel() }
        let reclosed = BreakerRecordUpdate(
            key: key, expectedVersion: second.version, state: .closed, timeToLive: .seconds(60))
        _ = try await writer.updateBreaker(reclosed)
        #expect(await notified.value, "no notification on the new listening connection within 5 s")
    }

    /// The server processes listening on the store's breaker channel.
    static func listeningBackends(of prefix: String) async throws -> [Int32] {
        try await TestDatabase.withClient { client in
            var pids: [Int32] = []
            let rows = try await client.query(
                PostgresQuery(
                    unsafeSQL: "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN%' "
                        + "AND position('\(prefix)_' IN query) > 0"))
            for try await pid in rows.decode(Int32.self) { pids.append(pid) }
            return pids
        }
    }

    /// What a lease call answered (how many slots it granted), as a value.
    static func lease(
        _ request: TokenLeaseRequest, from store: PostgresCoordinationStore
    ) async -> Result<Int, CoordinationStoreError> {
        do throws(CoordinationStoreError) {
            return .success(try await store.leaseTokens(request).granted)
        } catch {
            return .failure(error)
        }
    }
}
