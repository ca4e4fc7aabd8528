import ResilienceCore

/// The store's versioned schema: each migration runs once, in its own transaction, and bumps
/// `PRAGMA user_version`.
enum SchemaMigrator {
    /// Migration `n` (1-based) brings the schema from version `n - 1` to `n`. Never edit a published one.
    static let migrations: [String] = [
        // 1: the queue. `state` 0 = pending, 1 = failed (kept for review). AUTOINCREMENT: ids are never
        // reused, so an identifier held by an in-flight send can never name a newer mutation.
        """
        CREATE TABLE mutations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            entity_type TEXT NOT NULL,
            entity_id TEXT NOT NULL,
            operation TEXT NOT NULL,
            payload BLOB NOT NULL,
            idempotency_key TEXT NOT NULL UNIQUE,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            created_at REAL NOT NULL,
            state INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX mutations_by_state ON mutations (state, id);
        CREATE INDEX mutations_by_entity ON mutations (entity_type, entity_id, state);
        """,
        // 2: a small key/value table for the sync engine's persisted state (breaker cooldown).
        """
        CREATE TABLE sync_metadata (
            key TEXT PRIMARY KEY NOT NULL,
            value BLOB NOT NULL
        ) WITHOUT ROWID;
        """,
    ]

    /// The schema version this build writes.
    static var latestVersion: Int { migrations.count }

    /// Brings the database to ``latestVersion``.
    ///
    /// - Throws: `DB_002` when the file's schema is newer than this build or negative, or a migration's SQL fails
    ///   (the failed migration is rolled back; earlier ones stay); `DB_001` when the file cannot be written
    ///   (read-only, an I/O error), with SQLite's reason; `DB_004`/`DB_005`/`DB_006` pass through unchanged.
    static func migrate(_ connection: SQLiteConnection) throws {
        let current = try schemaVersion(of: connection)
        guard current < latestVersion else { return }
        for version in (current + 1)...latestVersion {
            do {
                try connection.execute("BEGIN IMMEDIATE")
                // Another connection (another store on the path, another process) may have migrated since the
                // version was read: read it again under the write lock, and run only what is still missing.
                if try schemaVersion(of: connection) < version {
                    try connection.execute(migrations[version - 1])
                    try connection.execute("PRAGMA user_version = \(version)")
                }
                try connection.execute("COMMIT")
            } catch {
                connection.rollback()
                guard let error = error as? MutationStoreError else { throw error }
                if error.code == .corruptedData || error.code == .storageBusy || error.code == .diskFull {
                    throw error
                }
                if error.code == .storageConnectionFailed {
                    throw MutationStoreError(
                        .storageConnectionFailed,
                        message: "\(connection.path) needs its schema migrated to version \(version) and cannot be "
                            + "written: \(error.message)")
                }
                throw MutationStoreError(
                    .migrationFailed, message: "migration to schema version \(version) failed: \(error.message)")
            }
        }
    }

    /// The file's schema version (`PRAGMA user_version`).
    ///
    /// - Throws: `DB_002` when it is newer than this build supports, or negative (no build writes one: a damaged
    ///   header, or a file another program versions its own way).
    private static func schemaVersion(of connection: SQLiteConnection) throws -> Int {
        let version = Int(try connection.scalarText("PRAGMA user_version") ?? "0") ?? 0
        if version < 0 {
            throw MutationStoreError(
                .migrationFailed, message: "the store's schema version \(version) is not one any build writes")
        }
        if version > latestVersion {
            throw MutationStoreError(
                .migrationFailed,
                message: "the store's schema version \(version) is newer than this build supports (\(latestVersion))")
        }
        return version
    }
}
