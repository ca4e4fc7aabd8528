import Foundation
import ResilienceCore

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A durable ``HTTPCacheStore`` in one SQLite file, bounded by a byte budget with least-recently-used
/// eviction.
///
/// Opening a file that is not a healthy cache database (corrupt, truncated, another program's file) moves it
/// aside to `<path>.corrupt-<unix time>` (``quarantinedPath``; `-2`, `-3`, … appended when a file quarantined in
/// the same second has that name, which it keeps) and starts an empty cache in its place; the
/// same happens when a statement later reports corruption. A file that cannot be opened, read or written for
/// another reason (permissions, a full disk, an I/O error) is kept where it is, and opening throws. A full disk
/// (no space, a quota spent, a file size limit) is its own reason, ``HTTPCacheStoreError/Reason/diskFull``: the
/// write fails, what was stored stays, and reads still answer. A row whose
/// body no longer matches its recorded length, or whose header block cannot be decoded, is deleted and read as
/// absent. Safe to share: one connection guarded by a lock.
///
/// The budget holds for the file, whoever writes to it: several stores may open the same path (two processes,
/// an app and its extension, two stores in one process), and each write runs in one SQLite write transaction
/// that takes the byte total from the database when another connection has committed since (`PRAGMA
/// data_version`), so together they never keep more than the budget of the store writing, and eviction takes
/// the least recently used entries whichever store wrote or read them last. A store waits up to 2 seconds for
/// another connection's write to finish; past that the operation fails (a miss for ``CachingTransport``).
/// Opening a file another connection is busy with waits the same way and never quarantines it.
public final class SQLiteHTTPCacheStore: HTTPCacheStore {
    /// The database file.
    public let path: String
    /// The most bytes kept, as ``HTTPCacheEntry/byteCount`` counts them (bodies, header fields, keys and a fixed
    /// ``HTTPCacheEntry/bookkeepingByteCount`` per entry).
    public let byteBudget: Int
    /// The most variants kept under one key; storing another removes the key's least recently used variant
    /// first, so a response that varies on a value that keeps changing (`Vary: Cookie`) cannot fill the
    /// budget with variants nobody selects again, each read of the key loading all of them.
    public let maximumVariantsPerKey: Int
    private let state: LockedState<Connection>

    /// Opens (creating if needed) the cache database at `path`.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - byteBudget: The most bytes kept; entries larger than it are not stored. Default: 64 MiB.
    ///   - maximumVariantsPerKey: The most variants kept under one key (at least 1). Default: 16.
    /// - Throws: ``HTTPCacheStoreError`` with reason `unavailable` when no database can be opened there, even
    ///   after quarantining a corrupt file, or `diskFull` when the disk has no room for its files; a file system
    ///   failure's message names its `errno`.
    public init(
        path: String, byteBudget: Int = 64 << 20, maximumVariantsPerKey: Int = 16
    ) throws(HTTPCacheStoreError) {
        self.path = path
        self.byteBudget = max(0, byteBudget)
        self.maximumVariantsPerKey = max(1, maximumVariantsPerKey)
        state = LockedState(initialState: try Connection.openQuarantiningCorruption(path: path))
    }

    /// Where a corrupt database was moved aside, if that happened since this store opened.
    public var quarantinedPath: String? { state.withLock { $0.quarantinedPath } }

    /// The bytes currently stored in the file, including what other stores on the same file wrote.
    public var byteCount: Int {
        state.withLock { connection in
            guard connection.isOpen else { return connection.byteCount }
            try? connection.synchronizeByteCount()
            return connection.byteCount
        }
    }

    /// The variants stored under `key`, most recently used first.
    public func entries(forKey key: String) throws(HTTPCacheStoreError) -> [HTTPCacheEntry] {
        try withConnection { (connection) throws(HTTPCacheStoreError) in try connection.entries(forKey: key) }
    }

    /// Stores `entry`, replacing its variant (or, with ``maximumVariantsPerKey`` variants under its key
    /// already, the key's least recently used one), then evicts the least recently used entries to the budget.
    public func store(_ entry: HTTPCacheEntry) throws(HTTPCacheStoreError) {
        let budget = byteBudget
        let maximumVariants = maximumVariantsPerKey
        try withConnection(writing: true) { (connection) throws(HTTPCacheStoreError) in
            try connection.store(entry, budget: budget, maximumVariants: maximumVariants)
        }
    }

