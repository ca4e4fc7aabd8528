import Logging
import PostgresNIO
import ResilienceCore
import ServiceLifecycle

/// A ``CoordinationStore`` in PostgreSQL, adopting both seams: shared rate slots (``RateCoordinationStore``),
/// breaker records and probe leases (``BreakerCoordinationStore``) for every replica that reaches the same
/// database. It is a swift-service-lifecycle `Service`: add it to the application's `ServiceGroup`.
///
/// - **One statement per decision**, computed by the server on its own clock (`clock_timestamp()`, in
///   microseconds): a lease is one `INSERT … ON CONFLICT DO UPDATE … RETURNING`, a compare-and-set one
///   `INSERT … ON CONFLICT DO UPDATE … WHERE version = … RETURNING`, a probe lease one `UPDATE … RETURNING`.
///   Row locks make each atomic; replicas' clocks never enter.
/// - **The application's pool**: it runs its statements on the `PostgresClient` it is given (the application
///   runs that client), or on one of its own (``init(connection:configuration:logger:)``), which ``run()`` runs.
/// - **Schema as SQL files**: `Schema/*.sql` in the package, for migration tools; with
///   ``Configuration/createsSchema`` (the default) the same SQL runs at first use under an advisory lock.
///   Either way the store checks the schema version, the tables and its role's privileges before its first
///   call, and ``run()`` throws a ``PostgresStoreError`` when they are wrong, rather than letting the shared
///   policies fail open for ever.
/// - **Breaker changes pushed** with `LISTEN`/`NOTIFY`: a trigger announces every breaker write; while the
///   listening connection is up, ``breakerRecord(key:)`` answers from memory until a notification says the key
///   changed, and ``breakerChanges()`` hands the changed keys to whoever wants to react at once. While it is
///   down, every read goes to the database (polling is the fallback); a listening connection that stops answering,
///   or whose server accepts no writes (checked every ``Configuration/listenerCheckInterval``), is closed and
///   counts as down.
/// - **One sweeper at a time**: ``run()`` sweeps every ``Configuration/sweepInterval`` under a transaction-level
///   advisory lock, over indexed expiry columns, in batches that each end within ``Configuration/callTimeout``.
///
/// ```swift
/// let client = PostgresClient(configuration: .init(host: "db", username: "app", password: secret,
///                                                   database: "app", tls: .prefer(.clientDefault)))
/// let store = PostgresCoordinationStore(client: client)
/// let group = ServiceGroup(services: [client, store, server], gracefulShutdownSignals: [.sigterm], logger: logger)
/// ```
public final class PostgresCoordinationStore: CoordinationStore, Service {
    /// Settings of a ``PostgresCoordinationStore``.
    public struct Configuration: Sendable {
        /// The prefix of the store's tables (`[a-z_]` only; see ``PostgresCoordinationSchema``).
        public var tablePrefix = "resilience_coordination"
        /// Creates or migrates the schema at first use (the role then needs CREATE on the database's schema).
        /// Set it to `false` when the schema is applied from `Schema/*.sql` by a migration tool or an operator.
        public var createsSchema = true
        /// With ``createsSchema``: makes the rate table `UNLOGGED` (`true`) or logged (`false`); `nil` leaves it as
        /// it is. Unlogged writes skip the write-ahead log (faster with `fsync` on) but the table is emptied by a
        /// server crash and not replicated, so every key's rate starts afresh after one.
        public var rateTableUnlogged: Bool?
        /// How often ``run()`` sweeps expired rows.
        public var sweepInterval: Duration = .seconds(60)
        /// The longest any one call may take, waiting for a connection included; past it the call throws
        /// ``CoordinationStoreError/timedOut(_:)`` (the pool keeps reconnecting in the background). A statement
        /// still running then (waiting for a lock, or on a server that stopped answering) has its connection
        /// closed. A call its caller cancels earlier ends at this limit at the latest.
        public var callTimeout: Duration = .seconds(2)
        /// How often a statement that failed to serialize (SQLSTATE 40001 or 40P01) is tried again before the
        /// call fails with ``PostgresStoreError/Code/serializationFailure``.
        public var serializationRetries = 3
        /// Listens for breaker changes (`LISTEN`, one pooled connection held by ``run()``) and answers breaker
        /// reads from memory while it does.
        public var listensForBreakerChanges = true
        /// The longest a breaker record read is answered from memory before the database is asked again, even
        /// with no notification (a safety net, not the mechanism).
        public var cachedRecordLifetime: Duration = .seconds(10)
        /// How long ``run()`` waits before preparing the schema or listening again after a failure.
        public var reconnectInterval: Duration = .seconds(1)
        /// How often ``run()`` checks that the listening connection still answers and that its server accepts
        /// writes (one `SELECT` of `transaction_read_only` on it, within ``callTimeout``). A connection that does
        /// not answer (a server or a network path gone without closing it), or whose server is read-only (a fenced
        /// old primary or a standby, which the new primary's notifications never reach), is closed: breaker reads
        /// go to the database and ``run()`` listens again on another connection.
        public var listenerCheckInterval: Duration = .seconds(1)

