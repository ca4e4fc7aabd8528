import Foundation
import ResilienceCore
import ResilienceSQLite

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A durable ``HTTPCacheStore`` in one SQLite file, bounded by a byte budget with least-recently-used
/// eviction.
///
/// Opening a file that is not a healthy cache database (corrupt, truncated, another program's file) moves it
/// aside to `<path>.corrupt-<unix time>` (``quarantinedPath``) and starts an empty cache in its place; the
/// same happens when a statement later reports corruption. A row whose body no longer matches its recorded
/// length, or whose header block cannot be decoded, is deleted and read as absent. Safe to share: one
/// connection guarded by a lock.
public final class SQLiteHTTPCacheStore: HTTPCacheStore {
    /// The database file.
    public let path: String
    /// The most bytes kept (bodies, header fields and keys).
    public let byteBudget: Int
    private let state: LockedState<Connection>

    /// Opens (creating if needed) the cache database at `path`.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - byteBudget: The most bytes kept; entries larger than it are not stored. Default: 64 MiB.
    /// - Throws: ``HTTPCacheStoreError`` with reason `unavailable` when no database can be opened there, even
    ///   after quarantining a corrupt file.
    public init(path: String, byteBudget: Int = 64 << 20) throws(HTTPCacheStoreError) {
        self.path = path
        self.byteBudget = max(0, byteBudget)
        state = LockedState(initialState: try Connection.openQuarantiningCorruption(path: path))
    }

    /// Where a corrupt database was moved aside, if that happened since this store opened.
    public var quarantinedPath: String? { state.withLock { $0.quarantinedPath } }

    /// The bytes currently stored.
    public var byteCount: Int { state.withLock { $0.byteCount } }

    /// The variants stored under `key`, most recently used first.
    public func entries(forKey key: String) throws(HTTPCacheStoreError) -> [HTTPCacheEntry] {
        try withConnection { (connection) throws(HTTPCacheStoreError) in try connection.entries(forKey: key) }
    }

    /// Stores `entry`, replacing its variant, then evicts the least recently used entries to the budget.
    public func store(_ entry: HTTPCacheEntry) throws(HTTPCacheStoreError) {
        let budget = byteBudget
        try withConnection { (connection) throws(HTTPCacheStoreError) in try connection.store(entry, budget: budget) }
    }

    /// Removes every variant under `key`.
    public func removeEntries(forKey key: String) throws(HTTPCacheStoreError) {
        try withConnection { (connection) throws(HTTPCacheStoreError) in try connection.remove(key: key, variant: nil) }
    }

    deinit { state.withLock { $0.close() } }

    private func withConnection<Result>(
        _ body: (inout Connection) throws(HTTPCacheStoreError) -> Result
    ) throws(HTTPCacheStoreError) -> Result {
        try state.withLock { connection in
            Swift.Result { () throws(HTTPCacheStoreError) -> Result in
                if !connection.isOpen { connection = try Connection.openQuarantiningCorruption(path: connection.path) }
                return try connection.recoveringFromCorruption(body)
            }
        }.get()
    }
}