    /// Removes every variant under `key`.
    public func removeEntries(forKey key: String) throws(HTTPCacheStoreError) {
        try withConnection(writing: true) { (connection) throws(HTTPCacheStoreError) in
            try connection.inWriteTransaction { (connection) throws(HTTPCacheStoreError) in
                try connection.remove(key: key, variant: nil)
            }
        }
    }

    /// Removes the variant of `key` stored for `variantKey`, keeping the key's other variants.
    public func removeEntry(forKey key: String, variantKey: String) throws(HTTPCacheStoreError) {
        try withConnection(writing: true) { (connection) throws(HTTPCacheStoreError) in
            try connection.inWriteTransaction { (connection) throws(HTTPCacheStoreError) in
                try connection.remove(key: key, variant: variantKey)
            }
        }
    }

    /// Runs `body` with the connection's SQLite handle (`nil` while it is closed) under the store's lock: the seam
    /// tests use to set the connection's limits (`sqlite3_limit`).
    func withConnectionHandle<Result>(_ body: (OpaquePointer?) -> Result) -> Result {
        state.withLock { body($0.isOpen ? $0.handle : nil) }
    }

    deinit { state.withLock { $0.close() } }

    /// Runs `body` on the connection, opened again at ``path`` when it was closed, or, before a write, when its
    /// file, its write-ahead log or its shared-memory index was removed, moved or replaced since it was opened: a
    /// cache never writes on into a file nobody can reach (invisible disk use, lost at the next start), nor through
    /// an index another process opening the file cannot see; it starts over at the path instead (closing
    /// checkpoints a removed log into the file, when no other store has the file open).
    private func withConnection<Result>(
        writing: Bool = false, _ body: (inout Connection) throws(HTTPCacheStoreError) -> Result
    ) throws(HTTPCacheStoreError) -> Result {
        try state.withLock { connection in
            Swift.Result { () throws(HTTPCacheStoreError) -> Result in
                if writing, connection.isOpen, connection.fileHasMoved { connection.close() }
                if !connection.isOpen { connection = try Connection.openQuarantiningCorruption(path: connection.path) }
                return try connection.recoveringFromCorruption(body)
            }
        }.get()
    }
}