        /// Creates the default configuration.
        public init() {}
    }

    /// The longest key the store holds, in UTF-8 bytes (2048). A key is the primary key of its table, and
    /// PostgreSQL's B-tree index takes entries of at most about 2700 bytes; a longer key, or a key or probe
    /// holder containing a NUL character (which PostgreSQL's text cannot hold), is refused with
    /// ``CoordinationStoreError/invalidRequest(_:)`` before the database is asked.
    public static let maximumKeyLength = 2048

    private let client: PostgresClient
    private let ownsClient: Bool
    private let logger: Logger
    private let configuration: Configuration
    /// The names of the store's tables, sequence, channel and locks.
    public let schema: PostgresCoordinationSchema
    private let migrated = MigrationGate()
    private let cache: BreakerRecordCache
    private let watchers = LockedState(initialState: Watchers())

    /// Creates a store on the application's client; the application runs the client (in its `ServiceGroup`,
    /// or `client.run()` in a task) and the store's ``run()``.
    /// - Parameters:
    ///   - client: The application's PostgreSQL client.
    ///   - configuration: Table prefix, schema handling, intervals and deadlines.
    ///   - logger: Receives the store's warnings and errors (errors only, when `nil`).
    public convenience init(
        client: PostgresClient, configuration: Configuration = Configuration(), logger: Logger? = nil
    ) {
        self.init(client: client, owned: false, configuration: configuration, logger: logger)
    }

    /// Creates a store with a client of its own, which ``run()`` runs.
    /// - Parameters:
    ///   - connection: The client's connection settings (host, credentials, TLS, pool size).
    ///   - configuration: Table prefix, schema handling, intervals and deadlines.
    ///   - logger: Receives the store's and the client's warnings and errors (errors only, when `nil`).
    public convenience init(
        connection: PostgresClient.Configuration, configuration: Configuration = Configuration(),
        logger: Logger? = nil
    ) {
        let logger = logger ?? Self.quietLogger
        self.init(
            client: PostgresClient(configuration: connection, backgroundLogger: logger), owned: true,
            configuration: configuration, logger: logger)
    }

