import Foundation
import ResilienceCore
import ResilienceTesting
import Testing

@testable import ResilienceTransport

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A value SQLite refuses to bind (longer than the connection's `SQLITE_LIMIT_LENGTH`, here lowered to 200 bytes)
/// fails the call with a typed error: never a statement run with that parameter NULL, acknowledged.
@Suite("SQLiteHTTPCacheStore: values SQLite refuses to bind")
struct SQLiteHTTPCacheBindFailureTests {
    static let long = String(repeating: "x", count: 300)

    static func limitingValues(of store: SQLiteHTTPCacheStore, to bytes: Int32) {
        store.withConnectionHandle { _ = sqlite3_limit($0, SQLITE_LIMIT_LENGTH, bytes) }
    }

    static func removeFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    @Test("A removal whose key cannot be bound throws, and the entry stays: no removal acknowledged undone")
    func unboundKeyInRemoval() throws {
        let path = HTTPCacheStoreTests.temporaryPath()
        defer { Self.removeFiles(path) }
        let store = try SQLiteHTTPCacheStore(path: path)
        try store.store(HTTPCacheStoreTests.entry(Self.long, bodyBytes: 10))
        Self.limitingValues(of: store, to: 200)
        #expect(throws: HTTPCacheStoreError.self) { try store.removeEntries(forKey: Self.long) }
        #expect(throws: HTTPCacheStoreError.self) { try store.removeEntry(forKey: Self.long, variantKey: "") }
        #expect(throws: HTTPCacheStoreError.self) { try store.entries(forKey: Self.long) }
        Self.limitingValues(of: store, to: 1_000_000)
        #expect(try store.entries(forKey: Self.long).count == 1)
    }

    @Test("An entry whose URL cannot be bound is not stored, rather than stored without its URL")
    func unboundURL() throws {
        let path = HTTPCacheStoreTests.temporaryPath()
        defer { Self.removeFiles(path) }
        let store = try SQLiteHTTPCacheStore(path: path)
        var entry = HTTPCacheStoreTests.entry("a", bodyBytes: 10)
        entry.response.url = URL(string: "https://example.com/" + Self.long)
        Self.limitingValues(of: store, to: 200)
        #expect(throws: HTTPCacheStoreError.self) { try store.store(entry) }
        Self.limitingValues(of: store, to: 1_000_000)
        let stored = try store.entries(forKey: "a")
        #expect(stored.isEmpty || stored.first?.response.url == entry.response.url, "stored without its URL")
    }
}