extension SQLiteHTTPCacheStore {
    /// The connection and the bookkeeping it keeps in memory; only used under the store's lock.
    fileprivate struct Connection {
        typealias Database = SQLiteDatabase<HTTPCacheStoreError>

        let database: Database
        var byteCount = 0
        var useCounter: Int64 = 0
        var quarantinedPath: String?
        var isOpen: Bool { database.isOpen }
        var path: String { database.path }

        static func openQuarantiningCorruption(path: String) throws(HTTPCacheStoreError) -> Connection {
            do throws(HTTPCacheStoreError) {
                return try open(path: path)
            } catch {
                guard FileManager.default.fileExists(atPath: path) else { throw error }
                let aside = quarantine(path)
                var connection = try open(path: path)
                connection.quarantinedPath = aside
                return connection
            }
        }

        private static func open(path: String) throws(HTTPCacheStoreError) -> Connection {
            var connection = Connection(database: try Database(path: path, failure: cacheStoreError))
            do throws(HTTPCacheStoreError) {
                try connection.database.execute(
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
                guard try connection.database.scalarText("PRAGMA quick_check") == "ok" else {
                    throw HTTPCacheStoreError(.unavailable, message: "\(path) failed its integrity check")
                }
                connection.byteCount = Int(
                    try connection.database.scalarInteger("SELECT COALESCE(SUM(size), 0) FROM http_cache"))
                connection.useCounter = try connection.database.scalarInteger(
                    "SELECT COALESCE(MAX(last_use), 0) FROM http_cache")
            } catch {
                connection.close()
                throw HTTPCacheStoreError(.unavailable, message: error.message)
            }
            return connection
        }

        private static func quarantine(_ path: String) -> String? {
            let aside = "\(path).corrupt-\(Int(Date().timeIntervalSince1970))"
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

        func close() {
            database.close()
        }

        /// The store's typed error for an SQLite failure: `unavailable` when the file cannot be opened,
        /// `storageFailed` for any later failure.
        static func cacheStoreError(_ failure: SQLiteFailure) -> HTTPCacheStoreError {
            switch failure.phase {
            case .opening: HTTPCacheStoreError(.unavailable, message: failure.message)
            case .closed, .running:
                HTTPCacheStoreError(.storageFailed, message: "SQLite \(failure.code): \(failure.message)")
            }
        }

        /// Runs `body`; when SQLite reports the file corrupt, quarantines it, starts an empty cache and
        /// rethrows.
        mutating func recoveringFromCorruption<Result>(
            _ body: (inout Connection) throws(HTTPCacheStoreError) -> Result
        ) throws(HTTPCacheStoreError) -> Result {
            do throws(HTTPCacheStoreError) {
                return try body(&self)
            } catch {
                let code = database.lastPrimaryCode
                guard code == SQLITE_CORRUPT || code == SQLITE_NOTADB else { throw error }
                close()
                let aside = Self.quarantine(path)
                self = try Self.open(path: path)
                quarantinedPath = aside
                throw error
            }
        }

        // MARK: Operations

        mutating func entries(forKey key: String) throws(HTTPCacheStoreError) -> [HTTPCacheEntry] {
            let select = try database.prepare(
                """
                SELECT variant, status, url, headers, body, body_length, request_time, response_time, lifetime,
                initial_age FROM http_cache WHERE key = ? ORDER BY last_use DESC
                """)
            database.bind(select, 1, key)
            var entries: [HTTPCacheEntry] = []
            var damaged: [String] = []
            try database.query(select) { row in
                let variant = Database.text(row, 0) ?? ""
                let body = Database.data(row, 4)
                guard body.count == Int(sqlite3_column_int64(row, 5)),
                    let headers = Self.decodeHeaders(Database.data(row, 3))
                else {
                    damaged.append(variant)
                    return
                }
                let response = HTTPResponse(
                    status: Int(sqlite3_column_int64(row, 1)), headers: headers, body: body,
                    url: Database.text(row, 2).flatMap { URL(string: $0) })
                entries.append(
                    HTTPCacheEntry(
                        key: key, variantKey: variant, response: response,
                        requestTime: Date(timeIntervalSince1970: sqlite3_column_double(row, 6)),
                        responseTime: Date(timeIntervalSince1970: sqlite3_column_double(row, 7)),
                        freshnessLifetime: sqlite3_column_double(row, 8),
                        initialAge: sqlite3_column_double(row, 9)))
            }
            for variant in damaged { try remove(key: key, variant: variant) }
            if !entries.isEmpty {
                useCounter += 1
                let touch = try database.prepare("UPDATE http_cache SET last_use = ? WHERE key = ?")
                database.bind(touch, 1, useCounter)
                database.bind(touch, 2, key)
                try database.run(touch)
            }
            return entries
        }

        mutating func store(_ entry: HTTPCacheEntry, budget: Int) throws(HTTPCacheStoreError) {
            try remove(key: entry.key, variant: entry.variantKey)
            let size = entry.byteCount
            guard size <= budget else { return }
            useCounter += 1
            let insert = try database.prepare(
                """
                INSERT INTO http_cache(key, variant, status, url, headers, body, body_length, request_time,
                response_time, lifetime, initial_age, size, last_use) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)
                """)
            database.bind(insert, 1, entry.key)
            database.bind(insert, 2, entry.variantKey)
            database.bind(insert, 3, Int64(entry.response.status))
            database.bind(insert, 4, entry.response.url?.absoluteString)
            database.bind(insert, 5, Self.encodeHeaders(entry.response.headers))
            database.bind(insert, 6, entry.response.body)
            database.bind(insert, 7, Int64(entry.response.body.count))
            database.bind(insert, 8, entry.requestTime.timeIntervalSince1970)
            database.bind(insert, 9, entry.responseTime.timeIntervalSince1970)
            database.bind(insert, 10, entry.freshnessLifetime)
            database.bind(insert, 11, entry.initialAge)
            database.bind(insert, 12, Int64(size))
            database.bind(insert, 13, useCounter)
            try database.run(insert)
            byteCount += size
            while byteCount > budget {
                let oldest = try database.prepare("SELECT key, variant FROM http_cache ORDER BY last_use LIMIT 1")
                let code = sqlite3_step(oldest)
                guard code == SQLITE_ROW, let key = Database.text(oldest, 0), let variant = Database.text(oldest, 1)
                else {
                    sqlite3_reset(oldest)
                    byteCount = 0
                    break
                }
                sqlite3_reset(oldest)
                try remove(key: key, variant: variant)
            }
        }

        /// Removes one variant, or every variant of `key` when `variant` is `nil`, keeping the byte count.
        mutating func remove(key: String, variant: String?) throws(HTTPCacheStoreError) {
            let filter = variant == nil ? "key = ?" : "key = ? AND variant = ?"
            let measure = try database.prepare("SELECT COALESCE(SUM(size), 0) FROM http_cache WHERE \(filter)")
            database.bind(measure, 1, key)
            if let variant { database.bind(measure, 2, variant) }
            let code = sqlite3_step(measure)
            let removed = code == SQLITE_ROW ? Int(sqlite3_column_int64(measure, 0)) : 0
            sqlite3_reset(measure)
            guard code == SQLITE_ROW else { throw database.failure(code) }
            guard removed > 0 else { return }
            let delete = try database.prepare("DELETE FROM http_cache WHERE \(filter)")
            database.bind(delete, 1, key)
            if let variant { database.bind(delete, 2, variant) }
            try database.run(delete)
            byteCount -= removed
        }

        /// Header fields as `name NUL value NUL …` (a field value never contains NUL).
        static func encodeHeaders(_ headers: HTTPHeaders) -> Data {
            var bytes: [UInt8] = []
            for field in headers {
                bytes.append(contentsOf: field.name.utf8)
                bytes.append(0)
                bytes.append(contentsOf: field.value.utf8)
                bytes.append(0)
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
                fields.append(
                    HTTPHeaders.Field(
                        name: String(decoding: parts[index], as: UTF8.self),
                        value: String(decoding: parts[index + 1], as: UTF8.self)))
                index += 2
            }
            return HTTPHeaders(fields)
        }
    }
}
