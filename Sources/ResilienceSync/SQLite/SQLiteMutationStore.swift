import Foundation
import ResilienceCore

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A ``MutationStore`` in an SQLite file (the queue, its failed list and its metadata table): durable on
/// return, FIFO, typed failures.
///
/// The database runs in WAL mode with `synchronous=FULL` set explicitly, so a committed enqueue survives a
/// crash or power loss. One connection, guarded by a lock, serves every caller; statements are prepared once
/// and reused. The schema is versioned (`PRAGMA user_version`) and migrated on open.
///
/// A corrupted file is never silently replaced: it is renamed aside to `<path>.corrupt-<unix time>` (`-2`, `-3`, …
/// appended when an earlier quarantine in the same second has that name) and opening
/// throws `DB_004` naming that file. A note beside it (`<path>.quarantine`) records the quarantine, so every
/// later open at the path throws the same `DB_004` (no empty store starts in its place) until the app decides:
/// an open with ``Configuration/recreatesCorruptedStore`` accepts what is at the path then (a file the app put
/// back, or a fresh empty store), removes the note and reports the quarantine in ``recovery``. With that setting
/// from the start, the first open already quarantines the file, starts a fresh store and sets ``recovery``.
///
/// A file removed or moved away while the store is open (a cleaner, a user, another process) is written back to
/// ``path`` from the open connection before the next write and on ``close()``, so nothing committed is lost; a
/// different file put at ``path`` meanwhile is left alone, and writes throw `DB_007`. A copy that cannot take the
/// path yet (something else is there) or be opened there makes every call throw `DB_007` naming it, and each call
/// tries again first. A ``close()`` that cannot write the file back throws `DB_007` and leaves the store open. A
/// file truncated while the store is open (shorter than the database its header records) no longer holds what
/// was committed: writes throw `DB_004`. A write-ahead log removed or replaced at its path while the store is open
/// is checkpointed into the file, and the file opened again with a new log, before the next write; a removed or
/// replaced shared-memory index (`<path>-shm`) makes it open the file again too, so that it never writes the log
/// through another index than another process opening the file meanwhile.
///
/// ```swift
/// let store = try SQLiteMutationStore(path: documents.appendingPathComponent("queue.sqlite").path)
/// let mutation = try store.enqueue(MutationDraft(entityType: "event", entityID: "42", operation: .create))
/// ```
public final class SQLiteMutationStore: MutationStore {
    private let database: LockedState<Database>
    private let configuration: Configuration

    /// The database file's path.
    public let path: String
    /// Set when this open, allowed by ``Configuration/recreatesCorruptedStore``, replaced a corrupted file: the
    /// file it found corrupted and quarantined, or the one an earlier open quarantined (its note now removed).
    public let recovery: CorruptionRecovery?

    private static let columns =
        "id, entity_type, entity_id, operation, payload, idempotency_key, attempts, last_error, created_at"

    /// Opens (creating and migrating if needed) the store at `path`.
    ///
    /// - Parameters:
    ///   - path: The database file's path; its directory must exist. The file is created when missing.
    ///   - configuration: Busy timeout, coalescing, corruption handling, integrity check, size cap, payload limit and
    ///     the wall clock. Default: `.standard`.
    /// - Throws: ``MutationStoreError``: `DB_001` when the file cannot be opened (or written, when it needs a
    ///   migration), `DB_002` when the schema cannot be migrated, `DB_004` when the file is corrupted (after
    ///   quarantining it, unless the configuration allows a fresh store) or an earlier open quarantined it and the
    ///   configuration does not allow a fresh store, `DB_005` when the disk has no room for the store's files
    ///   (its shared-memory index cannot grow), `DB_006` when another process holds the database past the busy
    ///   timeout.
    public init(path: String, configuration: Configuration = .standard) throws {
        self.path = path
        self.configuration = configuration
        let (opened, recovery) = try Self.openRecoveringFromCorruption(path: path, configuration: configuration)
        database = LockedState(initialState: Database(connection: opened))
        self.recovery = recovery
    }

