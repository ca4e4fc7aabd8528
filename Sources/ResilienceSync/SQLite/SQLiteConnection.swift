import Foundation
import ResilienceCore

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// One SQLite connection with a cache of prepared statements. Not thread-safe: its owner guards it with a
/// lock (``SQLiteMutationStore`` keeps it inside a `LockedState`).
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    let path: String

    /// Opens (creating if needed) the database at `path`.
    init(path: String) throws {
        self.path = path
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            let systemError = db.map { Self.systemError(of: $0) } ?? 0
            sqlite3_close_v2(db)
            throw SQLiteConnection.error(
                code, message: "cannot open \(path): \(message)", systemError: systemError, opening: true)
        }
        sqlite3_extended_result_codes(db, 1)
        handle = db
    }

    deinit { close() }

    /// Finalizes every statement and closes the connection.
    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    /// Runs one or more statements without results.
    func execute(_ sql: String) throws {
        guard let handle else { throw Self.closedError }
        var errorMessage: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if code != SQLITE_OK {
            let systemError = Self.systemError(of: handle)
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw Self.error(code, message: message, systemError: systemError)
        }
    }

    /// The first column of the first row of `sql`, as text (for pragmas).
    func scalarText(_ sql: String) throws -> String? {
        let statement = try prepare(sql)
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        if code == SQLITE_ROW {
            return sqlite3_column_text(statement, 0).map { String(cString: $0) }
        }
        if code == SQLITE_DONE { return nil }
        throw lastError(code)
    }

    /// A cached prepared statement for `sql`, reset and with its bindings cleared.
    func prepare(_ sql: String) throws -> OpaquePointer {
        guard let handle else { throw Self.closedError }
        if let cached = statements[sql] {
            sqlite3_reset(cached)
            sqlite3_clear_bindings(cached)
            return cached
        }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw lastError(code) }
        statements[sql] = statement
        return statement
    }

    /// Steps a statement that returns no rows, then resets it.
    func run(_ statement: OpaquePointer) throws {
        defer { sqlite3_reset(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw lastError(code) }
    }

    /// Steps a statement and calls `row` for every result row, then resets it.
    func query(_ statement: OpaquePointer, row: (OpaquePointer) -> Void) throws {
        defer { sqlite3_reset(statement) }
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_ROW {
                row(statement)
            } else if code == SQLITE_DONE {
                return
            } else {
                throw lastError(code)
            }
        }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE` transaction, rolling back if it throws.
    func transaction<Result>(_ body: () throws -> Result) throws -> Result {
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
    func rollback() {
        guard let handle, sqlite3_get_autocommit(handle) == 0 else { return }
        sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
    }

    /// Whether the file this connection opened is no longer at its path (removed, renamed or replaced since):
    /// SQLite's `SQLITE_FCNTL_HAS_MOVED`, one `stat` of the path.
    var fileHasMoved: Bool {
        guard let handle else { return false }
        var moved: Int32 = 0
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK else { return false }
        return moved != 0
    }

    /// The size in bytes of the file this connection opened (`fstat` of its descriptor, through the VFS), or
    /// `nil` when it cannot be read.
    var fileSize: Int64? {
        guard let file = mainFile, let size = file.pointee.pMethods?.pointee.xFileSize else { return nil }
        var bytes: sqlite3_int64 = 0
        guard size(file, &bytes) == SQLITE_OK else { return nil }
        return Int64(bytes)
    }

    /// How many bytes the database in the file this connection opened takes as its header records it (page size
    /// times page count, as of the last checkpoint: the file is never shorter while it is whole); `0` when the
    /// header makes no claim (its page count is not marked valid), `nil` when the header cannot be read (the file
    /// is shorter than it). One read of the file's first 100 bytes, through the VFS.
    var databaseSizeInHeader: Int64? {
        guard let file = mainFile, let read = file.pointee.pMethods?.pointee.xRead else { return nil }
        var header = [UInt8](repeating: 0, count: 100)
        guard read(file, &header, 100, 0) == SQLITE_OK else { return nil }
        func integer(at offset: Int) -> Int64 { header[offset..<offset + 4].reduce(0) { $0 << 8 | Int64($1) } }
        // The page count (offset 28) holds only while the change counter (24) equals "version valid for" (92).
        guard integer(at: 24) == integer(at: 92) else { return 0 }
        let pageSize = Int64(header[16]) << 8 | Int64(header[17])
        return (pageSize == 1 ? 65_536 : pageSize) * integer(at: 28)
    }

    /// The size in bytes of the write-ahead log this connection writes (`fstat` of its descriptor, through the
    /// VFS: the file it opened, even when that is no longer at its path), or `nil` when it has none open.
    var logFileSize: Int64? {
        guard let handle else { return nil }
        var pointer: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &pointer) == SQLITE_OK,
            let file = pointer, let size = file.pointee.pMethods?.pointee.xFileSize
        else { return nil }
        var bytes: sqlite3_int64 = 0
        guard size(file, &bytes) == SQLITE_OK else { return nil }
        return Int64(bytes)
    }

    /// The write-ahead log at this connection's path (`<path>-wal`), or `nil` when there is none.
    var logIdentity: FileIdentity? { FileIdentity(path: path + "-wal") }

    /// The shared-memory index at this connection's path (`<path>-shm`), or `nil` when there is none.
    var indexIdentity: FileIdentity? { FileIdentity(path: path + "-shm") }

    /// Runs `body` while this connection holds the write-ahead log's checkpoint lock, so no other connection's
    /// checkpoint is writing to the file meanwhile; `nil` without running it when another connection holds the
    /// lock (a checkpoint is running). Does not wait. Where the lock cannot be asked for (no shared-memory index
    /// through this VFS), `body` runs without it.
    func excludingCheckpoints<Result>(_ body: () -> Result) -> Result? {
        guard let file = mainFile, let methods = file.pointee.pMethods?.pointee, methods.iVersion >= 2,
            let lock = methods.xShmLock
        else { return body() }
        // The checkpoint lock is the wal-index's lock slot 1 (`WAL_CKPT_LOCK`).
        let code = lock(file, 1, 1, SQLITE_SHM_LOCK | SQLITE_SHM_EXCLUSIVE)
        guard code == SQLITE_OK else { return code & 0xFF == SQLITE_BUSY ? nil : body() }
        defer { _ = lock(file, 1, 1, SQLITE_SHM_UNLOCK | SQLITE_SHM_EXCLUSIVE) }
        return body()
    }

    /// The open database file, as the VFS holds it.
    private var mainFile: UnsafeMutablePointer<sqlite3_file>? {
        guard let handle else { return nil }
        var pointer: UnsafeMutablePointer<sqlite3_file>?
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_FILE_POINTER, &pointer) == SQLITE_OK else {
            return nil
        }
        return pointer
    }

    /// Writes the whole database as this connection reads it (its write-ahead log included) to a new file at
    /// `path` (`VACUUM INTO`).
    func copy(to path: String) throws {
        guard let handle else { throw Self.closedError }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, "VACUUM INTO ?", -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw lastError(code) }
        defer { sqlite3_finalize(statement) }
        try bind(statement, 1, path)
        let step = sqlite3_step(statement)
        guard step == SQLITE_DONE else { throw lastError(step) }
    }

    /// The rowid of the last insert.
    var lastInsertedRowID: Int64 {
        handle.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// How many rows the last statement changed.
    var changes: Int {
        handle.map { Int(sqlite3_changes($0)) } ?? 0
    }

    /// The typed error for `code`, with the connection's message.
    func lastError(_ code: Int32) -> MutationStoreError {
        let systemError = handle.map { Self.systemError(of: $0) } ?? 0
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "connection closed"
        return Self.error(code, message: message, systemError: systemError)
    }

    /// The `errno` behind the last failure on `handle`, read at once after it: SQLite's record of it
    /// (`sqlite3_system_errno`), or, when SQLite kept none (a commit whose log write failed), the thread's
    /// `errno`, which SQLite's failed system call set and its successful ones since left alone.
    static func systemError(of handle: OpaquePointer) -> Int32 {
        let threadError = errno
        let recorded = sqlite3_system_errno(handle)
        return recorded != 0 ? recorded : threadError
    }

    private static let closedError = MutationStoreError(.storageConnectionFailed, message: "the store is closed")

    /// Maps an SQLite result code to the typed error the contract promises. `systemError` is the `errno` SQLite
    /// saw (`sqlite3_system_errno`): an I/O error whose cause is a full disk, a spent quota or a file size limit
    /// (SQLite reports `SQLITE_FULL` only for a short write to the database or its log; the shared-memory index,
    /// a sync or a truncation that fails for want of space is an `SQLITE_IOERR`) is `DB_005`, and any other I/O
    /// error (a failing disk, a file system remounted read-only) `DB_001`, the file being unusable.
    static func error(
        _ code: Int32, message: String, systemError: Int32 = 0, opening: Bool = false
    ) -> MutationStoreError {
        let primary = code & 0xFF
        let failureCode: FailureCode
        switch primary {
        case SQLITE_BUSY, SQLITE_LOCKED: failureCode = .storageBusy
        case SQLITE_FULL: failureCode = .diskFull
        case SQLITE_CONSTRAINT, SQLITE_TOOBIG: failureCode = .constraintViolation
        case SQLITE_CORRUPT, SQLITE_NOTADB: failureCode = .corruptedData
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY, SQLITE_AUTH: failureCode = .storageConnectionFailed
        case SQLITE_IOERR where DiskFullErrno.matches(systemError): failureCode = .diskFull
        case SQLITE_IOERR: failureCode = .storageConnectionFailed
        default: failureCode = opening ? .storageConnectionFailed : .unknown
        }
        guard primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN, systemError != 0 else {
            return MutationStoreError(failureCode, message: "\(message) (SQLite \(code))")
        }
        let reason = String(cString: strerror(systemError))
        return MutationStoreError(failureCode, message: "\(message) (SQLite \(code), errno \(systemError): \(reason))")
    }
}

extension SQLiteConnection {
    /// SQLite copies bound text and blobs when given this destructor.
    static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

    /// Binds text to a 1-based parameter, all of its UTF-8 bytes (an embedded NUL character included).
    func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String?) throws {
        guard let text else {
            try bound(sqlite3_bind_null(statement, index), index)
            return
        }
        var utf8 = text
        let code = utf8.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress, !chars.isEmpty else {
                    return sqlite3_bind_text(statement, index, "", 0, Self.transient)
                }
                return sqlite3_bind_text64(
                    statement, index, base, sqlite3_uint64(chars.count), Self.transient, UInt8(SQLITE_UTF8))
            }
        }
        try bound(code, index)
    }

    /// Binds an integer to a 1-based parameter.
    func bind(_ statement: OpaquePointer, _ index: Int32, _ value: Int64) throws {
        try bound(sqlite3_bind_int64(statement, index, value), index)
    }

    /// Binds a double to a 1-based parameter.
    func bind(_ statement: OpaquePointer, _ index: Int32, _ value: Double) throws {
        try bound(sqlite3_bind_double(statement, index, value), index)
    }

    /// Binds a blob (never null: an empty blob for empty data).
    func bind(_ statement: OpaquePointer, _ index: Int32, _ data: Data) throws {
        let code = data.withUnsafeBytes { buffer in
            if let base = buffer.baseAddress, buffer.count > 0 {
                return sqlite3_bind_blob64(statement, index, base, sqlite3_uint64(buffer.count), Self.transient)
            }
            return sqlite3_bind_zeroblob(statement, index, 0)
        }
        try bound(code, index)
    }

    /// Throws the typed error for a bind that returned `code`: a parameter SQLite did not take (a value longer than
    /// the connection's length limit, no memory for its copy) is left NULL, and the statement must not run with it.
    private func bound(_ code: Int32, _ index: Int32) throws {
        guard code != SQLITE_OK else { return }
        let error = lastError(code)
        throw MutationStoreError(error.code, message: "cannot bind parameter \(index): \(error.message)")
    }

    /// Reads a text column, all of its bytes (an embedded NUL character included).
    static func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
        guard let text = sqlite3_column_text(statement, column) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Reads a blob column.
    static func data(_ statement: OpaquePointer, _ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}
