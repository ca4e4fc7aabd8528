/// The store's schema: the SQL of each version, the names derived from a table prefix, and the run-time
/// migration that applies the same SQL. The files in the package's `Schema/` directory are this SQL for the
/// default prefix (a test keeps them equal), for operators who apply migrations with their own tools.
public struct PostgresCoordinationSchema: Hashable, Sendable {
    /// The schema version this program creates, migrates to and expects.
    public static let currentVersion = 2

    /// The prefix of every table, index, sequence, function and notification channel (`[a-z_]` only).
    public let prefix: String

    /// Creates the names for a prefix; characters other than `a`–`z` and `_` are dropped, and an empty result
    /// falls back to `resilience_coordination`.
    /// - Parameter prefix: The table prefix.
    public init(prefix: String = "resilience_coordination") {
        let kept = String(prefix.filter { $0 == "_" || ($0.isASCII && $0.isLowercase) })
        self.prefix = kept.isEmpty ? "resilience_coordination" : kept
    }

    var rateTable: String { prefix + "_rate" }
    var breakerTable: String { prefix + "_breaker" }
    var schemaTable: String { prefix + "_schema" }
    var versionSequence: String { prefix + "_version" }
    /// The channel breaker changes are announced on (`LISTEN`/`NOTIFY`).
    var breakerChannel: String { prefix + "_breaker_changed" }
    /// The advisory lock a sweep holds for its transaction, so one instance sweeps at a time.
    var sweeperLockName: String { prefix + "_sweeper" }

    /// The SQL that takes the schema from `version - 1` to `version` (1 creates it), idempotent; `nil` for a
    /// version this program does not know. Statements end with `;` and contain no transaction control, so a
    /// migration tool may wrap each file in its own transaction.
    /// - Parameter version: The version to migrate to, 1 … ``currentVersion``.
    public func migration(to version: Int) -> String? {
        switch version {
        case 1:
            return """
                -- ResilienceKit PostgreSQL coordination store, schema version 1: the tables and the version sequence.
                CREATE TABLE IF NOT EXISTS \(schemaTable) (version integer NOT NULL);
                CREATE TABLE IF NOT EXISTS \(rateTable) (
                    key text PRIMARY KEY,
                    tat_us bigint NOT NULL,
                    decided_us bigint NOT NULL,
                    granted bigint NOT NULL,
                    first_offset_us bigint NOT NULL,
                    retry_us bigint NOT NULL);
                CREATE TABLE IF NOT EXISTS \(breakerTable) (
                    key text PRIMARY KEY,
                    state text NOT NULL,
                    version bigint NOT NULL,
                    written_us bigint NOT NULL,
                    open_until_us bigint NOT NULL,
                    trips integer NOT NULL,
                    expires_us bigint NOT NULL,
                    probe_holder text,
                    probe_until_us bigint NOT NULL);
                CREATE SEQUENCE IF NOT EXISTS \(versionSequence);
                INSERT INTO \(schemaTable) (version) SELECT 1 WHERE NOT EXISTS (SELECT 1 FROM \(schemaTable));

                """
        case 2:
            return """
                -- ResilienceKit PostgreSQL coordination store, schema version 2: indexed expiry for the sweeper, and a
                -- notification on every breaker change (the key as payload; empty when the key is too long for one).
                CREATE INDEX IF NOT EXISTS \(rateTable)_tat_us ON \(rateTable) (tat_us);
                CREATE INDEX IF NOT EXISTS \(breakerTable)_expires_us ON \(breakerTable) (expires_us);
                CREATE OR REPLACE FUNCTION \(breakerChannel)() RETURNS trigger LANGUAGE plpgsql AS $notify$
                BEGIN
                    PERFORM pg_notify('\(breakerChannel)',
                        CASE WHEN octet_length(NEW.key) < 7900 THEN NEW.key ELSE '' END);
                    RETURN NULL;
                END $notify$;
                DROP TRIGGER IF EXISTS \(breakerChannel) ON \(breakerTable);
                CREATE TRIGGER \(breakerChannel) AFTER INSERT OR UPDATE ON \(breakerTable)
                    FOR EACH ROW EXECUTE FUNCTION \(breakerChannel)();
                UPDATE \(schemaTable) SET version = 2 WHERE version < 2;

                """
        default:
            return nil
        }
    }

