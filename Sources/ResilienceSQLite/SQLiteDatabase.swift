import Foundation

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// What went wrong in a call to SQLite, before its owner turns it into its own typed error.
package struct SQLiteFailure: Error {
    /// When the failure happened.
    package enum Phase: Sendable {
        /// Opening the database file.
        case opening
        /// A call after ``SQLiteDatabase/close()``.
        case closed
        /// Preparing, stepping or executing a statement.
        case running
    }

    /// The extended result code (`0` when the database was closed).
    package var code: Int32
    /// SQLite's message (with the path when opening).
    package var message: String
    /// When it happened.
    package var phase: Phase

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, …).
    package var primaryCode: Int32 { code & 0xFF }
}

/// One SQLite connection with a cache of prepared statements: the one SQLite wrapper of ResilienceKit, shared
/// by the sync engine's mutation store and the HTTP cache's durable store.
///
/// Its owner decides what a failure is: every failure goes through `failure`, which turns a ``SQLiteFailure``
/// into the owner's typed error, so each store keeps the error contract it documents. Not thread-safe: the
/// owner guards it with a lock.
package final class SQLiteDatabase<Failure: Error> {
    /// The connection, `nil` once closed.
    package private(set) var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private let makeFailure: (SQLiteFailure) -> Failure
    /// The database file.
    package let path: String

    /// Opens (creating if needed) the database at `path`, with extended result codes.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - failure: Turns what went wrong into the owner's typed error.
    package init(path: String, failure: @escaping (SQLiteFailure) -> Failure) throws(Failure) {
        self.path = path
        makeFailure = failure
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw failure(SQLiteFailure(code: code, message: "cannot open \(path): \(message)", phase: .opening))
        }
        sqlite3_extended_result_codes(db, 1)
        handle = db
    }

    deinit { close() }

    /// Whether the connection is open.
    package var isOpen: Bool { handle != nil }

    /// Finalizes every statement and closes the connection; later calls fail with phase `closed`.
    package func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs one or more statements without results.
    package func execute(_ sql: String) throws(Failure) {
        guard let handle else { throw closedFailure }
        var errorMessage: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if code != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw makeFailure(SQLiteFailure(code: code, message: message, phase: .running))
        }
    }

    /// The first column of the first row of `sql` as text (for pragmas); `nil` when there is no row.
    package func scalarText(_ sql: String) throws(Failure) -> String? {
        let statement = try prepare(sql)
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        if code == SQLITE_ROW { return Self.text(statement, 0) }
        if code == SQLITE_DONE { return nil }
        throw failure(code)
    }

    /// The first column of the first row of `sql` as an integer; `0` when there is no row.
    package func scalarInteger(_ sql: String) throws(Failure) -> Int64 {
        let statement = try prepare(sql)
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        if code == SQLITE_ROW { return sqlite3_column_int64(statement, 0) }
        if code == SQLITE_DONE { return 0 }
        throw failure(code)
    }

    /// A cached prepared statement for `sql`, reset and with its bindings cleared.
    package func prepare(_ sql: String) throws(Failure) -> OpaquePointer {
        guard let handle else { throw closedFailure }
        if let cached = statements[sql] {
            sqlite3_reset(cached)
            sqlite3_clear_bindings(cached)
            return cached
        }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw failure(code) }
        statements[sql] = statement
        return statement
    }

    /// Steps a statement that returns no rows, then resets it.
    package func run(_ statement: OpaquePointer) throws(Failure) {
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw failure(code) }
    }

    /// Steps a statement and calls `row` for every result row, then resets it.
    package func query(_ statement: OpaquePointer, row: (OpaquePointer) -> Void) throws(Failure) {
        defer { sqlite3_reset(statement) }
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_ROW {
                row(statement)
            } else if code == SQLITE_DONE {
                return
            } else {
                throw failure(code)
            }
        }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction, rolling back if it throws.
    package func transaction<Result>(_ body: () throws -> Result) throws -> Result {
        try run(prepare("BEGIN IMMEDIATE"))
        do {
            let result = try body()
            try run(prepare("COMMIT"))
            return result
        } catch {
            rollback()
            throw error
        }
    }

    /// Rolls back the open transaction, if any (SQLite may already have rolled it back after an I/O error).
    package func rollback() {
        guard let handle, sqlite3_get_autocommit(handle) == 0 else { return }
        sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
    }

    /// The rowid of the last insert.
    package var lastInsertedRowID: Int64 {
        handle.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// How many rows the last statement changed.
    package var changes: Int {
        handle.map { Int(sqlite3_changes($0)) } ?? 0
    }

    /// The primary result code of the connection's last failed call (`SQLITE_OK` when closed).
    package var lastPrimaryCode: Int32 {
        handle.map { sqlite3_errcode($0) & 0xFF } ?? SQLITE_OK
    }

    /// The owner's typed error for result `code`, with the connection's message.
    package func failure(_ code: Int32) -> Failure {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "connection closed"
        return makeFailure(SQLiteFailure(code: code, message: message, phase: .running))
    }

    private var closedFailure: Failure {
        makeFailure(SQLiteFailure(code: 0, message: "the database is closed", phase: .closed))
    }
}

extension SQLiteDatabase {
    /// SQLite copies bound text and blobs when given this destructor.
    private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    /// Binds text, or null for `nil`, to a 1-based parameter.
    package func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String?) {
        guard let text else {
            sqlite3_bind_null(statement, index)
            return
        }
        sqlite3_bind_text(statement, index, text, -1, Self.transient)
    }

    /// Binds an integer to a 1-based parameter.
    package func bind(_ statement: OpaquePointer, _ index: Int32, _ value: Int64) {
        sqlite3_bind_int64(statement, index, value)
    }

    /// Binds a double to a 1-based parameter.
    package func bind(_ statement: OpaquePointer, _ index: Int32, _ value: Double) {
        sqlite3_bind_double(statement, index, value)
    }

    /// Binds a blob (never null: an empty blob for empty data).
    package func bind(_ statement: OpaquePointer, _ index: Int32, _ data: Data) {
        _ = data.withUnsafeBytes { buffer in
            if let base = buffer.baseAddress, buffer.count > 0 {
                sqlite3_bind_blob64(statement, index, base, sqlite3_uint64(buffer.count), Self.transient)
            } else {
                sqlite3_bind_zeroblob(statement, index, 0)
            }
        }
    }

    /// Reads a text column.
    package static func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
        sqlite3_column_text(statement, column).map { String(cString: $0) }
    }

    /// Reads a blob column.
    package static func data(_ statement: OpaquePointer, _ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}
