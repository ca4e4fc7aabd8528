import Foundation
import ResilienceTesting
import Testing

@testable import ResilienceSync

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A value SQLite refuses to bind (longer than the connection's `SQLITE_LIMIT_LENGTH`, here lowered to 200 bytes)
/// fails the call with a typed error: never a statement run with that parameter NULL, acknowledged.
@Suite("SQLiteMutationStore: values SQLite refuses to bind")
struct SQLiteBindFailureTests {
    static let limit: Int32 = 200
    static let long = String(repeating: "x", count: 300)

    static func limitingValues(of store: SQLiteMutationStore, to bytes: Int32) {
        store.withConnectionHandle { _ = sqlite3_limit($0, SQLITE_LIMIT_LENGTH, bytes) }
    }

    @Test("A failed attempt whose error cannot be bound throws DB_003 and records nothing")
    func unboundErrorText() throws {
        let fixture = try SQLiteMutationStoreTests.OneMutationStore()
        defer { fixture.tearDown() }
        let store = fixture.store
        let id = try #require(try store.pending(limit: 1).first).id
        Self.limitingValues(of: store, to: Self.limit)
        #expect { try store.record(.attemptFailed(error: Self.long), for: id) } throws: {
            SQLiteMutationStoreTests.code(of: $0) == .constraintViolation
        }
        #expect { try store.record(.givenUp(reason: Self.long), for: id) } throws: {
            SQLiteMutationStoreTests.code(of: $0) == .constraintViolation
        }
        let pending = try store.pending(limit: 10)
        #expect(pending.map(\.attempts) == [0], "an attempt was counted without its error")
        #expect(try store.failed().isEmpty, "the mutation was given up without its reason")
    }

    @Test("A metadata key that cannot be bound throws DB_003: no delete that deletes nothing, no read of nothing")
    func unboundMetadataKey() throws {
        let fixture = try SQLiteMutationStoreTests.OneMutationStore()
        defer { fixture.tearDown() }
        let store = fixture.store
        try store.setMetadata(Data([1]), forKey: Self.long)
        Self.limitingValues(of: store, to: Self.limit)
        #expect { try store.setMetadata(nil, forKey: Self.long) } throws: {
            SQLiteMutationStoreTests.code(of: $0) == .constraintViolation
        }
        #expect { try store.metadata(forKey: Self.long) } throws: {
            SQLiteMutationStoreTests.code(of: $0) == .constraintViolation
        }
        Self.limitingValues(of: store, to: 1_000_000)
        #expect(try store.metadata(forKey: Self.long) == Data([1]))
    }
}