    private static func openRecoveringFromCorruption(
        path: String, configuration: Configuration
    ) throws
        -> (SQLiteConnection, CorruptionRecovery?)
    {
        let notePath = quarantineNotePath(for: path)
        let note = FileManager.default.fileExists(atPath: notePath) ? readQuarantineNote(at: notePath) : nil
        if let note, !configuration.recreatesCorruptedStore {
            throw MutationStoreError(
                .corruptedData,
                message: "\(path) was found corrupted (\(note.reason)) and quarantined at \(note.quarantinedPath); "
                    + "nothing was opened. Open with recreatesCorruptedStore to accept the file at the path now, or "
                    + "a fresh store when there is none (\(notePath) records the quarantine)")
        }
        let opened: (SQLiteConnection, CorruptionRecovery?)
        var leftNote = note != nil
        do {
            opened = (try open(path: path, configuration: configuration), note)
        } catch let error as MutationStoreError where error.code == .corruptedData {
            // The note is left even when a fresh store is allowed: should the fresh store fail to open (a full
            // disk, a busy file), the next open still reports the quarantine instead of starting empty in silence.
            let quarantined = quarantine(
                path: path, date: configuration.currentDate(), reason: error.message, leavingNoteAt: notePath)
            guard configuration.recreatesCorruptedStore, let quarantined else {
                let place =
                    quarantined.map {
                        "quarantined at \($0); every open throws DB_004 until one with recreatesCorruptedStore "
                            + "accepts the file at the path then, or a fresh store"
                    } ?? "could not be moved aside"
                throw MutationStoreError(.corruptedData, message: "\(error.message); the file \(place)")
            }
            let fresh = try open(path: path, configuration: configuration)
            opened = (fresh, CorruptionRecovery(quarantinedPath: quarantined, reason: error.message))
            leftNote = true
        }
        guard leftNote else { return opened }
        do {
            try FileManager.default.removeItem(atPath: notePath)
        } catch {
            opened.0.close()
            throw MutationStoreError(
                .storageConnectionFailed, message: "cannot remove the quarantine note \(notePath): \(error)")
        }
        return opened
    }

    /// Where a store opened without ``Configuration/recreatesCorruptedStore`` notes that it quarantined the
    /// file at `path`: `<path>.quarantine`.
    private static func quarantineNotePath(for path: String) -> String { path + ".quarantine" }

    /// What a quarantine note records.
    private struct QuarantineNote: Codable {
        var quarantinedPath: String
        var reason: String
    }

    /// The quarantine recorded at `notePath`; a note that cannot be read still stands for a quarantine.
    private static func readQuarantineNote(at notePath: String) -> CorruptionRecovery {
        guard let data = FileManager.default.contents(atPath: notePath),
            let note = try? JSONDecoder().decode(QuarantineNote.self, from: data)
        else {
            return CorruptionRecovery(quarantinedPath: "unknown", reason: "the note \(notePath) cannot be read")
        }
        return CorruptionRecovery(quarantinedPath: note.quarantinedPath, reason: note.reason)
    }

    private static func open(
        path: String, configuration: Configuration
    ) throws
        -> SQLiteConnection
    {
        let connection = try SQLiteConnection(path: path)
        do {
            let milliseconds = busyTimeoutMilliseconds(configuration.busyTimeout)
            sqlite3_busy_timeout(connection.handle, Int32(clamping: milliseconds))
            let mode = try enableWAL(connection, waitingUpTo: milliseconds)
            guard mode?.lowercased() == "wal" else {
                throw MutationStoreError(
                    .storageConnectionFailed, message: "cannot enable WAL mode (journal mode is \(mode ?? "unknown"))")
            }
            try connection.execute("PRAGMA synchronous = FULL")
            if let pages = configuration.maximumPageCount {
                _ = try connection.scalarText("PRAGMA max_page_count = \(max(1, pages))")
            }
            if configuration.verifiesIntegrityOnOpen {
                let verdict = try connection.scalarText("PRAGMA quick_check(1)") ?? "no verdict"
                if verdict != "ok" {
                    throw MutationStoreError(.corruptedData, message: "integrity check failed: \(verdict)")
                }
            }
            try SchemaMigrator.migrate(connection)
            return connection
        } catch {
            connection.close()
            throw error
        }
    }

