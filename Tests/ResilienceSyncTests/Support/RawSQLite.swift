import Foundation

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A bare SQLite connection for tests that need to look under the store or hold a lock against it.
final class RawSQLite {
    private var handle: OpaquePointer?

    init(path: String) throws {
        guard sqlite3_open(path, &handle) == SQLITE_OK else {
            throw RawSQLiteError(message: "cannot open \(path)")
        }
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs `sql`; returns the first column of the first row as text.
    @discardableResult
    func execute(_ sql: String) throws -> String? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            throw RawSQLiteError(message: String(cString: sqlite3_errmsg(handle)))
        }
        defer { sqlite3_finalize(statement) }
        var first: String?
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_ROW {
                if first == nil, let text = sqlite3_column_text(statement, 0) { first = String(cString: text) }
            } else if code == SQLITE_DONE {
                return first
            } else {
                throw RawSQLiteError(message: String(cString: sqlite3_errmsg(handle)))
            }
        }
    }

    /// Runs `body` holding the write-ahead log's checkpoint lock, as this connection would while it checkpoints.
    func holdingCheckpointLock<Result>(_ body: () throws -> Result) throws -> Result {
        try execute("SELECT count(*) FROM sqlite_schema")
        var pointer: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &pointer) == SQLITE_OK,
            let file = pointer, let lock = file.pointee.pMethods?.pointee.xShmLock,
            lock(file, 1, 1, SQLITE_SHM_LOCK | SQLITE_SHM_EXCLUSIVE) == SQLITE_OK
        else { throw RawSQLiteError(message: "cannot take the checkpoint lock") }
        defer { _ = lock(file, 1, 1, SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE) }
        return try body()
    }
}

struct RawSQLiteError: Error {
    var message: String
}
