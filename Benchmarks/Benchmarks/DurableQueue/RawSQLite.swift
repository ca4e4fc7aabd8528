import BenchSQLite
import Foundation

/// The baseline: plain SQLite with the store's durability settings (WAL, `synchronous = FULL`), the same
/// table and indexes, and one prepared INSERT reused for every row.
final class RawSQLite {
    private var handle: OpaquePointer?
    private var insert: OpaquePointer?
    private var counter = 0
    private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(path: String) {
        precondition(sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK)
        execute("PRAGMA journal_mode = WAL")
        execute("PRAGMA synchronous = FULL")
        execute(
            """
            CREATE TABLE IF NOT EXISTS mutations (
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
            CREATE INDEX IF NOT EXISTS mutations_by_state ON mutations (state, id);
            CREATE INDEX IF NOT EXISTS mutations_by_entity ON mutations (entity_type, entity_id, state);
            """)
        let sql = """
            INSERT INTO mutations (entity_type, entity_id, operation, payload, idempotency_key, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """
        precondition(sqlite3_prepare_v2(handle, sql, -1, &insert, nil) == SQLITE_OK)
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_close_v2(handle)
    }

    func execute(_ sql: String) {
        precondition(sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK, String(cString: sqlite3_errmsg(handle)))
    }

    /// Inserts one row (its own transaction unless inside `BEGIN`/`COMMIT`).
    func insertRow(payload: Data) {
        counter += 1
        sqlite3_reset(insert)
        sqlite3_bind_text(insert, 1, "job", -1, transient)
        sqlite3_bind_text(insert, 2, "job-\(counter)", -1, transient)
        sqlite3_bind_text(insert, 3, "create", -1, transient)
        _ = payload.withUnsafeBytes { bytes in
            sqlite3_bind_blob(insert, 4, bytes.baseAddress, Int32(bytes.count), transient)
        }
        sqlite3_bind_text(insert, 5, UUID().uuidString, -1, transient)
        sqlite3_bind_double(insert, 6, Date().timeIntervalSince1970)
        precondition(sqlite3_step(insert) == SQLITE_DONE, String(cString: sqlite3_errmsg(handle)))
    }

    /// Inserts `count` rows in one transaction.
    func insertBatch(_ count: Int, payload: Data) {
        execute("BEGIN IMMEDIATE")
        for _ in 0..<count { insertRow(payload: payload) }
        execute("COMMIT")
    }
}