    /// `timeout` in whole milliseconds, clamped to `0...Int32.max` (what `sqlite3_busy_timeout` takes, about
    /// 24.8 days): a negative timeout waits no time, and one near `.seconds(Int64.max)` does not overflow.
    private static func busyTimeoutMilliseconds(_ timeout: Duration) -> Int64 {
        let (seconds, attoseconds) = timeout.components
        let limit = Int64(Int32.max)
        guard seconds >= 0 else { return 0 }
        guard seconds < limit / 1000 else { return limit }
        return min(max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000), limit)
    }

    /// Switches the connection to WAL and returns the journal mode it is in. Two connections switching a new file
    /// at once can deadlock on its locks, and SQLite then answers one of them busy at once, without waiting in
    /// the busy handler: that one tries again every 5 ms, for up to the busy timeout, before it throws `DB_006`.
    private static func enableWAL(_ connection: SQLiteConnection, waitingUpTo milliseconds: Int64) throws -> String? {
        var waited: Int64 = 0
        while true {
            do {
                return try connection.scalarText("PRAGMA journal_mode = WAL")
            } catch let error as MutationStoreError where error.code == .storageBusy && waited < milliseconds {
                Thread.sleep(forTimeInterval: 0.005)
                waited += 5
            }
        }
    }

    /// Renames a corrupted database (and its WAL) aside; returns the new path, or `nil` if it could not move.
    /// With `notePath`, a note naming the new path is written there first, and the file stays where it is when
    /// the note cannot be written: a file is never gone from `path` without a note saying where it went.
    private static func quarantine(
        path: String, date: Date, reason: String, leavingNoteAt notePath: String?
    )
        -> String?
    {
        let manager = FileManager.default
        let target = QuarantineName.destination(for: path, at: date)
        if let notePath {
            guard let note = try? JSONEncoder().encode(QuarantineNote(quarantinedPath: target, reason: reason)),
                (try? note.write(to: URL(fileURLWithPath: notePath), options: .atomic)) != nil
            else { return nil }
        }
        do {
            try manager.moveItem(atPath: path, toPath: target)
        } catch {
            if let notePath { try? manager.removeItem(atPath: notePath) }
            return nil
        }
        if manager.fileExists(atPath: path + "-wal") {
            try? manager.moveItem(atPath: path + "-wal", toPath: target + "-wal")
        }
        try? manager.removeItem(atPath: path + "-shm")
        return target
    }

    /// The connection and how far a write-back of a removed file got.
    private struct Database {
        var connection: SQLiteConnection
        /// Set while a write-back is interrupted: the old connection is closed, and the copy waits to take the path
        /// (`copied`) or to be opened there (`moved`).
        var writeBack: WriteBack?
        var isClosed = false
        /// The write-ahead log the connection writes, as it was at its path when the connection opened it
        /// (`replaceLogIfMoved(_:)`).
        var log: FileIdentity?
        /// The shared-memory index the connection locks and reads, as it was at `<path>-shm` when the connection
        /// opened it (`reopenIfIndexMoved(_:)`).
        var index: FileIdentity?

        init(connection: SQLiteConnection) {
            self.connection = connection
            log = connection.logIdentity
            index = connection.indexIdentity
        }
    }

    private enum WriteBack {
        case copied, moved
    }

    /// Closes the store; every later call throws `DB_001`, and closing a closed store does nothing.
    ///
    /// A file removed or moved away while the store was open is written back to ``path`` first, so nothing
    /// committed is lost. When that cannot be done (a different file is at the path, or the copy cannot be made or
    /// take the path), `close()` throws and the store stays open as a failed write leaves it: close again once the
    /// cause is gone (the next call tries too). Releasing the store closes it without throwing: what could not be
    /// written back then is lost, except a copy an error named, which stays where it is.
    ///
    /// - Throws: ``MutationStoreError`` `DB_007` when the file was removed, moved or replaced while the store was
    ///   open and cannot be written back to ``path``: the error says why, and names the copy
    ///   (`<path>.restoring`) when one was made.
    public func close() throws {
        try database.withLock { database throws in
            guard !database.isClosed else { return }
            do {
                try writeBackBeforeClosing(&database)
            } catch let error as MutationStoreError {
                throw MutationStoreError(
                    error.code,
                    message: "\(error.message); the store is still open (close again once this is resolved)")
            }
            database.connection.close()
            database.writeBack = nil
            database.isClosed = true
        }
    }

    deinit {
        database.withLock { database in
            guard !database.isClosed else { return }
            try? writeBackBeforeClosing(&database)
            database.connection.close()
            database.writeBack = nil
            database.isClosed = true
        }
    }

    /// Runs `body` with the connection's SQLite handle under the store's lock: the seam tests use to set the
    /// connection's limits (`sqlite3_limit`).
    func withConnectionHandle<Result>(_ body: (OpaquePointer?) -> Result) -> Result {
        database.withLock { body($0.connection.handle) }
    }

    /// Puts what the store holds at ``path`` before its connection closes: moves a copy an interrupted write-back
    /// made into place, or writes back a file removed since it was opened. A copy already at the path is left to
    /// the next open.
    private func writeBackBeforeClosing(_ database: inout Database) throws {
        if database.writeBack == .copied { try finishWriteBack(&database, reopening: false) }
        try restoreIfMoved(&database, reopening: false)
    }

    /// Writes the database back to ``path`` when its file was removed or moved away since the connection opened
    /// it: the connection still reads the old file, so `VACUUM INTO` copies everything committed to
    /// `<path>.restoring`, the old connection closes, and the copy takes the path and is opened as the store.
    /// Throws `DB_007` when a different file is at ``path`` now (left alone; the connection stays on the old file)
    /// or the file cannot be written back (the error says why, and names the copy when one was made). When the copy
    /// was made but cannot take the path or be opened there, every later call tries again first
    /// (``finishWriteBack(_:reopening:)``). With `reopening` false (the store is closing), the copy takes the path
    /// but is not opened.
    private func restoreIfMoved(_ database: inout Database, reopening: Bool = true) throws {
        let connection = database.connection
        guard database.writeBack == nil, connection.fileHasMoved else { return }
        let manager = FileManager.default
        guard !manager.fileExists(atPath: path) else {
            throw MutationStoreError(
                .storageFileMoved,
                message: "\(path) was replaced while the store was open; nothing was written (the store still reads "
                    + "the file it opened)")
        }
        let restoring = path + ".restoring"
        try? manager.removeItem(atPath: restoring)
        do {
            try connection.copy(to: restoring)
        } catch let error as MutationStoreError {
            throw MutationStoreError(
                .storageFileMoved,
                message: "\(path) was removed while the store was open and cannot be written back: \(error.message)")
        }
        connection.close()
        database.writeBack = .copied
        try finishWriteBack(&database, reopening: reopening)
    }

    /// Finishes an interrupted write-back: once nothing is at ``path`` (a broken link, a file someone else put
    /// there, are left alone), the copy's stale write-ahead log is removed, the copy takes the path, and it is
    /// opened as the store (unless `reopening` is false). Throws `DB_007` naming where the contents are while it
    /// cannot.
    private func finishWriteBack(_ database: inout Database, reopening: Bool = true) throws {
        guard let stage = database.writeBack else { return }
        let manager = FileManager.default
        let restoring = path + ".restoring"
        if stage == .copied {
            guard (try? manager.attributesOfItem(atPath: path)) == nil else {
                throw MutationStoreError(
                    .storageFileMoved,
                    message: "\(path) was removed while the store was open; its contents are in \(restoring), which "
                        + "cannot take the path while something else is there")
            }
            // A write-ahead log left at the path belonged to the old file (closing checkpointed it there).
            for suffix in ["-wal", "-shm"] { try? manager.removeItem(atPath: path + suffix) }
            do {
                try manager.moveItem(atPath: restoring, toPath: path)
            } catch {
                throw MutationStoreError(
                    .storageFileMoved,
                    message: "\(path) was removed while the store was open; its contents are in \(restoring) (\(error))"
                )
            }
            database.writeBack = .moved
        }
        guard reopening else { return }
        do {
            database.connection = try Self.open(path: path, configuration: configuration)
            database.log = database.connection.logIdentity
            database.index = database.connection.indexIdentity
            database.writeBack = nil
        } catch {
            throw MutationStoreError(
                .storageFileMoved,
                message:
                    "\(path) was removed while the store was open and written back, but cannot be opened (\(error))")
        }
    }

    /// Runs a read under the lock, after finishing an interrupted write-back. A read that fails because the log
    /// was replaced at its path (another store on the file replaced a removed one: the log this connection reads
    /// is emptied) is run again once this connection's log is replaced too (`replaceLogIfMoved(_:)`).
    private func reading<Result>(_ body: (SQLiteConnection) throws -> Result) throws -> Result {
        try database.withLock { database throws -> Result in
            if !database.isClosed { try finishWriteBack(&database) }
            do {
                return try body(database.connection)
            } catch let error as MutationStoreError where error.code == .storageConnectionFailed && !database.isClosed {
                guard let known = database.log, FileIdentity(path: path + "-wal") != known else { throw error }
                try replaceLogIfMoved(&database)
                return try body(database.connection)
            }
        }
    }

    /// Runs a write under the lock, after writing the file back if it was removed while open (or finishing a
    /// write-back a failure interrupted); refuses it when the file was truncated.
    private func writing<Result>(_ body: (SQLiteConnection) throws -> Result) throws -> Result {
        try database.withLock { database throws -> Result in
            if !database.isClosed {
                try finishWriteBack(&database)
                try restoreIfMoved(&database)
                try replaceLogIfMoved(&database)
                try reopenIfIndexMoved(&database)
                try refuseIfTruncated(database.connection)
            }
            return try body(database.connection)
        }
    }

    /// Replaces the write-ahead log when the one the connection writes was removed or replaced at its path since
    /// it was opened (a cleaner, a person tidying up): what was committed since the last checkpoint is then only in
    /// a file nobody can reach, and a crash would lose it and every write acknowledged after it. The connection
    /// checkpoints that log into the database file (`wal_checkpoint(TRUNCATE)`) and closes, and the store opens the
    /// file again, with a new log at its path. Closing first makes the new connection map the shared-memory index
    /// at `<path>-shm`, made anew when that was removed too: opened beside the old connection, it would share the
    /// old one's index (one per file in a process), and write the new log through an index another process opening
    /// the file cannot see. One `stat` of the log's path per write. Throws `DB_007` when that cannot be done
    /// (another connection keeps the log busy past the busy timeout, the file cannot be opened again): nothing is
    /// written, and every call tries again first.
    private func replaceLogIfMoved(_ database: inout Database) throws {
        guard hasMoved("-wal", since: &database.log) else { return }
        let old = database.connection
        do {
            // An empty log holds nothing the file does not: another store on the file replaced it first (its
            // checkpoint wrote everything into the file and emptied the old log), and this one's frames are gone.
            if old.logFileSize != 0 {
                let busy = try old.scalarText("PRAGMA wal_checkpoint(TRUNCATE)")
                guard busy == "0" else {
                    throw MutationStoreError(.storageBusy, message: "another connection keeps the log busy")
                }
            }
        } catch let error as MutationStoreError {
            throw logNotReplaced(error)
        }
        old.close()
        do {
            database.connection = try Self.open(path: path, configuration: configuration)
        } catch let error as MutationStoreError {
            database.writeBack = .moved
            throw logNotReplaced(error)
        }
        database.log = database.connection.logIdentity
        database.index = database.connection.indexIdentity
    }

    /// The `DB_007` a write throws when the log removed or replaced at `<path>-wal` cannot be replaced yet.
    private func logNotReplaced(_ error: MutationStoreError) -> MutationStoreError {
        MutationStoreError(
            .storageFileMoved,
            message: "\(path)-wal was removed or replaced while the store was open, and cannot be replaced yet "
                + "(\(error.message)); nothing was written")
    }

    /// Opens the file again when the shared-memory index the connection locks and reads was removed or replaced at
    /// `<path>-shm` since it was opened: another process opening the file meanwhile makes an index of its own
    /// there, and two connections appending to one log through two indexes (and two sets of locks) overwrite each
    /// other's commits. The old connection closes (its index knows its own commits: a checkpoint it makes as the
    /// file's last connection is sound) and the store opens the file again, with the index at the path. One `stat`
    /// of the index's path per write. Throws `DB_007` when the file cannot be opened again (nothing is written;
    /// every call tries again first).
    private func reopenIfIndexMoved(_ database: inout Database) throws {
        guard hasMoved("-shm", since: &database.index) else { return }
        database.connection.close()
        do {
            database.connection = try Self.open(path: path, configuration: configuration)
        } catch let error as MutationStoreError {
            database.writeBack = .moved
            throw MutationStoreError(
                .storageFileMoved,
                message: "\(path)-shm was removed or replaced while the store was open, and the file cannot be opened "
                    + "again (\(error.message)); nothing was written")
        }
        database.log = database.connection.logIdentity
        database.index = database.connection.indexIdentity
    }

    /// Whether the file at `<path><suffix>` is no longer the one `known` recorded when the connection opened it
    /// (one `stat`); records it when nothing was recorded yet.
    private func hasMoved(_ suffix: String, since known: inout FileIdentity?) -> Bool {
        let current = FileIdentity(path: path + suffix)
        guard let recorded = known else {
            known = current
            return false
        }
        return current != recorded
    }

    /// Throws `DB_004` when the file the connection opened was truncated while the store was open: it is shorter
    /// than the database its header records (or than the header itself). A write would still succeed, into the
    /// log over a file that no longer holds the pages it builds on, and the next open would find the file
    /// corrupted: nothing is written.
    ///
    /// Each write costs one `fstat` and one read of the header's 100 bytes (the file's first page, which the
    /// system keeps cached): the size alone does not tell, since a file another connection's checkpoint grew can be
    /// cut back to exactly the size it had when last found whole. A file shorter than its header is judged while
    /// this connection holds the checkpoint lock: another connection's checkpoint writes the header before the
    /// pages past the old end, so while one runs (the lock is taken) the file is judged again at the next write
    /// instead.
    private func refuseIfTruncated(_ connection: SQLiteConnection) throws {
        guard let size = connection.fileSize else { return }
        if let recorded = connection.databaseSizeInHeader, size >= recorded { return }
        guard
            let (settled, recorded) = connection.excludingCheckpoints({
                (connection.fileSize, connection.databaseSizeInHeader)
            }),
            let settled
        else { return }
        guard let recorded else { throw truncated(to: settled, detail: "shorter than its header") }
        guard settled >= recorded else { throw truncated(to: settled, detail: "its header records \(recorded)") }
    }

    /// The `DB_004` a write throws when the file was truncated to `size` bytes.
    private func truncated(to size: Int64, detail: String) -> MutationStoreError {
        MutationStoreError(
            .corruptedData,
            message: "\(path) was truncated to \(size) bytes (\(detail)) while the store was open, so part of what "
                + "it held is gone from the file; nothing was written (reads still come from the connection's cache "
                + "and log)")
    }

    // MARK: Writing

    /// Appends several mutations in one transaction: all are stored, or none.
    public func enqueue(batch drafts: [MutationDraft]) throws -> [Mutation] {
        for draft in drafts { try draft.validate(maximumPayloadBytes: configuration.maximumPayloadBytes) }
        guard !drafts.isEmpty else { return [] }
        let createdAt = configuration.currentDate()
        return try writing { connection throws -> [Mutation] in
            try connection.transaction { () throws -> [Mutation] in
                var stored: [Mutation] = []
                stored.reserveCapacity(drafts.count)
                for draft in drafts { stored.append(try insert(draft, createdAt: createdAt, into: connection)) }
                return stored
            }
        }
    }

    private func coalesces(_ draft: MutationDraft) -> Bool {
        configuration.coalescesUpdatesBeforeDelete && draft.operation == .delete
    }

    private func insert(
        _ draft: MutationDraft, createdAt: Date, into connection: SQLiteConnection
    ) throws
        -> Mutation
    {
        if coalesces(draft) {
            let drop = try connection.prepare(
                "DELETE FROM mutations WHERE state = 0 AND entity_type = ? AND entity_id = ? AND operation = ?")
            try connection.bind(drop, 1, draft.entityType)
            try connection.bind(drop, 2, draft.entityID)
            try connection.bind(drop, 3, MutationOperation.update.rawValue)
            try connection.run(drop)
        }
        let statement = try connection.prepare(
            """
            INSERT INTO mutations (entity_type, entity_id, operation, payload, idempotency_key, created_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """)
        try connection.bind(statement, 1, draft.entityType)
        try connection.bind(statement, 2, draft.entityID)
        try connection.bind(statement, 3, draft.operation.rawValue)
        try connection.bind(statement, 4, draft.payload)
        try connection.bind(statement, 5, draft.idempotencyKey)
        try connection.bind(statement, 6, createdAt.timeIntervalSince1970)
        try connection.run(statement)
        return Mutation(
            id: connection.lastInsertedRowID, entityType: draft.entityType, entityID: draft.entityID,
            operation: draft.operation, payload: draft.payload, idempotencyKey: draft.idempotencyKey,
            createdAt: Date(timeIntervalSince1970: createdAt.timeIntervalSince1970))
    }

    /// Records what became of a pending mutation (no-op if it is no longer pending): applied deletes it, a
    /// failed attempt counts it and keeps its error, given up moves it to the failed list with its reason.
    public func record(_ outcome: MutationOutcome, for id: Int64) throws {
        switch outcome {
        case .applied:
            try update("DELETE FROM mutations WHERE id = ? AND state = 0", id: id)
        case .attemptFailed(let error):
            try update(
                "UPDATE mutations SET attempts = attempts + 1, last_error = ? WHERE id = ? AND state = 0",
                text: error, id: id)
        case .givenUp(let reason):
            try update(
                "UPDATE mutations SET state = 1, last_error = ? WHERE id = ? AND state = 0", text: reason, id: id)
        }
    }

    /// Deletes a failed mutation for good.
    public func discardFailed(_ id: Int64) throws {
        try update("DELETE FROM mutations WHERE id = ? AND state = 1", id: id)
    }

    /// Moves a failed mutation to the end of the pending queue (a new identifier), attempts reset.
    public func requeueFailed(_ id: Int64) throws {
        try writing { connection in
            try connection.transaction { () throws in
                let select = try connection.prepare("SELECT \(Self.columns) FROM mutations WHERE id = ? AND state = 1")
                try connection.bind(select, 1, id)
                var found: Mutation?
                try connection.query(select) { found = Self.mutation(from: $0) }
                guard let found else { return }
                let delete = try connection.prepare("DELETE FROM mutations WHERE id = ? AND state = 1")
                try connection.bind(delete, 1, id)
                try connection.run(delete)
                let draft = MutationDraft(
                    entityType: found.entityType, entityID: found.entityID, operation: found.operation,
                    payload: found.payload, idempotencyKey: found.idempotencyKey)
                _ = try insert(draft, createdAt: found.createdAt, into: connection)
            }
        }
    }

    /// Deletes every pending mutation and returns how many there were.
    public func removeAllPending() throws -> Int {
        try writing { connection throws -> Int in
            try connection.run(try connection.prepare("DELETE FROM mutations WHERE state = 0"))
            return connection.changes
        }
    }

    private func update(_ sql: String, text: String? = nil, id: Int64) throws {
        try writing { connection in
            let statement = try connection.prepare(sql)
            if let text {
                try connection.bind(statement, 1, text)
                try connection.bind(statement, 2, id)
            } else {
                try connection.bind(statement, 1, id)
            }
            try connection.run(statement)
        }
    }

    // MARK: Reading

    /// Up to `limit` pending mutations after `id`, oldest first.
    public func pending(after id: Int64, limit: Int) throws -> [Mutation] {
        try select(
            "SELECT \(Self.columns) FROM mutations WHERE state = 0 AND id > ? ORDER BY id LIMIT ?", after: id,
            limit: limit)
    }

    /// Up to `limit` failed mutations after `id`, oldest first (one `LIMIT` query on the `(state, id)` index);
    /// none when `limit` is zero or less.
    public func failed(after id: Int64, limit: Int) throws -> [Mutation] {
        try select(
            "SELECT \(Self.columns) FROM mutations WHERE state = 1 AND id > ? ORDER BY id LIMIT ?", after: id,
            limit: limit)
    }

    /// How many mutations are pending.
    public func pendingCount() throws -> Int {
        try reading { connection throws -> Int in
            Int(try connection.scalarText("SELECT count(*) FROM mutations WHERE state = 0") ?? "0") ?? 0
        }
    }

    private func select(_ sql: String, after id: Int64, limit: Int) throws -> [Mutation] {
        guard limit > 0 else { return [] }
        return try reading { connection throws -> [Mutation] in
            let statement = try connection.prepare(sql)
            try connection.bind(statement, 1, id)
            try connection.bind(statement, 2, Int64(limit))
            var rows: [Mutation] = []
            try connection.query(statement) { rows.append(Self.mutation(from: $0)) }
            return rows
        }
    }

    private static func mutation(from row: OpaquePointer) -> Mutation {
        Mutation(
            id: sqlite3_column_int64(row, 0),
            entityType: SQLiteConnection.text(row, 1) ?? "",
            entityID: SQLiteConnection.text(row, 2) ?? "",
            operation: MutationOperation(rawValue: SQLiteConnection.text(row, 3) ?? ""),
            payload: SQLiteConnection.data(row, 4),
            idempotencyKey: SQLiteConnection.text(row, 5) ?? "",
            attempts: Int(sqlite3_column_int64(row, 6)),
            lastError: SQLiteConnection.text(row, 7),
            createdAt: Date(timeIntervalSince1970: sqlite3_column_double(row, 8)))
    }

    // MARK: Metadata

    /// The value stored under `key`, if any.
    public func metadata(forKey key: String) throws -> Data? {
        try reading { connection throws -> Data? in
            let statement = try connection.prepare("SELECT value FROM sync_metadata WHERE key = ?")
            try connection.bind(statement, 1, key)
            var value: Data?
            try connection.query(statement) { value = SQLiteConnection.data($0, 0) }
            return value
        }
    }

    /// Stores (or with `nil` deletes) the value under `key`; durable on return. A value or key past
    /// ``MutationMetadataLimits``, or a new key when the table holds ``Configuration/maximumMetadataKeyCount`` keys,
    /// throws `DB_003` and changes nothing. The keys are counted in the write's own transaction, so stores on the
    /// same file (two processes) together never pass the limit.
    public func setMetadata(_ value: Data?, forKey key: String) throws {
        if let value { try MutationMetadataLimits.validate(value, forKey: key) }
        let maximumKeyCount = configuration.maximumMetadataKeyCount
        try writing { connection in
            if let value {
                try connection.transaction { () throws in
                    let exists = try connection.prepare("SELECT 1 FROM sync_metadata WHERE key = ?")
                    try connection.bind(exists, 1, key)
                    var isStored = false
                    try connection.query(exists) { _ in isStored = true }
                    if !isStored {
                        var keyCount = 0
                        try connection.query(connection.prepare("SELECT COUNT(*) FROM sync_metadata")) {
                            keyCount = Int(sqlite3_column_int64($0, 0))
                        }
                        try MutationMetadataLimits.validateNewKey(
                            key, keyCount: keyCount, maximumKeyCount: maximumKeyCount)
                    }
                    let statement = try connection.prepare(
                        "INSERT INTO sync_metadata (key, value) VALUES (?, ?) "
                            + "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
                    try connection.bind(statement, 1, key)
                    try connection.bind(statement, 2, value)
                    try connection.run(statement)
                }
            } else {
                let statement = try connection.prepare("DELETE FROM sync_metadata WHERE key = ?")
                try connection.bind(statement, 1, key)
                try connection.run(statement)
            }
        }
    }
}