    /// The grants an application role needs when another role owns the schema, for psql with the role in the
    /// `app_role` variable (`psql -v app_role=app -f Schema/grants.sql`).
    public var grants: String {
        """
        -- ResilienceKit PostgreSQL coordination store: what the application's role needs when it does not own the
        -- schema: psql -v app_role=app -f grants.sql. Run-time DDL (createsSchema) needs CREATE instead.
        GRANT SELECT ON \(schemaTable) TO :"app_role";
        GRANT SELECT, INSERT, UPDATE, DELETE ON \(rateTable), \(breakerTable) TO :"app_role";
        GRANT USAGE ON SEQUENCE \(versionSequence) TO :"app_role";

        """
    }

    /// Makes the rate table `UNLOGGED` (no write-ahead log: faster writes; emptied after a server crash, and not
    /// replicated to standbys) or logged again.
    /// - Parameter unlogged: The persistence to set.
    public func rateTablePersistence(unlogged: Bool) -> String {
        """
        -- ResilienceKit PostgreSQL coordination store, optional: the rate table \(unlogged ? "UNLOGGED" : "LOGGED").
        ALTER TABLE \(rateTable) SET \(unlogged ? "UNLOGGED" : "LOGGED");

        """
    }

    /// One `DO` block that creates or migrates the schema to ``currentVersion`` under an advisory lock (replicas
    /// starting together do not race), and sets the rate table's persistence when asked.
    func runTimeMigration(rateTableUnlogged: Bool?) -> String {
        var steps = ""
        for version in 1...Self.currentVersion {
            steps += "IF current < \(version) THEN\n\(migration(to: version) ?? "")END IF;\n"
        }
        var persistence = ""
        if let unlogged = rateTableUnlogged {
            let wanted = unlogged ? "u" : "p"
            persistence = """
                IF (SELECT relpersistence FROM pg_class WHERE oid = '\(rateTable)'::regclass) <> '\(wanted)' THEN
                \(rateTablePersistence(unlogged: unlogged))END IF;

                """
        }
        return """
            DO $migrate$
            DECLARE current integer;
            BEGIN
            PERFORM pg_advisory_xact_lock(hashtext('\(schemaTable)'));
            CREATE TABLE IF NOT EXISTS \(schemaTable) (version integer NOT NULL);
            SELECT coalesce(max(version), 0) INTO current FROM \(schemaTable);
            IF current > \(Self.currentVersion) THEN
                RAISE EXCEPTION 'coordination schema version % is newer than this program (\(Self.currentVersion))', current
                    USING ERRCODE = 'RKS01';
            END IF;
            \(steps)\(persistence)END $migrate$;
            """
    }

    /// One row: the schema version (0 when the version table is missing), then whether each object exists and
    /// whether the connected role holds each privilege the store uses.
    var inspection: String {
        let tables = [rateTable, breakerTable]
        let privileges = ["SELECT", "INSERT", "UPDATE", "DELETE"]
        var checks: [String] = []
        for table in tables {
            for privilege in privileges {
                checks.append(
                    "CASE WHEN to_regclass('\(table)') IS NULL THEN true "
                        + "ELSE has_table_privilege('\(table)', '\(privilege)') END")
            }
        }
        checks.append(
            "CASE WHEN to_regclass('\(versionSequence)') IS NULL THEN true "
                + "ELSE has_sequence_privilege('\(versionSequence)', 'USAGE') END")
        checks.append(
            "CASE WHEN to_regclass('\(schemaTable)') IS NULL THEN true "
                + "ELSE has_table_privilege('\(schemaTable)', 'SELECT') END")
        let objects = [schemaTable, rateTable, breakerTable, versionSequence]
            .map { "to_regclass('\($0)') IS NOT NULL" }.joined(separator: " AND ")
        return "SELECT \(objects), \(checks.joined(separator: " AND "))"
    }
}
