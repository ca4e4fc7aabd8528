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
    /// - Throws: `DB_002` when the file's schema is newer than this build or a migration fails (the failed
    ///   migration is rolled back; earlier ones stay); `DB_004`/`DB_006` pass through unchanged.
    static func migrate(_ connection: SQLiteConnection) throws {
        let current = Int(try connection.scalarText("PRAGMA user_version") ?? "0") ?? 0
        if current > latestVersion {
            throw MutationStoreError(
                .migrationFailed,
                message: "the store's schema version \(current) is newer than this build supports (\(latestVersion))")
        }
        guard current < latestVersion else { return }
        for version in (current + 1)...latestVersion {
            do {
                try connection.execute("BEGIN IMMEDIATE")
                try connection.execute(migrations[version - 1])
                try connection.execute("PRAGMA user_version = \(version)")
                try connection.execute("COMMIT")
            } catch {
                connection.rollback()
                guard let error = error as? MutationStoreError else { throw error }
                if error.code == .corruptedData || error.code == .storageBusy || error.code == .diskFull {
                    throw error
                }
                throw MutationStoreError(
                    .migrationFailed, message: "migration to schema version \(version) failed: \(error.message)")
            }
        }
    }
}
