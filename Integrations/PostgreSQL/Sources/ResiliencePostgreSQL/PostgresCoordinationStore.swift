import Logging
import PostgresNIO
import ResilienceCore

/// A ``CoordinationStore`` in PostgreSQL, adopting both seams: shared rate slots (``RateCoordinationStore``),
/// breaker records and probe leases (``BreakerCoordinationStore``) for every replica that reaches the same
/// database.
///
/// - **One statement per decision**, computed by the server on its own clock (`clock_timestamp()`, in
///   microseconds): a lease is one `INSERT … ON CONFLICT DO UPDATE … RETURNING`, a compare-and-set one
///   `INSERT … ON CONFLICT DO UPDATE … WHERE version = … RETURNING`, a probe lease one `UPDATE … RETURNING`.
///   Row locks make each atomic; replicas' clocks never enter.
/// - **One row per key**, never per request; ``sweepExpired()`` (run every ``Configuration/sweepInterval``
///   by ``run()``) deletes idle rate rows and expired records.
/// - **Schema created or migrated on first use**, under an advisory lock so replicas starting together
///   do not race; the version lives in `<prefix>_schema`.
/// - **Reconnects by itself**: the underlying `PostgresClient` pool opens new connections when the server
///   returns; calls made meanwhile throw ``CoordinationStoreError/unavailable(_:)``.
///
/// ```swift
/// let store = PostgresCoordinationStore(.init(host: "127.0.0.1", port: 5432, username: "app", password: nil,
///                                              database: "app"))
/// Task { await store.run() }      // the connection pool and the sweeper
/// ```
public final class PostgresCoordinationStore: CoordinationStore {
    /// Settings of a ``PostgresCoordinationStore``.
    public struct Configuration: Sendable {
        /// The client's connection settings.
        public var client: PostgresClient.Configuration
        /// The prefix of the store's tables (`[a-z_]` only).
        public var tablePrefix = "resilience_coordination"
        /// How often ``run()`` sweeps expired rows.
        public var sweepInterval: Duration = .seconds(60)
        /// The longest any one call may take, waiting for a connection included; past it the call throws
        /// ``CoordinationStoreError/timedOut(_:)`` (the pool keeps reconnecting in the background).
        public var callTimeout: Duration = .seconds(2)

        /// Creates a configuration for a server over TCP without TLS (loopback or a private network).
        /// - Parameters:
        ///   - host: The server's host.
        ///   - port: The server's port.
        ///   - username: The role to connect as.
        ///   - password: Its password, if the server asks for one.
        ///   - database: The database holding the store's tables.
        public init(host: String, port: Int = 5432, username: String, password: String?, database: String?) {
            var client = PostgresClient.Configuration(
                host: host, port: port, username: username, password: password, database: database, tls: .disable)
            client.options.connectTimeout = .seconds(2)
            client.options.maximumConnections = 4
            self.client = client
        }

        /// Creates a configuration from a prepared client configuration (TLS, unix sockets, pool sizes).
        /// - Parameter client: The client's configuration.
        public init(client: PostgresClient.Configuration) {
            self.client = client
        }
    }

    /// The schema version this type creates and migrates to.
    public static let schemaVersion = 1

    private let client: PostgresClient
    private let logger: Logger
    private let sweepInterval: Duration
    private let callTimeout: Duration
    private let rateTable: String
    private let breakerTable: String
    private let schemaTable: String
    private let versionSequence: String
    private let migrated = MigrationGate()

    /// Creates the store; call ``run()`` in a long-running task before using it.
    /// - Parameters:
    ///   - configuration: Connection settings, table prefix and sweep interval.
    ///   - logger: Receives the client's background messages (errors only, when `nil`).
    public init(_ configuration: Configuration, logger: Logger? = nil) {
        var quiet = Logger(label: "resilience.coordination.postgres")
        quiet.logLevel = .error
        let logger = logger ?? quiet
        self.logger = logger
        client = PostgresClient(configuration: configuration.client, backgroundLogger: logger)
        sweepInterval = configuration.sweepInterval
        callTimeout = configuration.callTimeout
        let prefix = String(configuration.tablePrefix.filter { $0 == "_" || ($0.isASCII && $0.isLowercase) })
        let safePrefix = prefix.isEmpty ? "resilience_coordination" : prefix
        rateTable = safePrefix + "_rate"
        breakerTable = safePrefix + "_breaker"
        schemaTable = safePrefix + "_schema"
        versionSequence = safePrefix + "_version"
    }