extension SQLiteHTTPCacheStore {
    /// The connection and the bookkeeping it keeps in memory; only used under the store's lock.
    ///
    /// The byte total is kept in memory and trusted only while no other connection has committed to the file:
    /// ``knownDataVersion`` is `PRAGMA data_version` when the total was last read from the database (a value
    /// that changes only when another connection commits), and every write transaction compares it first. The
    /// use order needs no memory: a use takes one more than the largest `last_use` in the file, inside its own
    /// statement.
    fileprivate struct Connection {
        var handle: OpaquePointer
        var statements: [String: OpaquePointer] = [:]
        var byteCount = 0
        var knownDataVersion: Int64?
        var quarantinedPath: String?
        var isOpen = true
        let path: String
        /// The write-ahead log at `<path>-wal` when the connection opened (``fileHasMoved``).
        var log: FileIdentity?
        /// The shared-memory index at `<path>-shm` when the connection opened (``fileHasMoved``).
        var index: FileIdentity?

        /// Opens the cache at `path`; a file that is not a healthy cache is quarantined and an empty one opened in
        /// its place. A file another connection is busy with is never taken for an unhealthy one: that only
        /// waits (``openWaitingForOthers(path:)``).
        static func openQuarantiningCorruption(path: String) throws(HTTPCacheStoreError) -> Connection {
            do throws(OpenFailure) {
                return try openWaitingForOthers(path: path)
            } catch {
                guard error.isUnhealthy, FileManager.default.fileExists(atPath: path) else { throw error.error }
                let aside = quarantine(path)
                var connection = try openAfterQuarantine(path: path)
                connection.quarantinedPath = aside
                return connection
            }
        }

        /// ``openWaitingForOthers(path:)`` for a path whose file was just moved aside.
        static func openAfterQuarantine(path: String) throws(HTTPCacheStoreError) -> Connection {
            do throws(OpenFailure) {
                return try openWaitingForOthers(path: path)
            } catch {
                throw error.error
            }
        }

        /// Opens, trying again every 5 ms for up to the busy timeout in all while another connection holds the
        /// file: two connections switching a new file to WAL at once can deadlock on its locks, and SQLite then
        /// answers one of them busy at once, without waiting in the busy handler. Each attempt's own busy
        /// handler waits only for what is left of that time, so a file another connection keeps locked fails
        /// the open after the busy timeout, not after one busy timeout per attempt.
        private static func openWaitingForOthers(path: String) throws(OpenFailure) -> Connection {
            let deadline = ContinuousClock.now + .milliseconds(busyTimeoutMilliseconds)
            while true {
                let left = ContinuousClock.now.duration(to: deadline)
                let leftMilliseconds = Int32(
                    clamping: left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000)
                do throws(OpenFailure) {
                    return try open(path: path, waitingAtMost: max(1, leftMilliseconds))
                } catch let failure where failure.isBusy && leftMilliseconds > 5 {
                    Thread.sleep(forTimeInterval: 0.005)
                }
            }
        }

        /// Why ``open(path:)`` failed: only because another connection held the file (`isBusy`), because the
        /// file is not a healthy cache (`isUnhealthy`: corrupt, another program's file, another schema; the only
        /// failure that quarantines it), or neither (it cannot be opened, read or written: permissions, a full
        /// disk, an I/O error; the file is kept).
        struct OpenFailure: Error {
            var error: HTTPCacheStoreError
            var isBusy: Bool
            var isUnhealthy = false
        }

        /// Opens and checks the file, its busy handler waiting at most `milliseconds` for another connection
        /// meanwhile and ``busyTimeoutMilliseconds`` for each statement afterwards.
        private static func open(path: String, waitingAtMost milliseconds: Int32) throws(OpenFailure) -> Connection {
            var db: OpaquePointer?
            let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
            let code = sqlite3_open_v2(path, &db, flags, nil)
            guard code == SQLITE_OK, let db else {
                let systemError = db.map(Self.systemError(of:)) ?? 0
                let message =
                    db.map { Self.describe(code, String(cString: sqlite3_errmsg($0)), systemError) } ?? "out of memory"
                sqlite3_close_v2(db)
                throw OpenFailure(
                    error: HTTPCacheStoreError(
                        Self.reason(code, systemError, otherwise: .unavailable),
                        message: "cannot open \(path): \(message)"),
                    isBusy: Self.isBusy(code), isUnhealthy: Self.isCorruption(code))
            }
            sqlite3_busy_timeout(db, min(milliseconds, Self.busyTimeoutMilliseconds))
            var connection = Connection(handle: db, path: path)
            var unhealthy = false
            do throws(HTTPCacheStoreError) {
                try connection.execute(
                    """
                    PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
                    CREATE TABLE IF NOT EXISTS http_cache(
                        key TEXT NOT NULL, variant TEXT NOT NULL, status INTEGER NOT NULL, url TEXT,
                        headers BLOB NOT NULL, body BLOB NOT NULL, body_length INTEGER NOT NULL,
                        request_time REAL NOT NULL, response_time REAL NOT NULL, lifetime REAL NOT NULL,
                        initial_age REAL NOT NULL, size INTEGER NOT NULL, last_use INTEGER NOT NULL,
                        PRIMARY KEY(key, variant));
                    CREATE INDEX IF NOT EXISTS http_cache_lru ON http_cache(last_use);
                    """)
                guard try connection.scalarText("PRAGMA quick_check") == "ok" else {
                    unhealthy = true
                    throw HTTPCacheStoreError(.unavailable, message: "\(path) failed its integrity check")
                }
                // A table of another shape (another version's schema, another program's table) would fail
                // every write for good: such a file is not a cache this store can keep.
                let columns = try connection.scalarText(
                    """
                    SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_table_info('http_cache') ORDER BY cid)
                    """)
                guard columns == Self.columns else {
                    unhealthy = true
                    throw HTTPCacheStoreError(.unavailable, message: "\(path) holds another schema: \(columns ?? "")")
                }
                try connection.synchronizeByteCount()
                connection.log = FileIdentity(path: path + "-wal")
                connection.index = FileIdentity(path: path + "-shm")
                sqlite3_busy_timeout(db, Self.busyTimeoutMilliseconds)
            } catch {
                let code = sqlite3_errcode(db)
                let busy = !unhealthy && Self.isBusy(code)
                unhealthy = unhealthy || Self.isCorruption(code)
                connection.close()
                throw OpenFailure(
                    error: HTTPCacheStoreError(
                        error.reason == .diskFull ? .diskFull : .unavailable, message: error.message),
                    isBusy: busy, isUnhealthy: unhealthy)
            }
            return connection
        }

        /// Whether `code` says another connection holds the file (`SQLITE_BUSY`, `SQLITE_LOCKED`).
        private static func isBusy(_ code: Int32) -> Bool {
            code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED
        }

        /// Whether `code` says the file is not a sound database (`SQLITE_CORRUPT`, `SQLITE_NOTADB`).
        private static func isCorruption(_ code: Int32) -> Bool {
            code & 0xFF == SQLITE_CORRUPT || code & 0xFF == SQLITE_NOTADB
        }

        /// How long a statement waits for another connection's write transaction on the same file.
        static let busyTimeoutMilliseconds: Int32 = 2_000

        /// The columns of `http_cache`, in order, as `open` creates them.
        private static let columns =
            "key,variant,status,url,headers,body,body_length,request_time,response_time,lifetime,initial_age,size,"
            + "last_use"

        /// Moves the file at `path` (and its log and index) aside to the next free quarantine name; when it cannot
        /// be moved, removes it (a cache holds nothing that cannot be fetched again) and returns `nil`.
        private static func quarantine(_ path: String) -> String? {
            let aside = QuarantineName.destination(for: path, at: Date())
            let manager = FileManager.default
            do {
                try manager.moveItem(atPath: path, toPath: aside)
            } catch {
                try? manager.removeItem(atPath: path)
                return nil
            }
            for suffix in ["-wal", "-shm"] where manager.fileExists(atPath: path + suffix) {
                try? manager.moveItem(atPath: path + suffix, toPath: aside + suffix)
            }
            return aside
        }

        /// Whether the file this connection opened is no longer at ``path`` (`SQLITE_FCNTL_HAS_MOVED`), the
        /// write-ahead log it writes no longer at `<path>-wal` (removed or replaced: what it holds is then where no
        /// other store on the file can read it, and they cannot open the file at all), or the shared-memory index it
        /// locks and reads no longer at `<path>-shm` (another process opening the file makes an index of its own
        /// there, and two connections appending to one log through two indexes overwrite each other's frames).
        var fileHasMoved: Bool {
            var moved: Int32 = 0
            if sqlite3_file_control(handle, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK, moved != 0 {
                return true
            }
            if log != nil && FileIdentity(path: path + "-wal") != log { return true }
            return index != nil && FileIdentity(path: path + "-shm") != index
        }

        mutating func close() {
            guard isOpen else { return }
            for statement in statements.values { sqlite3_finalize(statement) }
            statements.removeAll()
            sqlite3_close_v2(handle)
            isOpen = false
        }

        /// Runs `body`; when SQLite reports the file corrupt, quarantines it, starts an empty cache and
        /// rethrows.
        mutating func recoveringFromCorruption<Result>(
            _ body: (inout Connection) throws(HTTPCacheStoreError) -> Result
        ) throws(HTTPCacheStoreError) -> Result {
            do throws(HTTPCacheStoreError) {
                return try body(&self)
            } catch {
                let code = sqlite3_errcode(handle) & 0xFF
                guard code == SQLITE_CORRUPT || code == SQLITE_NOTADB else { throw error }
                close()
                let aside = Self.quarantine(path)
                self = try Self.openAfterQuarantine(path: path)
                quarantinedPath = aside
                throw error
            }
        }

        // MARK: Sharing the file

        /// Reads the byte total from the database when another connection has committed since it was last read
        /// (or it was never read, or a failed transaction left it in doubt). The version is read first, so a
        /// commit between the two readings is noticed next time.
        mutating func synchronizeByteCount() throws(HTTPCacheStoreError) {
            let version = try scalarInteger("PRAGMA data_version")
            guard version != knownDataVersion else { return }
            byteCount = Int(try scalarInteger("SELECT COALESCE(SUM(size), 0) FROM http_cache"))
            knownDataVersion = version
        }

        /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`: no other connection writes until it commits)
        /// with the byte total brought up to date first; rolls back and forgets the total when it throws. A
        /// corrupt file is left to ``recoveringFromCorruption(_:)``, which needs SQLite's error code as it is.
        mutating func inWriteTransaction<Result>(
            _ body: (inout Connection) throws(HTTPCacheStoreError) -> Result
        ) throws(HTTPCacheStoreError) -> Result {
            try step("BEGIN IMMEDIATE")
            do throws(HTTPCacheStoreError) {
                try synchronizeByteCount()
                let result = try body(&self)
                try step("COMMIT")
                return result
            } catch {
                knownDataVersion = nil
                let code = sqlite3_errcode(handle) & 0xFF
                if code != SQLITE_CORRUPT, code != SQLITE_NOTADB, sqlite3_get_autocommit(handle) == 0 {
                    sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
                }
                throw error
            }
        }

        // MARK: Operations

        mutating func entries(forKey key: String) throws(HTTPCacheStoreError) -> [HTTPCacheEntry] {
            let select = try prepare(
                """
                SELECT variant, status, url, headers, body, body_length, request_time, response_time, lifetime,
                initial_age FROM http_cache WHERE key = ? ORDER BY last_use DESC
                """)
            defer { sqlite3_reset(select) }
            try bind(select, 1, key)
            var entries: [HTTPCacheEntry] = []
            var damaged: [String] = []
            while true {
                let code = sqlite3_step(select)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { throw failure(code) }
                let variant = Self.text(select, 0) ?? ""
                let body = Self.data(select, 4)
                guard body.count == Int(sqlite3_column_int64(select, 5)),
                    let headers = Self.decodeHeaders(Self.data(select, 3))
                else {
                    damaged.append(variant)
                    continue
                }
                let response = HTTPResponse(
                    status: Int(sqlite3_column_int64(select, 1)), headers: headers, body: body,
                    url: Self.text(select, 2).flatMap { URL(string: $0) })
                entries.append(
                    HTTPCacheEntry(
                        key: key, variantKey: variant, response: response,
                        requestTime: Date(timeIntervalSince1970: sqlite3_column_double(select, 6)),
                        responseTime: Date(timeIntervalSince1970: sqlite3_column_double(select, 7)),
                        freshnessLifetime: sqlite3_column_double(select, 8),
                        initialAge: sqlite3_column_double(select, 9)))
            }
            sqlite3_reset(select)
            // On a full disk what was read is answered all the same: damaged rows stay (skipped again) until a write
            // can remove them, and the use goes unrecorded.
            do throws(HTTPCacheStoreError) {
                if !damaged.isEmpty {
                    try inWriteTransaction { (connection) throws(HTTPCacheStoreError) in
                        for variant in damaged { try connection.remove(key: key, variant: variant) }
                    }
                }
                if !entries.isEmpty {
                    let touch = try prepare(
                        """
                        UPDATE http_cache SET last_use = (SELECT COALESCE(MAX(last_use), 0) + 1 FROM http_cache)
                        WHERE key = ?
                        """)
                    defer { sqlite3_reset(touch) }
                    try bind(touch, 1, key)
                    try run(touch)
                }
            } catch let error where error.reason == .diskFull {
                return entries
            }
            return entries
        }

        /// Replaces the entry's variant, keeps its key to `maximumVariants` and evicts to `budget`, in one write
        /// transaction.
        mutating func store(_ entry: HTTPCacheEntry, budget: Int, maximumVariants: Int) throws(HTTPCacheStoreError) {
            try inWriteTransaction { (connection) throws(HTTPCacheStoreError) in
                try connection.replace(entry, budget: budget, maximumVariants: maximumVariants)
            }
        }

        private mutating func replace(
            _ entry: HTTPCacheEntry, budget: Int, maximumVariants: Int
        ) throws(HTTPCacheStoreError) {
            try remove(key: entry.key, variant: entry.variantKey)
            // The key's least recently used variants go (the earliest stored of those read together), by rowid.
            let count = try prepare("SELECT COUNT(*) FROM http_cache WHERE key = ?")
            try bind(count, 1, entry.key)
            let counted = sqlite3_step(count)
            var variants = counted == SQLITE_ROW ? Int(sqlite3_column_int64(count, 0)) : 0
            sqlite3_reset(count)
            guard counted == SQLITE_ROW else { throw failure(counted) }
            while variants >= maximumVariants {
                let oldest = try prepare(
                    "SELECT rowid, size FROM http_cache WHERE key = ? ORDER BY last_use, rowid LIMIT 1")
                try bind(oldest, 1, entry.key)
                let code = sqlite3_step(oldest)
                guard code == SQLITE_ROW else {
                    sqlite3_reset(oldest)
                    break
                }
                let rowid = sqlite3_column_int64(oldest, 0)
                let size = Int(sqlite3_column_int64(oldest, 1))
                sqlite3_reset(oldest)
                let delete = try prepare("DELETE FROM http_cache WHERE rowid = ?")
                try bind(delete, 1, rowid)
                defer { sqlite3_reset(delete) }
                try run(delete)
                byteCount -= size
                variants -= 1
            }
            let size = entry.byteCount
            guard size <= budget else { return }
            let insert = try prepare(
                """
                INSERT INTO http_cache(key, variant, status, url, headers, body, body_length, request_time,
                response_time, lifetime, initial_age, size, last_use) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,
                (SELECT COALESCE(MAX(last_use), 0) + 1 FROM http_cache))
                """)
            defer { sqlite3_reset(insert) }
            try bind(insert, 1, entry.key)
            try bind(insert, 2, entry.variantKey)
            try bind(insert, 3, Int64(entry.response.status))
            try bind(insert, 4, entry.response.url?.absoluteString)
            try bind(insert, 5, Self.encodeHeaders(entry.response.headers))
            try bind(insert, 6, entry.response.body)
            try bind(insert, 7, Int64(entry.response.body.count))
            try bind(insert, 8, entry.requestTime.timeIntervalSince1970)
            try bind(insert, 9, entry.responseTime.timeIntervalSince1970)
            try bind(insert, 10, entry.freshnessLifetime)
            try bind(insert, 11, entry.initialAge)
            try bind(insert, 12, Int64(size))
            try run(insert)
            byteCount += size
            // The oldest row goes by its rowid: its key and variant may not read back as written (text that is
            // not UTF-8), and a row that could not be deleted would be chosen again for ever.
            while byteCount > budget {
                let oldest = try prepare("SELECT rowid, size FROM http_cache ORDER BY last_use LIMIT 1")
                let code = sqlite3_step(oldest)
                guard code == SQLITE_ROW else {
                    sqlite3_reset(oldest)
                    byteCount = 0
                    break
                }
                let rowid = sqlite3_column_int64(oldest, 0)
                let size = Int(sqlite3_column_int64(oldest, 1))
                sqlite3_reset(oldest)
                let delete = try prepare("DELETE FROM http_cache WHERE rowid = ?")
                defer { sqlite3_reset(delete) }
                try bind(delete, 1, rowid)
                try run(delete)
                byteCount -= size
            }
        }

        /// Removes one variant, or every variant of `key` when `variant` is `nil`, keeping the byte count.
        mutating func remove(key: String, variant: String?) throws(HTTPCacheStoreError) {
            let filter = variant == nil ? "key = ?" : "key = ? AND variant = ?"
            let measure = try prepare("SELECT COALESCE(SUM(size), 0) FROM http_cache WHERE \(filter)")
            try bind(measure, 1, key)
            if let variant { try bind(measure, 2, variant) }
            let code = sqlite3_step(measure)
            let removed = code == SQLITE_ROW ? Int(sqlite3_column_int64(measure, 0)) : 0
            sqlite3_reset(measure)
            guard code == SQLITE_ROW else { throw failure(code) }
            guard removed > 0 else { return }
            let delete = try prepare("DELETE FROM http_cache WHERE \(filter)")
            defer { sqlite3_reset(delete) }
            try bind(delete, 1, key)
            if let variant { try bind(delete, 2, variant) }
            try run(delete)
            byteCount -= removed
        }

        // MARK: SQLite plumbing

        func failure(_ code: Int32) -> HTTPCacheStoreError {
            let systemError = Self.systemError(of: handle)
            return HTTPCacheStoreError(
                Self.reason(code, systemError, otherwise: .storageFailed),
                message: Self.describe(code, String(cString: sqlite3_errmsg(handle)), systemError))
        }

        /// `.diskFull` when the file system had no room for the write: SQLite's `SQLITE_FULL` (a short write to
        /// the database or its log), or an I/O error or refused open whose `errno` says so (the shared-memory
        /// index, a sync or a truncation that failed for want of space); `otherwise` for anything else.
        static func reason(
            _ code: Int32, _ systemError: Int32, otherwise: HTTPCacheStoreError.Reason
        ) -> HTTPCacheStoreError.Reason {
            let primary = code & 0xFF
            if primary == SQLITE_FULL { return .diskFull }
            let fileSystem = primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN
            return fileSystem && DiskFullErrno.matches(systemError) ? .diskFull : otherwise
        }

        /// The `errno` behind the last failure on `handle`, read at once after it: SQLite's record of it, or, when
        /// SQLite kept none (a commit whose log write came up short), the thread's `errno`, which SQLite's failed
        /// system call set and its successful ones since left alone.
        static func systemError(of handle: OpaquePointer) -> Int32 {
            let threadError = errno
            let recorded = sqlite3_system_errno(handle)
            return recorded != 0 ? recorded : threadError
        }

        /// `SQLite <code>: <message>`, and for a failure of the file system (`SQLITE_IOERR`, `SQLITE_CANTOPEN`,
        /// `SQLITE_FULL`) the `errno` behind it, which tells a full disk (`ENOSPC`, `EDQUOT`, `EFBIG`) from a
        /// failing one or a refused open.
        static func describe(_ code: Int32, _ message: String, _ systemError: Int32) -> String {
            let primary = code & 0xFF
            guard primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN || primary == SQLITE_FULL, systemError != 0
            else { return "SQLite \(code): \(message)" }
            return "SQLite \(code): \(message) (errno \(systemError): \(String(cString: strerror(systemError))))"
        }

        func execute(_ sql: String) throws(HTTPCacheStoreError) {
            var errorMessage: UnsafeMutablePointer<CChar>?
            let code = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
            guard code == SQLITE_OK else {
                let systemError = Self.systemError(of: handle)
                let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
                sqlite3_free(errorMessage)
                throw HTTPCacheStoreError(
                    Self.reason(code, systemError, otherwise: .storageFailed),
                    message: Self.describe(code, message, systemError))
            }
        }

        mutating func scalarText(_ sql: String) throws(HTTPCacheStoreError) -> String? {
            let statement = try prepare(sql)
            defer { sqlite3_reset(statement) }
            let code = sqlite3_step(statement)
            guard code == SQLITE_ROW else { throw failure(code) }
            return Self.text(statement, 0)
        }

        mutating func scalarInteger(_ sql: String) throws(HTTPCacheStoreError) -> Int64 {
            let statement = try prepare(sql)
            defer { sqlite3_reset(statement) }
            let code = sqlite3_step(statement)
            guard code == SQLITE_ROW else { throw failure(code) }
            return sqlite3_column_int64(statement, 0)
        }

        mutating func prepare(_ sql: String) throws(HTTPCacheStoreError) -> OpaquePointer {
            if let cached = statements[sql] {
                sqlite3_clear_bindings(cached)
                return cached
            }
            var statement: OpaquePointer?
            let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
            guard code == SQLITE_OK, let statement else { throw failure(code) }
            statements[sql] = statement
            return statement
        }

        func run(_ statement: OpaquePointer) throws(HTTPCacheStoreError) {
            let code = sqlite3_step(statement)
            guard code == SQLITE_DONE || code == SQLITE_ROW else { throw failure(code) }
        }

        /// Runs one statement without parameters (prepared once) and resets it.
        mutating func step(_ sql: String) throws(HTTPCacheStoreError) {
            let statement = try prepare(sql)
            defer { sqlite3_reset(statement) }
            try run(statement)
        }

        private static var transient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

        /// Binds text to a 1-based parameter, all of its UTF-8 bytes: a key with an embedded NUL character is
        /// stored whole, never cut there (where it would be the key that ends at the NUL, another request's).
        func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String?) throws(HTTPCacheStoreError) {
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

        func bind(_ statement: OpaquePointer, _ index: Int32, _ data: Data) throws(HTTPCacheStoreError) {
            let code = data.withUnsafeBytes { buffer in
                if let base = buffer.baseAddress, buffer.count > 0 {
                    return sqlite3_bind_blob64(statement, index, base, sqlite3_uint64(buffer.count), Self.transient)
                }
                return sqlite3_bind_zeroblob(statement, index, 0)
            }
            try bound(code, index)
        }

        func bind(_ statement: OpaquePointer, _ index: Int32, _ value: Int64) throws(HTTPCacheStoreError) {
            try bound(sqlite3_bind_int64(statement, index, value), index)
        }

        func bind(_ statement: OpaquePointer, _ index: Int32, _ value: Double) throws(HTTPCacheStoreError) {
            try bound(sqlite3_bind_double(statement, index, value), index)
        }

        /// Throws for a bind that returned `code`: a parameter SQLite did not take (a value longer than the
        /// connection's length limit, no memory for its copy) is left NULL, and the statement must not run with it.
        private func bound(_ code: Int32, _ index: Int32) throws(HTTPCacheStoreError) {
            guard code != SQLITE_OK else { return }
            let error = failure(code)
            throw HTTPCacheStoreError(error.reason, message: "cannot bind parameter \(index): \(error.message)")
        }

        /// Reads a text column, all of its bytes (an embedded NUL character included).
        static func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
            guard let text = sqlite3_column_text(statement, column) else { return nil }
            let count = Int(sqlite3_column_bytes(statement, column))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }

        static func data(_ statement: OpaquePointer, _ column: Int32) -> Data {
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return Data() }
            return Data(bytes: bytes, count: count)
        }

        /// Header fields as `name NUL value NUL …`. A NUL inside a name or value is written as the two bytes
        /// `C0 80`, which UTF-8 never contains, so it reads back as written instead of ending the field there
        /// (and turning the rest of the value into fields of its own).
        static func encodeHeaders(_ headers: HTTPHeaders) -> Data {
            var bytes: [UInt8] = []
            for field in headers {
                for text in [field.name, field.value] {
                    for byte in text.utf8 {
                        if byte == 0 { bytes += escapedNUL } else { bytes.append(byte) }
                    }
                    bytes.append(0)
                }
            }
            return Data(bytes)
        }

        static func decodeHeaders(_ data: Data) -> HTTPHeaders? {
            guard data.isEmpty || data.last == 0 else { return nil }
            let parts = data.dropLast().split(separator: 0, omittingEmptySubsequences: false)
            guard data.isEmpty || parts.count % 2 == 0 else { return nil }
            var fields: [HTTPHeaders.Field] = []
            var index = parts.startIndex
            while !data.isEmpty, index < parts.endIndex {
                fields.append(HTTPHeaders.Field(name: unescaped(parts[index]), value: unescaped(parts[index + 1])))
                index += 2
            }
            return HTTPHeaders(fields)
        }

        private static let escapedNUL: [UInt8] = [0xC0, 0x80]

        private static func unescaped(_ part: Data) -> String {
            guard part.contains(0xC0) else { return String(decoding: part, as: UTF8.self) }
            var bytes: [UInt8] = []
            var previous: UInt8?
            for byte in part {
                if previous == 0xC0, byte == 0x80 {
                    bytes[bytes.count - 1] = 0
                    previous = nil
                    continue
                }
                bytes.append(byte)
                previous = byte
            }
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
