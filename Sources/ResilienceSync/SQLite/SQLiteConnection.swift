import ResilienceCore
import ResilienceSQLite

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// The mutation store's connection: the shared SQLite wrapper, failing with the ``MutationStoreError`` codes
/// the store's contract promises. Not thread-safe: ``SQLiteMutationStore`` keeps it inside a `LockedState`.
typealias SQLiteConnection = SQLiteDatabase<MutationStoreError>

extension SQLiteDatabase where Failure == MutationStoreError {
    /// Opens (creating if needed) the database at `path`.
    convenience init(path: String) throws(MutationStoreError) {
        try self.init(path: path, failure: Self.mutationStoreError)
    }

    /// Maps an SQLite failure to the typed error the contract promises.
    static func mutationStoreError(_ failure: SQLiteFailure) -> MutationStoreError {
        guard failure.phase != .closed else {
            return MutationStoreError(.storageConnectionFailed, message: "the store is closed")
        }
        let failureCode: FailureCode
        switch failure.primaryCode {
        case SQLITE_BUSY, SQLITE_LOCKED: failureCode = .storageBusy
        case SQLITE_FULL: failureCode = .diskFull
        case SQLITE_CONSTRAINT: failureCode = .constraintViolation
        case SQLITE_CORRUPT, SQLITE_NOTADB: failureCode = .corruptedData
        case SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY, SQLITE_AUTH: failureCode = .storageConnectionFailed
        default: failureCode = failure.phase == .opening ? .storageConnectionFailed : .unknown
        }
        return MutationStoreError(failureCode, message: "\(failure.message) (SQLite \(failure.code))")
    }
}