    /// Runs the connection pool and sweeps expired rows every ``Configuration/sweepInterval``, until the
    /// task is cancelled.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.client.run() }
            group.addTask {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: self.sweepInterval) } catch { return }
                    _ = try? await self.sweepExpired()
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    // MARK: Schema

    /// Creates or migrates the schema (idempotent; runs once per process on first use).
    public func migrate() async throws(CoordinationStoreError) {
        try await migrated.run { () async throws(CoordinationStoreError) in
            try await self.execute(
                """
                DO $$
                DECLARE current integer;
                BEGIN
                    PERFORM pg_advisory_xact_lock(hashtext('\(unescaped: schemaTable)'));
                    CREATE TABLE IF NOT EXISTS \(unescaped: schemaTable) (version integer NOT NULL);
                    SELECT max(version) INTO current FROM \(unescaped: schemaTable);
                    IF current IS NULL THEN
                        CREATE TABLE IF NOT EXISTS \(unescaped: rateTable) (
                            key text PRIMARY KEY,
                            tat_us bigint NOT NULL,
                            decided_us bigint NOT NULL,
                            granted bigint NOT NULL,
                            first_offset_us bigint NOT NULL,
                            retry_us bigint NOT NULL);
                        CREATE TABLE IF NOT EXISTS \(unescaped: breakerTable) (
                            key text PRIMARY KEY,
                            state text NOT NULL,
                            version bigint NOT NULL,
                            written_us bigint NOT NULL,
                            open_until_us bigint NOT NULL,
                            trips integer NOT NULL,
                            expires_us bigint NOT NULL,
                            probe_holder text,
                            probe_until_us bigint NOT NULL);
                        CREATE SEQUENCE IF NOT EXISTS \(unescaped: versionSequence);
                        INSERT INTO \(unescaped: schemaTable) (version) VALUES (1);
                    ELSIF current > \(unescaped: String(Self.schemaVersion)) THEN
                        RAISE EXCEPTION 'coordination schema version % is newer than this program (\(unescaped: String(Self.schemaVersion)))', current;
                    END IF;
                END $$;
                """)
        }
    }

    // MARK: Decisions

    /// The server's clock in microseconds since the epoch, as one CTE.
    private static let serverNow =
        "WITH c AS (SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS now_us)"

    /// One `INSERT … ON CONFLICT DO UPDATE … RETURNING`: the GCRA reservation on the server's clock.
    public func leaseTokens(_ request: TokenLeaseRequest) async throws(CoordinationStoreError) -> TokenLease {
        if let problem = request.problem { throw .invalidRequest(problem) }
        try await migrate()
        let interval = max(1, Self.microseconds(request.quota.emissionInterval))
        let tolerance = interval * Int64(request.quota.burst - 1)
        let horizon = Self.microseconds(request.horizon)
        let count = Int64(request.count)
        let base = "GREATEST(r.tat_us, EXCLUDED.decided_us)"
        let room = "(EXCLUDED.decided_us + \(horizon + tolerance) - \(base))"
        let granted = "(CASE WHEN \(room) < 0 THEN 0 ELSE LEAST(\(count), \(room) / \(interval) + 1) END)"
        let fresh = "LEAST(\(count), \(horizon + tolerance) / \(interval) + 1)"
        let query: PostgresQuery = """
            \(unescaped: Self.serverNow)
            INSERT INTO \(unescaped: rateTable) AS r (key, tat_us, decided_us, granted, first_offset_us, retry_us)
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

    /// One `SELECT` of the live record.
    public func breakerRecord(key: String) async throws(CoordinationStoreError) -> BreakerRecord? {
        if key.isEmpty { throw .invalidRequest("key must not be empty") }
        try await migrate()
        let query: PostgresQuery = """
            \(unescaped: Self.serverNow)
            SELECT b.state, b.version, GREATEST(0, b.open_until_us - c.now_us), b.trips,
                   CASE WHEN b.probe_until_us > c.now_us THEN b.probe_holder END
            FROM \(unescaped: breakerTable) b, c WHERE b.key = \(key) AND b.expires_us > c.now_us
            """
        let rows = try await fetch(query, as: (String, Int64, Int64, Int32, String?).self)
        guard let (state, version, remaining, trips, holder) = rows.first else { return nil }
        guard let breakerState = BreakerState(rawValue: state) else {
            throw .protocolViolation("unknown breaker state \(state)")
        }
        return BreakerRecord(
            key: key, state: breakerState, version: UInt64(version), remainingOpen: .microseconds(remaining),
            trips: Int(trips), probeHolder: holder)
    }

    /// One `INSERT … ON CONFLICT DO UPDATE … WHERE <version matches> RETURNING`; a conflict reads the current
    /// record to report it.
    public func updateBreaker(
        _ update: BreakerRecordUpdate
    ) async throws(CoordinationStoreError)
        -> BreakerUpdateResult
    {
        if let problem = update.problem { throw .invalidRequest(problem) }
        try await migrate()
        let openFor = update.state == .open ? Self.microseconds(update.openFor) : 0
        let expected = Int64(clamping: update.expectedVersion)
        let query: PostgresQuery = """
            \(unescaped: Self.serverNow)
            INSERT INTO \(unescaped: breakerTable) AS b
                (key, state, version, written_us, open_until_us, trips, expires_us, probe_holder, probe_until_us)
            SELECT \(update.key), \(update.state.rawValue), nextval('\(unescaped: versionSequence)'), c.now_us,
                   c.now_us + \(openFor), \(Int32(clamping: update.trips)),
                   c.now_us + \(Self.microseconds(update.timeToLive)), NULL, 0
            FROM c WHERE \(expected) = 0
                OR EXISTS (SELECT 1 FROM \(unescaped: breakerTable) WHERE key = \(update.key))
            ON CONFLICT (key) DO UPDATE SET
                state = EXCLUDED.state, version = EXCLUDED.version, written_us = EXCLUDED.written_us,
                open_until_us = EXCLUDED.open_until_us, trips = EXCLUDED.trips, expires_us = EXCLUDED.expires_us,
                probe_holder = NULL, probe_until_us = 0
            WHERE (\(expected) = 0 AND b.expires_us <= EXCLUDED.written_us)
                OR (b.version = \(expected) AND b.expires_us > EXCLUDED.written_us)
            RETURNING version, GREATEST(0, open_until_us - written_us)
            """
        let rows = try await fetch(query, as: (Int64, Int64).self)
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
        try await migrate()
        let lease = Self.microseconds(ttl)
        let query: PostgresQuery = """
            \(unescaped: Self.serverNow)
            UPDATE \(unescaped: breakerTable) b SET probe_holder = \(holder), probe_until_us = c.now_us + \(lease),
                expires_us = GREATEST(b.expires_us, c.now_us + \(lease))
            FROM c
            WHERE b.key = \(key) AND b.expires_us > c.now_us AND b.state = 'open' AND b.open_until_us <= c.now_us
                AND (b.probe_holder IS NULL OR b.probe_holder = \(holder) OR b.probe_until_us <= c.now_us)
            RETURNING b.version
            """
        if let version = try await fetch(query, as: Int64.self).first {
            return ProbeLeaseResult(granted: true, version: UInt64(version), retryAfter: .zero)
        }
        let status: PostgresQuery = """
            \(unescaped: Self.serverNow)
            SELECT b.version, b.state, GREATEST(0, b.open_until_us - c.now_us),
                   CASE WHEN b.probe_holder IS NOT NULL THEN GREATEST(0, b.probe_until_us - c.now_us) ELSE 0 END
            FROM \(unescaped: breakerTable) b, c WHERE b.key = \(key) AND b.expires_us > c.now_us
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
        try await migrate()
        try await execute(
            "UPDATE \(unescaped: breakerTable) SET probe_holder = NULL WHERE key = \(key) AND probe_holder = \(holder)")
    }

    /// One statement deleting idle rate rows and expired records.
    @discardableResult
    public func sweepExpired() async throws(CoordinationStoreError) -> Int {
        try await migrate()
        let query: PostgresQuery = """
            \(unescaped: Self.serverNow),
            rates AS (DELETE FROM \(unescaped: rateTable) r USING c WHERE r.tat_us <= c.now_us RETURNING 1),
            records AS (DELETE FROM \(unescaped: breakerTable) b USING c WHERE b.expires_us <= c.now_us RETURNING 1)
            SELECT (SELECT count(*) FROM rates) + (SELECT count(*) FROM records)
            """
        let removed = try await fetch(query, as: Int64.self).first ?? Int64(0)
        return Int(removed)
    }

    /// Rows in the store's tables (live or not yet swept), for tests and dashboards.
    public func rowCount() async throws(CoordinationStoreError) -> Int {
        try await migrate()
        let query: PostgresQuery =
            "SELECT (SELECT count(*) FROM \(unescaped: rateTable)) + (SELECT count(*) FROM \(unescaped: breakerTable))"
        let rows = try await fetch(query, as: Int64.self).first ?? Int64(0)
        return Int(rows)
    }

    // MARK: Plumbing

    private static func microseconds(_ duration: Duration) -> Int64 {
        let parts = duration.components
        let (whole, overflow) = parts.seconds.multipliedReportingOverflow(by: 1_000_000)
        if overflow { return parts.seconds < 0 ? .min / 4 : .max / 4 }
        return min(.max / 4, max(.min / 4, whole + parts.attoseconds / 1_000_000_000_000))
    }

    private func execute(_ query: PostgresQuery) async throws(CoordinationStoreError) {
        _ = try await bounded { try await self.client.query(query, logger: self.logger) }
    }

    /// Runs `body` within ``Configuration/callTimeout`` through Core's timer race on the continuous clock
    /// (cancelled when the time is up), mapping every failure to a store error.
    private func bounded<Value: Sendable>(
        _ body: @escaping @Sendable () async throws -> Value
    )
        async throws(CoordinationStoreError) -> Value
    {
        let timeout = callTimeout
        do {
            return try await withDeadline(after: timeout, clock: .continuous) { try await body() }
        } catch is DeadlineExceededError {
            throw CoordinationStoreError.timedOut(timeout)
        } catch {
            throw Self.map(error)
        }
    }

    private func fetch<each Column: PostgresDecodable & Sendable>(
        _ query: PostgresQuery, as: (repeat each Column).Type
    ) async throws(CoordinationStoreError) -> [(repeat each Column)] {
        let box = try await bounded {
            var result: [(repeat each Column)] = []
            for try await row in try await self.client.query(query, logger: self.logger).decode(
                (repeat each Column).self)
            {
                result.append(row)
            }
            return RowsBox(rows: result)
        }
        return box.rows
    }

    private static func map(_ error: any Error) -> CoordinationStoreError {
        if let error = error as? CoordinationStoreError { return error }
        if error is CancellationError { return .unavailable("cancelled") }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] {
                return .unavailable("server error: \(message)")
            }
            return .unavailable("\(error.code)")
        }
        if error is PostgresDecodingError { return .protocolViolation("\(error)") }
        return .unavailable("\(error)")
    }
}

/// Runs the schema migration once per process; a failed attempt lets the next call try again.
actor MigrationGate {
    private var done = false

    func run(_ body: @Sendable () async throws(CoordinationStoreError) -> Void) async throws(CoordinationStoreError) {
        if done { return }
        try await body()
        done = true
    }
}

/// Rows carried out of a child task.
struct RowsBox<each Column: Sendable>: Sendable {
    var rows: [(repeat each Column)]
}