    /// Creates a store with a client of its own over TCP without TLS (loopback or a private network), which
    /// ``run()`` runs: at most 4 connections, each opened within 2 s.
    /// - Parameters:
    ///   - host: The server's host.
    ///   - port: The server's port.
    ///   - username: The role to connect as.
    ///   - password: Its password, if the server asks for one.
    ///   - database: The database holding the store's tables.
    ///   - configuration: Table prefix, schema handling, intervals and deadlines.
    ///   - logger: Receives the store's and the client's warnings and errors (errors only, when `nil`).
    public convenience init(
        host: String, port: Int = 5432, username: String, password: String?, database: String?,
        configuration: Configuration = Configuration(), logger: Logger? = nil
    ) {
        var connection = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: .disable)
        connection.options.connectTimeout = .seconds(2)
        connection.options.maximumConnections = 4
        self.init(connection: connection, configuration: configuration, logger: logger)
    }

    private init(client: PostgresClient, owned: Bool, configuration: Configuration, logger: Logger?) {
        self.client = client
        ownsClient = owned
        self.logger = logger ?? Self.quietLogger
        self.configuration = configuration
        schema = PostgresCoordinationSchema(prefix: configuration.tablePrefix)
        cache = BreakerRecordCache(lifetime: configuration.cachedRecordLifetime)
    }

    private static var quietLogger: Logger {
        var quiet = Logger(label: "resilience.coordination.postgres")
        quiet.logLevel = .error
        return quiet
    }

    // MARK: Service

    /// Runs the store until cancelled or until a graceful shutdown: its own client (if it has one), the schema's
    /// preparation (retried while the server is unreachable), the breaker-change listener and the sweeper.
    ///
    /// - Throws: A ``PostgresStoreError`` that is a configuration error (``PostgresStoreError/isConfigurationError``:
    ///   schema missing or too new, privileges missing), found at start or by any later call;
    ///   in a `ServiceGroup` this ends the group, so a misconfigured deployment stops instead of running with
    ///   its shared limits and breakers failing open.
    public func run() async throws {
        let work = Task { try await self.runUntilCancelled() }
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await work.value
            } onGracefulShutdown: {
                work.cancel()
            }
        } onCancel: {
            work.cancel()
        }
    }

    private func runUntilCancelled() async throws {
        let (problems, problemSink) = AsyncStream.makeStream(
            of: PostgresStoreError.self, bufferingPolicy: .bufferingNewest(1))
        let runner = watchers.withLock { watchers in
            watchers.next += 1
            watchers.runners[watchers.next] = problemSink
            return watchers.next
        }
        defer { _ = watchers.withLock { $0.runners.removeValue(forKey: runner) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            if ownsClient { group.addTask { await self.client.run() } }
            group.addTask { try await self.prepareUntilReady() }
            group.addTask { await self.sweepPeriodically() }
            if configuration.listensForBreakerChanges {
                group.addTask { await self.listenForBreakerChanges() }
            }
            group.addTask {
                for await problem in problems { throw problem }
            }
            while try await group.next() != nil {
                if Task.isCancelled { break }
            }
            group.cancelAll()
        }
    }

    /// Prepares the schema, trying again while the server is unreachable; throws a configuration error.
    private func prepareUntilReady() async throws {
        while !Task.isCancelled {
            do throws(PostgresStoreError) {
                try await migrate()
                return
            } catch  where error.isConfigurationError {
                throw error
            } catch {
                logger.warning("coordination store not ready: \(error)")
            }
            do { try await Task.sleep(for: configuration.reconnectInterval) } catch { return }
        }
    }

    private func sweepPeriodically() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: configuration.sweepInterval) } catch { return }
            do {
                _ = try await trySweepExpired()
            } catch {
                logger.warning("coordination store sweep failed: \(error)")
            }
        }
    }

    private func listenForBreakerChanges() async {
        let channel = schema.breakerChannel
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        self.cache.setLive(true)
                        self.announce("")
                        try await withThrowingTaskGroup(of: Void.self) { group in
                            group.addTask { await self.checkUntilSilent(connection) }
                            defer { group.cancelAll() }
                            for try await notification in notifications {
                                self.cache.invalidate(notification.payload)
                                self.announce(notification.payload)
                            }
                        }
                    }
                }
            } catch {
                if !Task.isCancelled { logger.warning("breaker notifications interrupted: \(error)") }
            }
            cache.setLive(false)
            announce("")
            do { try await Task.sleep(for: configuration.reconnectInterval) } catch { return }
        }
    }

    /// Asks the listening connection whether its server accepts writes every
    /// ``Configuration/listenerCheckInterval``; closes it (which ends the listening) when an answer misses
    /// ``Configuration/callTimeout``, or says the server is read-only. A connection whose server or network path
    /// went away without closing it would otherwise look like one that has nothing to deliver, and so would one
    /// on a fenced old primary or a standby: the new primary's notifications never reach it.
    private func checkUntilSilent(_ connection: PostgresConnection) async {
        let logger = logger
        while true {
            do { try await Task.sleep(for: configuration.listenerCheckInterval) } catch { return }
            do {
                let deadline = ResilienceClock.continuous.now().advanced(by: configuration.callTimeout)
                let answer = try await withDeadline(until: deadline, clock: .continuous) {
                    RowsBox(
                        rows: try await Self.rows(
                            of: "SELECT current_setting('transaction_read_only')::bool", on: connection,
                            closingAt: deadline, logger: logger, as: Bool.self))
                }
                if answer.rows.first == true {
                    logger.warning("breaker notifications: the listening connection's server accepts no writes")
                    _ = connection.close() as EventLoopFuture<Void>
                    return
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("breaker notifications: the listening connection did not answer: \(error)")
                _ = connection.close() as EventLoopFuture<Void>
                return
            }
        }
    }

    // MARK: Breaker changes

    /// True while breaker changes arrive by notification, so breaker reads are answered from memory.
    public var isListeningForBreakerChanges: Bool { cache.isLive }

    /// The keys of breaker records that changed, as notifications arrive (from any instance, this one
    /// included). An empty key means "any key may have changed": a key too long for a notification's payload,
    /// or the listening connection going up or down. Wire it to `SharedBreaker.refresh()` to adopt another
    /// replica's change at once instead of at the breaker's next poll.
    public func breakerChanges() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(256))
        let id = watchers.withLock { watchers in
            watchers.next += 1
            watchers.continuations[watchers.next] = continuation
            return watchers.next
        }
        continuation.onTermination = { [weak self] _ in
            self?.watchers.withLock { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    private func announce(_ key: String) {
        let continuations = watchers.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(key) }
    }

    // MARK: Schema

    /// Creates or migrates the schema when ``Configuration/createsSchema`` is set, then checks the version, the
    /// tables and the role's privileges. Runs once per process; a failure lets the next call try again.
    public func migrate() async throws(PostgresStoreError) {
        try await migrated.run { () async throws(PostgresStoreError) in
            if self.configuration.createsSchema {
                let ddl = self.schema.runTimeMigration(rateTableUnlogged: self.configuration.rateTableUnlogged)
                do throws(PostgresStoreError) {
                    _ = try await self.attempt(PostgresQuery(unsafeSQL: ddl), as: Bool.self)
                } catch  where error.code == .insufficientPrivilege {
                    throw PostgresStoreError(
                        .insufficientPrivilege, sqlState: error.sqlState,
                        message: "\(error.message); run-time DDL needs CREATE on the database schema: apply "
                            + "Schema/*.sql as the schema's owner and set createsSchema = false")
                }
            }
            try await self.verifySchema()
        }
    }

    private func verifySchema() async throws(PostgresStoreError) {
        let inspection = try await attempt(PostgresQuery(unsafeSQL: schema.inspection), as: (Bool, Bool).self)
        guard let (objectsExist, privileged) = inspection.first else {
            throw PostgresStoreError(.serverError, message: "the schema inspection returned no row")
        }
        guard objectsExist else {
            throw PostgresStoreError(
                .schemaMissing,
                message: "tables \(schema.prefix)_{schema,rate,breaker} or sequence \(schema.versionSequence) are "
                    + "missing; run Schema/*.sql or enable DDL (Configuration.createsSchema)")
        }
        guard privileged else {
            throw PostgresStoreError(
                .insufficientPrivilege,
                message: "the role lacks SELECT, INSERT, UPDATE or DELETE on the store's tables or USAGE on "
                    + "\(schema.versionSequence); see Schema/grants.sql")
        }
        let query = PostgresQuery(unsafeSQL: "SELECT coalesce(max(version), 0) FROM \(schema.schemaTable)")
        let stored: Int32 = try await attempt(query, as: Int32.self).first ?? 0
        let version = Int(stored)
        let current = PostgresCoordinationSchema.currentVersion
        if version < current {
            throw PostgresStoreError(
                .schemaMissing,
                message: "schema version \(version) is older than \(current); run Schema/*.sql from "
                    + "version \(version + 1) on, or enable DDL (Configuration.createsSchema)")
        }
        if version > current {
            throw PostgresStoreError(
                .schemaTooNew, message: "schema version \(version) is newer than this program's \(current)")
        }
    }

    /// Prepares the schema for a call; a configuration error is reported to ``run()``.
    private func ready() async throws(CoordinationStoreError) {
        do throws(PostgresStoreError) {
            try await migrate()
        } catch {
            throw report(error)
        }
    }

    // MARK: Decisions

    /// The server's clock in microseconds since the epoch, as one CTE.
    private static let serverNow =
        "WITH c AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now_us)"

    /// One `INSERT … ON CONFLICT DO UPDATE … RETURNING`: the GCRA reservation on the server's clock.
    public func leaseTokens(_ request: TokenLeaseRequest) async throws(CoordinationStoreError) -> TokenLease {
        if let problem = request.problem ?? Self.problem(key: request.key) { throw .invalidRequest(problem) }
        try await ready()
        let interval = max(1, Self.microseconds(request.quota.emissionInterval))
        let tolerance = Self.saturatingProduct(interval, Int64(request.quota.burst - 1))
        let horizon = Self.microseconds(request.horizon)
        let count = Int64(request.count)
        // A row decided later than the server's clock now reads was written on a clock ahead of this one (an old
        // primary's, before a failover): its schedule is moved back by that much, as if decided now, so a key is
        // not refused for as long as the two clocks differ.
        let base = "GREATEST(r.tat_us - GREATEST(0, r.decided_us - EXCLUDED.decided_us), EXCLUDED.decided_us)"
        let room = "(EXCLUDED.decided_us + \(horizon + tolerance) - \(base))"
        let granted = "(CASE WHEN \(room) < 0 THEN 0 ELSE LEAST(\(count), \(room) / \(interval) + 1) END)"
        let fresh = "LEAST(\(count), \(horizon + tolerance) / \(interval) + 1)"
        let query: PostgresQuery = """
            \(unescaped: Self.serverNow)
            INSERT INTO \(unescaped: schema.rateTable) AS r (key, tat_us, decided_us, granted, first_offset_us, retry_us)
            SELECT \(request.key), c.now_us + \(unescaped: fresh) * \(unescaped: String(interval)), c.now_us,
                   \(unescaped: fresh), \(unescaped: String(-tolerance)), 0 FROM c
            ON CONFLICT (key) DO UPDATE SET
                tat_us = \(unescaped: base) + \(unescaped: granted) * \(unescaped: String(interval)),
                decided_us = EXCLUDED.decided_us,
                granted = \(unescaped: granted),
                first_offset_us = \(unescaped: base) - \(unescaped: String(tolerance)) - EXCLUDED.decided_us,
                retry_us = CASE WHEN \(unescaped: granted) = 0 THEN -\(unescaped: room) ELSE 0 END
            RETURNING granted, first_offset_us, retry_us
            """
        let rows = try await fetch(query, as: (Int64, Int64, Int64).self)
        guard let (grantedCount, offset, retry) = rows.first else {
            throw .protocolViolation("the lease statement returned no row")
        }
        return TokenLease(
            granted: Int(grantedCount), firstSlotOffset: .microseconds(offset),
            spacing: .microseconds(interval), retryAfter: .microseconds(max(0, retry)))
    }

    /// The live record: from memory while breaker notifications are live and none named the key since it
    /// was read, else one `SELECT`.
    public func breakerRecord(key: String) async throws(CoordinationStoreError) -> BreakerRecord? {
        if key.isEmpty { throw .invalidRequest("key must not be empty") }
        if let problem = Self.problem(key: key) { throw .invalidRequest(problem) }
        if let cached = cache.lookup(key) { return cached }
        try await ready()
        let generation = cache.beginRead()
        let query: PostgresQuery = """
            \(unescaped: Self.serverNow)
            SELECT b.state, b.version, GREATEST(0, b.open_until_us - c.now_us), b.trips,
                   CASE WHEN b.probe_until_us > c.now_us THEN b.probe_holder END,
                   GREATEST(0, b.probe_until_us - c.now_us), b.expires_us - c.now_us
            FROM \(unescaped: schema.breakerTable) b, c WHERE b.key = \(key) AND b.expires_us > c.now_us
            """
        let rows = try await fetch(query, as: (String, Int64, Int64, Int32, String?, Int64, Int64).self)
        let receivedAt = ContinuousClock.now
        var answer = BreakerRecordCache.Answer(record: nil, probeLeft: .zero, expiresIn: .zero)
        if let (state, version, remaining, trips, holder, probeLeft, expiresIn) = rows.first {
            guard let breakerState = BreakerState(rawValue: state) else {
                throw .protocolViolation("unknown breaker state \(state)")
            }
            answer = BreakerRecordCache.Answer(
                record: BreakerRecord(
                    key: key, state: breakerState, version: UInt64(version), remainingOpen: .microseconds(remaining),
                    trips: Int(trips), probeHolder: holder),
                probeLeft: .microseconds(probeLeft), expiresIn: .microseconds(expiresIn))
        }
        if let generation { cache.store(answer, for: key, readIn: generation, receivedAt: receivedAt) }
        return answer.record
    }

    /// One `INSERT … ON CONFLICT DO UPDATE … WHERE <version matches> RETURNING`; a conflict reads the current
    /// record to report it.
    public func updateBreaker(
        _ update: BreakerRecordUpdate
    ) async throws(CoordinationStoreError)
        -> BreakerUpdateResult
    {
        if let problem = update.problem ?? Self.problem(key: update.key) { throw .invalidRequest(problem) }
        try await ready()
        let openFor = update.state == .open ? Self.microseconds(update.openFor) : 0
        let expected = Int64(clamping: update.expectedVersion)
        let table = schema.breakerTable
        let query: PostgresQuery = """
            \(unescaped: Self.serverNow)
            INSERT INTO \(unescaped: table) AS b
                (key, state, version, written_us, open_until_us, trips, expires_us, probe_holder, probe_until_us)
            SELECT \(update.key), \(update.state.rawValue), nextval('\(unescaped: schema.versionSequence)'), c.now_us,
                   c.now_us + \(openFor), \(Int32(clamping: update.trips)),
                   c.now_us + \(Self.microseconds(update.timeToLive)), NULL, 0
            FROM c WHERE \(expected) = 0
                OR EXISTS (SELECT 1 FROM \(unescaped: table) WHERE key = \(update.key))
            ON CONFLICT (key) DO UPDATE SET
                state = EXCLUDED.state, version = EXCLUDED.version, written_us = EXCLUDED.written_us,
                open_until_us = EXCLUDED.open_until_us, trips = EXCLUDED.trips, expires_us = EXCLUDED.expires_us,
                probe_holder = NULL, probe_until_us = 0
            WHERE (\(expected) = 0 AND b.expires_us <= EXCLUDED.written_us)
                OR (b.version = \(expected) AND b.expires_us > EXCLUDED.written_us)
            RETURNING version, GREATEST(0, open_until_us - written_us)
            """
        let rows = try await fetch(query, as: (Int64, Int64).self)
        // This instance's own notification follows; until it arrives, no read may answer the old record.
        cache.invalidate(update.key)
        guard let (version, remaining) = rows.first else {
            return .conflict(current: try await breakerRecord(key: update.key))
        }
        return .applied(
            BreakerRecord(
                key: update.key, state: update.state, version: UInt64(version),
                remainingOpen: .microseconds(remaining), trips: update.trips))
    }

    /// One `UPDATE … RETURNING`; a refusal reads the record to say how long to wait.
    public func acquireProbe(
        key: String, holder: String, ttl: Duration
    ) async throws(CoordinationStoreError)
        -> ProbeLeaseResult
    {
        if key.isEmpty || holder.isEmpty { throw .invalidRequest("key and holder must not be empty") }
        if ttl <= .zero { throw .invalidRequest("ttl must be positive (got \(ttl))") }
        if let problem = Self.problem(key: key, holder: holder) { throw .invalidRequest(problem) }
        try await ready()
        let lease = Self.microseconds(ttl)
        let table = schema.breakerTable
        let query: PostgresQuery = """
            \(unescaped: Self.serverNow)
            UPDATE \(unescaped: table) b SET probe_holder = \(holder), probe_until_us = c.now_us + \(lease),
                expires_us = GREATEST(b.expires_us, c.now_us + \(lease))
            FROM c
            WHERE b.key = \(key) AND b.expires_us > c.now_us AND b.state = 'open' AND b.open_until_us <= c.now_us
                AND (b.probe_holder IS NULL OR b.probe_holder = \(holder) OR b.probe_until_us <= c.now_us)
            RETURNING b.version
            """
        if let version = try await fetch(query, as: Int64.self).first {
            cache.invalidate(key)
            return ProbeLeaseResult(granted: true, version: UInt64(version), retryAfter: .zero)
        }
        let status: PostgresQuery = """
            \(unescaped: Self.serverNow)
            SELECT b.version, b.state, GREATEST(0, b.open_until_us - c.now_us),
                   CASE WHEN b.probe_holder IS NOT NULL THEN GREATEST(0, b.probe_until_us - c.now_us) ELSE 0 END
            FROM \(unescaped: table) b, c WHERE b.key = \(key) AND b.expires_us > c.now_us
            """
        guard let (version, state, open, probe) = try await fetch(status, as: (Int64, String, Int64, Int64).self).first,
            state == BreakerState.open.rawValue
        else {
            return ProbeLeaseResult(granted: false, version: 0, retryAfter: .zero)
        }
        return ProbeLeaseResult(
            granted: false, version: UInt64(version), retryAfter: .microseconds(max(open, probe, 1)))
    }

    /// One `UPDATE` clearing the holder's lease.
    public func releaseProbe(key: String, holder: String) async throws(CoordinationStoreError) {
        if key.isEmpty || holder.isEmpty { throw .invalidRequest("key and holder must not be empty") }
        if let problem = Self.problem(key: key, holder: holder) { throw .invalidRequest(problem) }
        try await ready()
        _ = try await fetch(
            """
            UPDATE \(unescaped: schema.breakerTable) SET probe_holder = NULL
            WHERE key = \(key) AND probe_holder = \(holder) RETURNING 1
            """, as: Int32.self)
        cache.invalidate(key)
    }

    /// Deletes idle rate rows and expired records unless another instance is sweeping (then removes nothing
    /// and returns 0).
    @discardableResult
    public func sweepExpired() async throws(CoordinationStoreError) -> Int {
        try await trySweepExpired() ?? 0
    }

    /// Deletes idle rate rows and expired records in batches of 1000 rows per table, one statement
    /// each, until a batch finds fewer: each statement takes the sweeper's transaction-level advisory lock without
    /// waiting and, holding it, deletes the oldest expired rows (range scans of the expiry indexes), skipping rows
    /// a decision holds. Each batch is a call of its own within ``Configuration/callTimeout``, so any backlog is
    /// swept, and a decision never waits for more than one batch.
    /// - Returns: How many rows it removed, or `nil` when another instance held the lock (nothing removed).
    public func trySweepExpired() async throws(CoordinationStoreError) -> Int? {
        try await ready()
        let batch = Self.sweepBatchSize
        func oldest(_ table: String, by column: String) -> String {
            """
            DELETE FROM \(table) WHERE key IN (SELECT key FROM \(table)
                WHERE (SELECT held FROM sweeper) AND \(column) <= (SELECT now_us FROM c)
                ORDER BY \(column) LIMIT \(batch) FOR UPDATE SKIP LOCKED) RETURNING 1
            """
        }
        let query: PostgresQuery = """
            \(unescaped: Self.serverNow),
            sweeper AS (SELECT pg_try_advisory_xact_lock(hashtext('\(unescaped: schema.sweeperLockName)')) AS held),
            rates AS (\(unescaped: oldest(schema.rateTable, by: "tat_us"))),
            records AS (\(unescaped: oldest(schema.breakerTable, by: "expires_us")))
            SELECT (SELECT held FROM sweeper), (SELECT count(*) FROM rates), (SELECT count(*) FROM records)
            """
        var removed: Int?
        while !Task.isCancelled {
            guard let (held, rates, records) = try await fetch(query, as: (Bool, Int64, Int64).self).first else {
                throw .protocolViolation("the sweep statement returned no row")
            }
            guard held else { return removed }
            removed = (removed ?? 0) + Int(rates + records)
            if rates < batch && records < batch { break }
        }
        return removed ?? 0
    }

    /// The most rows of each table one sweep statement deletes (see ``trySweepExpired()``).
    static let sweepBatchSize = 1000

    /// Rows in the store's tables (live or not yet swept), for tests and dashboards.
    public func rowCount() async throws(CoordinationStoreError) -> Int {
        try await ready()
        let query: PostgresQuery = """
            SELECT (SELECT count(*) FROM \(unescaped: schema.rateTable))
                + (SELECT count(*) FROM \(unescaped: schema.breakerTable))
            """
        let rows = try await fetch(query, as: Int64.self).first ?? Int64(0)
        return Int(rows)
    }

    /// The most recent error the store met (configuration or transient), for health checks and tests.
    public var lastError: PostgresStoreError? { watchers.withLock { $0.lastError } }

    // MARK: Plumbing

    /// Why PostgreSQL cannot hold `key` (or `holder`): a NUL character, or a key longer than
    /// ``maximumKeyLength``; `nil` when it can.
    private static func problem(key: String, holder: String? = nil) -> String? {
        if key.utf8.contains(0) { return "key must not contain a NUL character" }
        if key.utf8.count > maximumKeyLength {
            return "key must be at most \(maximumKeyLength) bytes in UTF-8 (got \(key.utf8.count))"
        }
        if let holder, holder.utf8.contains(0) { return "holder must not contain a NUL character" }
        return nil
    }

    /// `a × b` for non-negative factors, at most `Int64.max / 4` like ``microseconds(_:)``: every sum the
    /// statements form from such terms and the server's clock stays within `bigint`.
    private static func saturatingProduct(_ a: Int64, _ b: Int64) -> Int64 {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? .max / 4 : min(.max / 4, product)
    }

    private static func microseconds(_ duration: Duration) -> Int64 {
        let parts = duration.components
        let (whole, overflow) = parts.seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return parts.seconds < 0 ? .min / 4 : .max / 4 }
        return min(.max / 4, max(.min / 4, whole + parts.attoseconds / 1_000_000_000_000))
    }

    /// Runs a statement for a decision; every failure becomes the store error a caller expects.
    private func fetch<each Column: PostgresDecodable & Sendable>(
        _ query: PostgresQuery, as columns: (repeat each Column).Type
    ) async throws(CoordinationStoreError) -> [(repeat each Column)] {
        do throws(PostgresStoreError) {
            return try await attempt(query, as: columns)
        } catch {
            throw report(error)
        }
    }

    /// Records an error, hands a configuration error to ``run()``, and returns what a call throws for it.
    private func report(_ error: PostgresStoreError) -> CoordinationStoreError {
        let runners = watchers.withLock { watchers in
            watchers.lastError = error
            return Array(watchers.runners.values)
        }
        if error.isConfigurationError {
            logger.error("\(error)")
            for runner in runners { runner.yield(error) }
        }
        return error.coordinationStoreError
    }

    /// Runs a statement within ``Configuration/callTimeout`` through Core's timer race on the continuous clock,
    /// trying it again after a serialization failure, and classifies every failure. A statement still running
    /// at the call's time limit has its connection closed, so the call ends then even when the server does not
    /// answer, and is cancelled on the server (``cancelAbandoned(tag:)``).
    private func attempt<each Column: PostgresDecodable & Sendable>(
        _ untagged: PostgresQuery, as: (repeat each Column).Type
    ) async throws(PostgresStoreError) -> [(repeat each Column)] {
        let timeout = configuration.callTimeout
        let deadline = ResilienceClock.continuous.now().advanced(by: timeout)
        let retries = max(0, configuration.serializationRetries)
        let client = client
        let logger = logger
        let tag = "/* resilience-coordination call \(String(UInt64.random(in: .min ... .max), radix: 16)) */\n"
        let query = {
            var query = untagged
            query.sql = tag + untagged.sql
            return query
        }()
        let abandoned: @Sendable () -> Void = { [weak self] in self?.cancelAbandoned(tag: tag) }
        do {
            let box = try await withDeadline(until: deadline, clock: .continuous) {
                () async throws -> RowsBox<repeat each Column> in
                var failures = 0
                while true {
                    do {
                        return try await client.withConnection { connection in
                            RowsBox(
                                rows: try await Self.rows(
                                    of: query, on: connection, closingAt: deadline, abandoned: abandoned,
                                    logger: logger,
                                    as: (repeat each Column).self))
                        }
                    } catch let error as PSQLError
                        where PostgresStoreError.isSerializationConflict(error.serverInfo?[.sqlState])
                    {
                        failures += 1
                        if failures > retries { throw SerializationRetriesExhausted(last: error, attempts: failures) }
                    }
                }
            }
            return box.rows
        } catch is DeadlineExceededError {
            throw PostgresStoreError(.unavailable, message: "call timed out", deadline: timeout)
        } catch {
            throw Self.classify(error)
        }
    }

    /// Runs `query` on `connection` and collects its rows, ending at `deadline` (the call's time limit) at the
    /// latest once the calling task is cancelled. postgres-nio cannot cancel a statement the server is running
    /// (one waiting for a lock, or on a server that stopped answering), so a statement still running at
    /// `deadline` after a cancellation has its connection closed: it fails at once and the pool opens another
    /// connection; then `abandoned` runs, to stop the statement on the server. A caller that gives up earlier (a
    /// shared policy at its shorter store deadline) leaves the statement until `deadline`, since most slow
    /// statements do end: closing a connection for every slow answer would make a slow database pay for new
    /// connections exactly when it is slow. A connection whose server answered read-only (25006) is closed
    /// before the error is thrown, so the pool opens the next connection through the server's current address.
    private static func rows<each Column: PostgresDecodable & Sendable>(
        of query: PostgresQuery, on connection: PostgresConnection, closingAt deadline: ResilienceInstant,
        abandoned: (@Sendable () -> Void)? = nil, logger: Logger, as: (repeat each Column).Type
    ) async throws -> [(repeat each Column)] {
        // `finished` is set before the connection goes back to the pool; a close decided under the same lock
        // comes first and sets `closed`.
        let state = LockedState(initialState: (finished: false, closed: false))
        defer { state.withLock { $0.finished = true } }
        return try await withTaskCancellationHandler {
            do {
                var result: [(repeat each Column)] = []
                let rows = try await connection.query(query, logger: logger).decode((repeat each Column).self)
                for try await row in rows { result.append(row) }
                return result
            } catch {
                let closedAtDeadline = state.withLock { $0.closed }
                // A server that refuses writes is a fenced old primary or a standby not yet promoted: once a
                // failover moves the server's address (DNS, a proxy), only a new connection reaches the primary.
                let readOnly = PostgresStoreError.isReadOnly((error as? PSQLError)?.serverInfo?[.sqlState])
                if readOnly && !closedAtDeadline { _ = connection.close() as EventLoopFuture<Void> }
                if readOnly || closedAtDeadline {
                    // The pool learns of a close when it completes: until then it could lend this connection to
                    // the next call, whose statement would then fail on it or never be answered.
                    try? await connection.closeFuture.get()
                }
                if closedAtDeadline { abandoned?() }
                throw error
            }
        } onCancel: {
            let closeIfRunning: @Sendable () -> Void = {
                state.withLock { state in
                    guard !state.finished else { return }
                    state.closed = true
                    _ = connection.close() as EventLoopFuture<Void>
                }
            }
            let clock = ResilienceClock.continuous
            guard clock.now() < deadline else { return closeIfRunning() }
            Task {
                try? await clock.sleep(until: deadline)
                closeIfRunning()
            }
        }
    }

    /// Cancels, on another pooled connection, the statement whose text starts with `tag` if the server still
    /// runs it. The store closed its connection at the call's time limit, but a server backend waiting for a
    /// lock notices no closed connection: it would hold one of the server's `max_connections` until the lock is
    /// granted, and replicas calling on through a long lock would exhaust them for every client of the
    /// database. Bounded by ``Configuration/callTimeout``; a failure is only logged (the server may be gone).
    private func cancelAbandoned(tag: String) {
        let client = client
        let logger = logger
        let timeout = configuration.callTimeout
        Task {
            let deadline = ResilienceClock.continuous.now().advanced(by: timeout)
            do {
                _ = try await withDeadline(until: deadline, clock: .continuous) {
                    try await client.withConnection { connection in
                        let query: PostgresQuery = """
                            SELECT count(pg_cancel_backend(pid))::bigint FROM pg_stat_activity
                            WHERE state = 'active' AND left(query, length(\(tag))) = \(tag) AND pid <> pg_backend_pid()
                            """
                        return RowsBox(
                            rows: try await Self.rows(
                                of: query, on: connection, closingAt: deadline, logger: logger, as: Int64.self))
                    }
                }
            } catch {
                logger.warning("coordination store: could not cancel a statement abandoned at its time limit: \(error)")
            }
        }
    }

    private static func classify(_ error: any Error) -> PostgresStoreError {
        switch error {
        case let error as PostgresStoreError:
            return error
        case let exhausted as SerializationRetriesExhausted:
            var classified =
                PostgresStoreError.classify(exhausted.last)
                ?? PostgresStoreError(.serializationFailure, message: "could not serialize")
            classified.message += " (failed \(exhausted.attempts) times)"
            return classified
        case is CancellationError:
            return PostgresStoreError(.unavailable, message: "cancelled")
        case let error as PSQLError:
            return PostgresStoreError.classify(error) ?? PostgresStoreError(.unavailable, message: "\(error.code)")
        case let error as PostgresDecodingError:
            return PostgresStoreError(.unexpectedAnswer, message: "\(error)")
        default:
            return PostgresStoreError(.unavailable, message: "\(error)")
        }
    }
}

/// Subscribers to breaker changes and the last error, under one lock.
struct Watchers {
    var next: UInt64 = 0
    var continuations: [UInt64: AsyncStream<String>.Continuation] = [:]
    /// One per running ``PostgresCoordinationStore/run()``: configuration errors to throw.
    var runners: [UInt64: AsyncStream<PostgresStoreError>.Continuation] = [:]
    var lastError: PostgresStoreError?
}

/// A statement that kept failing to serialize.
struct SerializationRetriesExhausted: Error {
    let last: PSQLError
    let attempts: Int
}

/// Runs the schema preparation once per process; a failed attempt lets the next call try again.
actor MigrationGate {
    private var done = false

    func run(_ body: @Sendable () async throws(PostgresStoreError) -> Void) async throws(PostgresStoreError) {
        if done { return }
        try await body()
        done = true
    }
}

/// Rows carried out of a child task.
struct RowsBox<each Column: Sendable>: Sendable {
    var rows: [(repeat each Column)]
}
