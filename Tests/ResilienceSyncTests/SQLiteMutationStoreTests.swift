import Foundation
import ResilienceSync
import ResilienceTesting
import Testing

/// What only the SQLite store does: durability settings, migrations, and typed storage failures.
@Suite("SQLiteMutationStore")
struct SQLiteMutationStoreTests {
    static func draft(_ entity: String, payloadBytes: Int = 16) -> MutationDraft {
        MutationDraft(entityType: "event", entityID: entity, operation: .create, payload: Data(count: payloadBytes))
    }

    static func code(of error: any Error) -> FailureCode? { (error as? MutationStoreError)?.code }

    /// A store at `queue.sqlite` in a fresh directory, holding one pending mutation ("a").
    struct OneMutationStore {
        let directory = TemporaryDirectory()
        let path: String
        let store: SQLiteMutationStore

        init() throws {
            path = directory.path("queue.sqlite")
            store = try SQLiteMutationStore(path: path)
            _ = try store.enqueue(SQLiteMutationStoreTests.draft("a"))
        }

        /// Closes the store (again, if the test closed it) and removes the directory.
        func tearDown() {
            try? store.close()
            directory.remove()
        }
    }

    @Test("A file holding more metadata keys than a later open allows keeps them all, and takes no new key")
    func metadataKeysPastALowerLimit() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        do {
            let store = try SQLiteMutationStore(path: path)
            for index in 0..<4 { try store.setMetadata(Data([UInt8(index)]), forKey: "cursor-\(index)") }
            try store.close()
        }
        var configuration = SQLiteMutationStore.Configuration()
        configuration.maximumMetadataKeyCount = 2
        let store = try SQLiteMutationStore(path: path, configuration: configuration)
        defer { try? store.close() }
        for index in 0..<4 { #expect(try store.metadata(forKey: "cursor-\(index)") == Data([UInt8(index)])) }
        #expect { try store.setMetadata(Data([9]), forKey: "new") } throws: { error in
            (error as? MutationStoreError)?.code == .constraintViolation
        }
        try store.setMetadata(Data([9]), forKey: "cursor-3")
        #expect(try store.metadata(forKey: "cursor-3") == Data([9]))
        try store.setMetadata(nil, forKey: "cursor-0")
        try store.setMetadata(nil, forKey: "cursor-1")
        #expect { try store.setMetadata(Data([9]), forKey: "new") } throws: { error in
            (error as? MutationStoreError)?.code == .constraintViolation
        }
        try store.setMetadata(nil, forKey: "cursor-2")
        try store.setMetadata(Data([9]), forKey: "new")
        #expect(try store.metadata(forKey: "new") == Data([9]))
    }

    @Test("Mutations survive closing and reopening, with their attempts and the failed list")
    func reopen() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let fixedDate = Date(timeIntervalSince1970: 1_750_000_000.25)
        var configuration = SQLiteMutationStore.Configuration()
        configuration.currentDate = { fixedDate }
        do {
            let store = try SQLiteMutationStore(path: path, configuration: configuration)
            let a = try store.enqueue(Self.draft("a"))
            _ = try store.enqueue(Self.draft("b"))
            try store.record(.attemptFailed(error: "reset"), for: a.id)
            let c = try store.enqueue(Self.draft("c"))
            try store.record(.givenUp(reason: "gave up"), for: c.id)
            try store.setMetadata(Data([1, 2, 3]), forKey: "k")
            try store.close()
            #expect(throws: MutationStoreError.self) { try store.pendingCount() }
        }
        let reopened = try SQLiteMutationStore(path: path, configuration: configuration)
        defer { try? reopened.close() }
        #expect(reopened.recovery == nil)
        let pending = try reopened.pending(limit: 10)
        #expect(pending.map(\.entityID) == ["a", "b"])
        #expect(pending.first?.attempts == 1)
        #expect(pending.first?.lastError == "reset")
        #expect(pending.first?.createdAt == fixedDate)
        #expect(try reopened.failed().map(\.entityID) == ["c"])
        #expect(try reopened.metadata(forKey: "k") == Data([1, 2, 3]))
    }

    @Test("The database runs in WAL mode with synchronous=FULL and the latest schema version")
    func durabilitySettings() throws {
        let fixture = try OneMutationStore()
        defer { fixture.tearDown() }
        let path = fixture.path
        let raw = try RawSQLite(path: path)
        #expect(try raw.execute("PRAGMA journal_mode") == "wal")
        #expect(try raw.execute("PRAGMA user_version") == "2")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("A version-1 file is migrated to version 2 and keeps its mutations")
    func migrationFromVersionOne() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        do {
            let raw = try RawSQLite(path: path)
            try raw.execute(
                """
                CREATE TABLE mutations (id INTEGER PRIMARY KEY AUTOINCREMENT, entity_type TEXT NOT NULL,
                entity_id TEXT NOT NULL, operation TEXT NOT NULL, payload BLOB NOT NULL,
                idempotency_key TEXT NOT NULL UNIQUE, attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT,
                created_at REAL NOT NULL, state INTEGER NOT NULL DEFAULT 0)
                """)
            try raw.execute(
                "INSERT INTO mutations (entity_type, entity_id, operation, payload, idempotency_key, created_at) "
                    + "VALUES ('event', 'old', 'create', x'00', 'old-key', 0)")
            try raw.execute("PRAGMA user_version = 1")
        }
        let store = try SQLiteMutationStore(path: path)
        defer { try? store.close() }
        #expect(try store.pending(limit: 10).map(\.idempotencyKey) == ["old-key"])
        try store.setMetadata(Data("v2".utf8), forKey: "table-exists")
        #expect(try RawSQLite(path: path).execute("PRAGMA user_version") == "2")
    }

    @Test("Two connections creating the same new file at once both open it (the schema is migrated once)")
    func concurrentFirstOpen() throws {
        for round in 0..<30 {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let path = directory.path("queue.sqlite")
            let failures = LockedBox<[String]>([])
            let stores = LockedBox<[SQLiteMutationStore]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                do {
                    let store = try SQLiteMutationStore(path: path)
                    stores.mutate { $0.append(store) }
                } catch {
                    failures.mutate { $0.append("\(error)") }
                }
            }
            #expect(failures.value.isEmpty, "round \(round)")
            for (index, store) in stores.value.enumerated() { _ = try store.enqueue(Self.draft("from-\(index)")) }
            #expect(try stores.value.first?.pendingCount() == stores.value.count)
            for store in stores.value { try store.close() }
            if !failures.value.isEmpty { return }
        }
    }

    @Test(
        "A schema version unknown here (newer, or negative: a damaged header) is DB_002, not a crash; file untouched",
        arguments: [99, -1])
    func unknownSchemaVersion(version: Int) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        try RawSQLite(path: path).execute("PRAGMA user_version = \(version)")
        #expect {
            try SQLiteMutationStore(path: path)
        } throws: { Self.code(of: $0) == .migrationFailed }
        let raw = try RawSQLite(path: path)
        #expect(try raw.execute("PRAGMA user_version") == "\(version)")
        #expect(try raw.execute("SELECT count(*) FROM sqlite_master") == "0")
    }

    @Test("A migration that cannot run is rolled back and reported as DB_002")
    func failingMigration() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        try RawSQLite(path: path).execute("CREATE TABLE mutations (something_else TEXT)")
        #expect {
            try SQLiteMutationStore(path: path)
        } throws: { Self.code(of: $0) == .migrationFailed }
        let raw = try RawSQLite(path: path)
        #expect(try raw.execute("PRAGMA user_version") == "0")
        #expect(try raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'mutations_by_state'") == "0")
    }

    @Test("A read-only file that needs a schema migration throws DB_001 with SQLite's reason, not DB_002")
    func readOnlyFileNeedingMigration() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        do {
            let raw = try RawSQLite(path: path)
            try raw.execute("PRAGMA journal_mode = WAL")
            try raw.execute("CREATE TABLE mutations (id INTEGER PRIMARY KEY)")
            try raw.execute("PRAGMA user_version = 1")
        }
        let undo = try ReadOnlyFile.make(path)
        defer { undo() }
        #expect {
            try SQLiteMutationStore(path: path)
        } throws: { error in
            Self.code(of: error) == .storageConnectionFailed && "\(error)".contains("readonly")
        }
        undo()
        #expect(try RawSQLite(path: path).execute("PRAGMA user_version") == "1", "the file is left as it was")
    }

    @Test("A full disk (max_page_count) throws DB_005 and keeps what was already stored")
    func diskFull() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = SQLiteMutationStore.Configuration()
        configuration.maximumPageCount = 16
        let store = try SQLiteMutationStore(path: directory.path("queue.sqlite"), configuration: configuration)
        defer { try? store.close() }
        var stored = 0
        var failure: (any Error)?
        for index in 0..<200 {
            do {
                _ = try store.enqueue(Self.draft("e\(index)", payloadBytes: 2_000))
                stored += 1
            } catch {
                failure = error
                break
            }
        }
        #expect(stored > 0)
        #expect(failure.map(Self.code(of:)) == .diskFull)
        #expect(try store.pendingCount() == stored)
        #expect {
            try store.enqueue(batch: [Self.draft("x", payloadBytes: 2_000), Self.draft("y", payloadBytes: 2_000)])
        } throws: { Self.code(of: $0) == .diskFull }
        #expect(try store.pendingCount() == stored)
        let first = try #require(try store.pending(limit: 1).first)
        try store.record(.applied, for: first.id)
        _ = try store.enqueue(Self.draft("after-space-freed", payloadBytes: 100))
        #expect(try store.pendingCount() == stored)
    }

    @Test("Another connection holding the write lock makes writes throw DB_006 after the busy timeout")
    func busy() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        var configuration = SQLiteMutationStore.Configuration()
        configuration.busyTimeout = .milliseconds(50)
        let store = try SQLiteMutationStore(path: path, configuration: configuration)
        defer { try? store.close() }
        _ = try store.enqueue(Self.draft("before"))
        let other = try RawSQLite(path: path)
        try other.execute("BEGIN IMMEDIATE")
        #expect {
            try store.enqueue(Self.draft("blocked"))
        } throws: { error in
            let classification = (error as? MutationStoreError)?.classification
            return Self.code(of: error) == .storageBusy && classification?.isTransient == true
        }
        #expect(try store.pendingCount() == 1, "readers are not blocked in WAL mode")
        try other.execute("COMMIT")
        _ = try store.enqueue(Self.draft("after"))
        #expect(try store.pendingCount() == 2)
    }

    @Test(
        "A busy timeout or page cap no Int32 holds (or a negative timeout) opens a working store, never a crash",
        arguments: [Duration.seconds(Int64.max), .seconds(Int64.min), .zero, .milliseconds(-1)])
    func hostileBusyTimeout(_ busyTimeout: Duration) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        var configuration = SQLiteMutationStore.Configuration()
        configuration.busyTimeout = busyTimeout
        configuration.maximumPageCount = Int.max
        let store = try SQLiteMutationStore(path: directory.path("queue.sqlite"), configuration: configuration)
        defer { try? store.close() }
        _ = try store.enqueue(Self.draft("a"))
        #expect(try store.pendingCount() == 1)
    }

    @Test("A corrupted file is quarantined and reported; no fresh store unless allowed")
    func corruptionReported() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: path))
        var configuration = SQLiteMutationStore.Configuration()
        configuration.currentDate = { Date(timeIntervalSince1970: 1_234) }
        var message = ""
        #expect {
            try SQLiteMutationStore(path: path, configuration: configuration)
        } throws: { error in
            message = (error as? MutationStoreError)?.message ?? ""
            return Self.code(of: error) == .corruptedData
        }
        #expect(message.contains("quarantined at \(path).corrupt-1234"))
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path + ".corrupt-1234")) == garbage)
    }

    @Test("A second quarantine in the same second keeps the first file and takes the next free name")
    func quarantineNeverOverwrites() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        var configuration = SQLiteMutationStore.Configuration()
        configuration.recreatesCorruptedStore = true
        configuration.currentDate = { Date(timeIntervalSince1970: 1_234) }
        let names = ["corrupt-1234", "corrupt-1234-2", "corrupt-1234-3"]
        for (round, name) in names.enumerated() {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            let garbage = Data(repeating: UInt8(round + 1), count: 8192)
            try garbage.write(to: URL(fileURLWithPath: path))
            let store = try SQLiteMutationStore(path: path, configuration: configuration)
            #expect(store.recovery?.quarantinedPath == "\(path).\(name)")
            try store.close()
        }
        for (round, name) in names.enumerated() {
            let quarantined = try Data(contentsOf: URL(fileURLWithPath: "\(path).\(name)"))
            #expect(quarantined == Data(repeating: UInt8(round + 1), count: 8192))
        }
    }

    /// A configuration that recreates a corrupted store, quarantining it as `.corrupt-<seconds>`.
    static func recreating(at seconds: TimeInterval) -> SQLiteMutationStore.Configuration {
        var configuration = SQLiteMutationStore.Configuration()
        configuration.recreatesCorruptedStore = true
        configuration.currentDate = { Date(timeIntervalSince1970: seconds) }
        return configuration
    }

    @Test("With recreatesCorruptedStore a fresh store opens and recovery names the quarantined file")
    func corruptionRecreated() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        try Self.writeCorruptedStore(at: path)
        let configuration = Self.recreating(at: 99)
        let store = try SQLiteMutationStore(path: path, configuration: configuration)
        defer { try? store.close() }
        let recovery = try #require(store.recovery)
        #expect(recovery.quarantinedPath == path + ".corrupt-99")
        #expect(FileManager.default.fileExists(atPath: recovery.quarantinedPath))
        #expect(try store.pendingCount() == 0)
        _ = try store.enqueue(Self.draft("fresh"))
        #expect(try store.pendingCount() == 1)
    }

    @Test("A quarantine whose fresh store fails to open is still reported by the next open, never an empty store")
    func quarantineReportedAfterFailedFreshOpen() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        try Self.writeCorruptedStore(at: path)
        let configuration = Self.recreating(at: 77)
        var full = configuration
        full.maximumPageCount = 1
        #expect {
            try SQLiteMutationStore(path: path, configuration: full)
        } throws: { Self.code(of: $0) == .diskFull }
        #expect(FileManager.default.fileExists(atPath: path + ".corrupt-77"))
        #expect {
            try SQLiteMutationStore(path: path)
        } throws: { Self.code(of: $0) == .corruptedData }
        let store = try SQLiteMutationStore(path: path, configuration: configuration)
        defer { try? store.close() }
        #expect(store.recovery?.quarantinedPath == path + ".corrupt-77", "the relaunch is told what was quarantined")
        #expect(try SQLiteMutationStore(path: directory.path("queue.sqlite")).recovery == nil, "reported once")
    }

    /// Writes a store of 50 pending mutations at `path`, then smashes the middle of its file (past the header
    /// page) so SQLite finds damaged b-tree pages.
    static func writeCorruptedStore(at path: String) throws {
        do {
            let store = try SQLiteMutationStore(path: path)
            _ = try store.enqueue(batch: (0..<50).map { draft("e\($0)", payloadBytes: 500) })
            try store.close()
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 8192))
        try handle.close()
    }

    @Test("After a corruption every open throws DB_004 naming the quarantined file until a fresh store is accepted")
    func corruptionKeepsFailingUntilAccepted() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        try Self.writeCorruptedStore(at: path)
        var configuration = SQLiteMutationStore.Configuration()
        configuration.currentDate = { Date(timeIntervalSince1970: 77) }
        let quarantined = path + ".corrupt-77"
        for open in 1...3 {
            var message = ""
            #expect("open \(open) throws DB_004") {
                try SQLiteMutationStore(path: path, configuration: configuration)
            } throws: { error in
                message = (error as? MutationStoreError)?.message ?? ""
                return Self.code(of: error) == .corruptedData
            }
            #expect(message.contains(quarantined), "open \(open): \(message)")
            #expect(!FileManager.default.fileExists(atPath: path), "open \(open) created a store")
        }
        #expect(FileManager.default.fileExists(atPath: quarantined))
        var accepting = configuration
        accepting.recreatesCorruptedStore = true
        do {
            let store = try SQLiteMutationStore(path: path, configuration: accepting)
            defer { try? store.close() }
            let recovery = try #require(store.recovery)
            #expect(recovery.quarantinedPath == quarantined)
            #expect(!recovery.reason.isEmpty)
            #expect(try store.pendingCount() == 0)
            _ = try store.enqueue(Self.draft("fresh"))
        }
        let reopened = try SQLiteMutationStore(path: path, configuration: configuration)
        defer { try? reopened.close() }
        #expect(reopened.recovery == nil)
        #expect(try reopened.pending(limit: 10).map(\.entityID) == ["fresh"])
    }

    @Test("A store put back at the path after a corruption is opened, with recovery, once it is accepted")
    func corruptionAcceptsARestoredFile() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let salvaged = directory.path("salvaged.sqlite")
        try Self.writeCorruptedStore(at: path)
        do {
            let store = try SQLiteMutationStore(path: salvaged)
            _ = try store.enqueue(Self.draft("salvaged"))
            try store.close()
        }
        var configuration = SQLiteMutationStore.Configuration()
        configuration.currentDate = { Date(timeIntervalSince1970: 78) }
        #expect(throws: MutationStoreError.self) { try SQLiteMutationStore(path: path, configuration: configuration) }
        try FileManager.default.moveItem(atPath: salvaged, toPath: path)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: salvaged + suffix) }
        #expect("the restored file is not opened before the app accepts it") {
            try SQLiteMutationStore(path: path, configuration: configuration)
        } throws: { error in
            Self.code(of: error) == .corruptedData
        }
        configuration.recreatesCorruptedStore = true
        let store = try SQLiteMutationStore(path: path, configuration: configuration)
        defer { try? store.close() }
        #expect(store.recovery?.quarantinedPath == path + ".corrupt-78")
        #expect(try store.pending(limit: 10).map(\.entityID) == ["salvaged"])
    }

    /// Removes the database file at `path` and, when `withLog` is true, its write-ahead log and index too.
    static func removeDatabaseFile(at path: String, withLog: Bool) throws {
        try FileManager.default.removeItem(atPath: path)
        guard withLog else { return }
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    @Test(
        "A file removed while the store is open is written back before the next write: nothing committed is lost",
        arguments: [true, false])
    func removedFileIsWrittenBack(withLog: Bool) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        do {
            let store = try SQLiteMutationStore(path: path)
            defer { try? store.close() }
            let first = try store.enqueue(Self.draft("a"))
            try store.setMetadata(Data([7]), forKey: "cursor")
            try Self.removeDatabaseFile(at: path, withLog: withLog)
            _ = try store.enqueue(Self.draft("b"))
            #expect(FileManager.default.fileExists(atPath: path))
            #expect(!FileManager.default.fileExists(atPath: path + ".restoring"))
            try store.record(.attemptFailed(error: "reset"), for: first.id)
            #expect(try store.pending(limit: 10).map(\.entityID) == ["a", "b"])
        }
        let reopened = try SQLiteMutationStore(path: path)
        defer { try? reopened.close() }
        let pending = try reopened.pending(limit: 10)
        #expect(pending.map(\.entityID) == ["a", "b"])
        #expect(pending.first?.attempts == 1)
        #expect(try reopened.metadata(forKey: "cursor") == Data([7]))
    }

    @Test("A file removed while the store is open and then closed is written back on close")
    func removedFileIsWrittenBackOnClose() throws {
        let fixture = try OneMutationStore()
        defer { fixture.tearDown() }
        let path = fixture.path
        try Self.removeDatabaseFile(at: path, withLog: true)
        try fixture.store.close()
        let reopened = try SQLiteMutationStore(path: path)
        defer { try? reopened.close() }
        #expect(try reopened.pending(limit: 10).map(\.entityID) == ["a"])
    }

    @Test("A close that cannot write a removed file back throws DB_007 and leaves the store open: nothing is lost")
    func closeThatCannotWriteBackThrows() throws {
        let fixture = try OneMutationStore()
        defer { fixture.tearDown() }
        let (path, store) = (fixture.path, fixture.store)
        // The whole directory goes, so no copy can be made beside the path.
        fixture.directory.remove()
        #expect { try store.close() } throws: { error in
            Self.code(of: error) == .storageFileMoved && "\(error)".contains("cannot be written back")
        }
        #expect(try store.pending(limit: 10).map(\.entityID) == ["a"], "the store is still open")
        try FileManager.default.createDirectory(at: fixture.directory.url, withIntermediateDirectories: true)
        try store.close()
        let reopened = try SQLiteMutationStore(path: path)
        defer { try? reopened.close() }
        #expect(try reopened.pending(limit: 10).map(\.entityID) == ["a"])
    }

    @Test("A close whose copy cannot take the path throws DB_007 naming the copy; a later close puts it there")
    func closeWhoseCopyCannotTakeThePathThrows() throws {
        let fixture = try OneMutationStore()
        defer { fixture.tearDown() }
        let (path, store) = (fixture.path, fixture.store)
        try Self.removeDatabaseFile(at: path, withLog: true)
        // A broken link at the path: it names no file, so the copy is made, but the copy cannot be moved there.
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".gone")
        #expect { try store.close() } throws: { error in
            Self.code(of: error) == .storageFileMoved && "\(error)".contains(path + ".restoring")
        }
        try FileManager.default.removeItem(atPath: path)
        try store.close()
        let reopened = try SQLiteMutationStore(path: path)
        defer { try? reopened.close() }
        #expect(try reopened.pending(limit: 10).map(\.entityID) == ["a"])
    }

    @Test("A different file put at the path while the store is open is left alone, and writes throw DB_007")
    func replacedFileRefusesWrites() throws {
        let fixture = try OneMutationStore()
        defer { fixture.tearDown() }
        let (path, store) = (fixture.path, fixture.store)
        try Self.removeDatabaseFile(at: path, withLog: true)
        let stranger = Data("somebody else's file".utf8)
        #expect(FileManager.default.createFile(atPath: path, contents: stranger))
        #expect { try store.enqueue(Self.draft("b")) } throws: { Self.code(of: $0) == .storageFileMoved }
        #expect(FileManager.default.contents(atPath: path) == stranger)
        // Data at risk is logged as critical, like corruption; busy stays the only transient storage failure.
        let refusal = MutationStoreError(.storageFileMoved, message: "").classification
        #expect(refusal.logLevel == .critical && !refusal.isTransient && refusal.category == .storage)
        #expect(MutationStoreError(.diskFull, message: "").classification.logLevel == .error)
        // Reads still come from the file the store opened.
        #expect(try store.pending(limit: 10).map(\.entityID) == ["a"])
    }

    @Test("A store whose whole directory was removed throws DB_007 on writes and still reads what it holds")
    func removedDirectoryRefusesWrites() throws {
        let fixture = try OneMutationStore()
        defer { fixture.tearDown() }
        let store = fixture.store
        fixture.directory.remove()
        #expect { try store.enqueue(Self.draft("b")) } throws: { Self.code(of: $0) == .storageFileMoved }
        #expect(try store.pending(limit: 10).map(\.entityID) == ["a"])
    }

    @Test(
        "A file emptied while the store is open (truncated to zero) refuses writes with DB_004; nothing is acknowledged"
    )
    func truncatedFileRefusesWrites() throws {
        let fixture = try OneMutationStore()
        defer { fixture.tearDown() }
        let (path, store) = (fixture.path, fixture.store)
        #expect(truncate(path, 0) == 0)
        #expect { try store.enqueue(Self.draft("b")) } throws: { Self.code(of: $0) == .corruptedData }
        #expect { try store.record(.applied, for: 1) } throws: { Self.code(of: $0) == .corruptedData }
        #expect(try store.pending(limit: 10).map(\.entityID) == ["a"], "reads still come from the connection")
    }

    /// A store at `path` whose file holds five mutations (checkpointed into it by closing), open again, with every
    /// page of the file in its cache after one more enqueue ("warm").
    static func storeWithCheckpointedFile(at path: String) throws -> SQLiteMutationStore {
        do {
            let store = try SQLiteMutationStore(path: path)
            defer { try? store.close() }
            _ = try store.enqueue(batch: (0..<5).map { Self.draft("\($0)", payloadBytes: 100) })
        }
        let store = try SQLiteMutationStore(path: path)
        _ = try store.enqueue(Self.draft("warm"))
        return store
    }

    @Test(
        "A file truncated while the store is open, to any size short of its database, refuses writes with DB_004",
        arguments: [4_096, 1_000, 50])
    func partlyTruncatedFileRefusesWrites(size: Int) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let store = try Self.storeWithCheckpointedFile(at: path)
        defer { try? store.close() }
        let before = try store.pending(limit: 100)
        #expect(truncate(path, off_t(size)) == 0)
        #expect { try store.enqueue(Self.draft("late")) } throws: { Self.code(of: $0) == .corruptedData }
        #expect { try store.record(.applied, for: before[0].id) } throws: { Self.code(of: $0) == .corruptedData }
        // A read answers from the connection's cache what was committed, or throws DB_004: never other rows.
        do {
            #expect(try store.pending(limit: 100) == before)
        } catch {
            #expect(Self.code(of: error) == .corruptedData, "\(error)")
        }
    }

    /// Grows the file at `path` through another connection: 40 mutations of 2 KB written and checkpointed into it.
    static func growByAnotherConnection(_ path: String, tag: String) throws {
        let raw = try RawSQLite(path: path)
        for index in 0..<40 {
            try raw.execute(
                "INSERT INTO mutations (entity_type, entity_id, operation, payload, idempotency_key, created_at) "
                    + "VALUES ('event', '\(tag)-\(index)', 'create', zeroblob(2000), '\(tag)-\(index)', 0)")
        }
        try raw.execute("PRAGMA wal_checkpoint(PASSIVE)")
    }

    @Test(
        "A file another connection grew, cut back below its header's size (even to the size last seen): DB_004",
        arguments: [false, true])
    func grownThenTruncatedFileRefusesWrites(cutToTheSeenSize: Bool) throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let store = try Self.storeWithCheckpointedFile(at: path)
        defer { try? store.close() }
        let size = { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
        let first = try #require(try store.pending(limit: 1).first)
        let seen = size()
        try Self.growByAnotherConnection(path, tag: "other")
        let grown = size()
        try #require(grown > seen + 16_384, "the other connection's checkpoint must grow the file")
        // Cut exactly to the size seen, the file's size is what it was at the store's last write, but its header
        // records the grown database.
        let cut = cutToTheSeenSize ? seen : (seen + grown) / 2 / 4_096 * 4_096
        #expect(truncate(path, off_t(cut)) == 0)
        // Writes to pages before the cut: SQLite reads nothing missing, and would commit them into a file that lost
        // the other connection's mutations.
        #expect { try store.setMetadata(Data("cursor".utf8), forKey: "cursor") } throws: {
            Self.code(of: $0) == .corruptedData
        }
        #expect { try store.record(.attemptFailed(error: "timeout"), for: first.id) } throws: {
            Self.code(of: $0) == .corruptedData
        }
    }

    @Test(
        "A file shorter than its header while another connection's checkpoint writes it is not taken for a truncation")
    func fileInTheMiddleOfACheckpointIsNotTruncated() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let store = try Self.storeWithCheckpointedFile(at: path)
        defer { try? store.close() }
        let seen = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        try Self.growByAnotherConnection(path, tag: "other")
        // As the other connection's checkpoint leaves the file halfway: the header written, the last pages not yet.
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        let cut = (seen + whole.count) / 2 / 4_096 * 4_096
        let checkpointer = try RawSQLite(path: path)
        try checkpointer.holdingCheckpointLock {
            #expect(truncate(path, off_t(cut)) == 0)
            try store.setMetadata(Data("during".utf8), forKey: "cursor")
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.seek(toOffset: UInt64(cut))
            try handle.write(contentsOf: whole[cut...])
            try handle.close()
        }
        _ = try store.enqueue(Self.draft("after"))
        #expect(try store.pendingCount() == 6 + 40 + 1)
        #expect(try store.metadata(forKey: "cursor") == Data("during".utf8))
    }

    @Test("A file another connection's checkpoint grew is not taken for a truncation: writes go on")
    func grownFileIsNotTruncated() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let store = try Self.storeWithCheckpointedFile(at: path)
        defer { try? store.close() }
        for round in 0..<3 {
            try Self.growByAnotherConnection(path, tag: "other-\(round)")
            _ = try store.enqueue(Self.draft("after-\(round)"))
        }
        #expect(try store.pendingCount() == 6 + 3 * 40 + 3)
    }

    @Test("A file another connection vacuums smaller while the store is open is not taken for a truncation")
    func vacuumedFileIsNotTruncated() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let store = try Self.storeWithCheckpointedFile(at: path)
        defer { try? store.close() }
        _ = try store.enqueue(batch: (0..<40).map { Self.draft("big-\($0)", payloadBytes: 1_000) })
        try store.close()
        let reopened = try SQLiteMutationStore(path: path)
        defer { try? reopened.close() }
        #expect(try reopened.removeAllPending() == 46)
        let size = { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0 }
        let before = size()
        do {
            let raw = try RawSQLite(path: path)
            try raw.execute("VACUUM")
            try raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        try #require(size() < before, "the vacuum must shrink the file for this test")
        _ = try reopened.enqueue(Self.draft("after"))
        #expect(try reopened.pending(limit: 10).map(\.entityID) == ["after"])
    }

    /// Copies the store's files at `path` as they are on disk now, as a crash would leave them, and returns the
    /// entity ids pending in the copy.
    static func pendingAfterCrash(of path: String, into copy: String) throws -> [String] {
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: copy + suffix)
        }
        let store = try SQLiteMutationStore(path: copy)
        defer { try? store.close() }
        return try store.pending(limit: 100).map(\.entityID)
    }

    @Test("A write-ahead log removed while the store is open is replaced before the next write: a crash keeps it all")
    func removedLogIsReplacedBeforeTheNextWrite() throws {
        let fixture = try OneMutationStore()
        defer { fixture.tearDown() }
        let (path, store) = (fixture.path, fixture.store)
        try FileManager.default.removeItem(atPath: path + "-wal")
        _ = try store.enqueue(Self.draft("b"))
        #expect(FileManager.default.fileExists(atPath: path + "-wal"), "the store writes a log at its path again")
        #expect(try Self.pendingAfterCrash(of: path, into: fixture.directory.path("crash.sqlite")) == ["a", "b"])
        _ = try store.enqueue(Self.draft("c"))
        #expect(
            try Self.pendingAfterCrash(of: path, into: fixture.directory.path("crash-2.sqlite")) == ["a", "b", "c"])
        #expect(try store.pending(limit: 10).map(\.entityID) == ["a", "b", "c"])
    }

    @Test("Two stores on a file whose log was removed: the second reads and writes on once the first replaced it")
    func removedLogReplacedByAnotherStore() throws {
        let fixture = try OneMutationStore()
        defer { fixture.tearDown() }
        let (path, first) = (fixture.path, fixture.store)
        let second = try SQLiteMutationStore(path: path)
        defer { try? second.close() }
        _ = try second.enqueue(Self.draft("b"))
        try FileManager.default.removeItem(atPath: path + "-wal")
        _ = try first.enqueue(Self.draft("c"))
        #expect(try second.pending(limit: 10).map(\.entityID) == ["a", "b", "c"])
        _ = try second.enqueue(Self.draft("d"))
        #expect(try first.pending(limit: 10).map(\.entityID) == ["a", "b", "c", "d"])
        #expect(
            try Self.pendingAfterCrash(of: path, into: fixture.directory.path("crash.sqlite")) == ["a", "b", "c", "d"])
    }

    @Test("A removed file whose copy cannot take the path yet is put there by a later call, not a closed store")
    func interruptedWriteBackIsFinishedLater() throws {
        let fixture = try OneMutationStore()
        defer { fixture.tearDown() }
        let (path, store) = (fixture.path, fixture.store)
        try Self.removeDatabaseFile(at: path, withLog: true)
        // A broken link at the path: it names no file, so the copy is made, but the copy cannot be moved there.
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: path + ".gone")
        #expect { try store.enqueue(Self.draft("b")) } throws: { error in
            Self.code(of: error) == .storageFileMoved && "\(error)".contains(path + ".restoring")
        }
        #expect { try store.pendingCount() } throws: { Self.code(of: $0) == .storageFileMoved }
        try FileManager.default.removeItem(atPath: path)
        #expect(try store.pending(limit: 10).map(\.entityID) == ["a"])
        _ = try store.enqueue(Self.draft("c"))
        try store.close()
        let reopened = try SQLiteMutationStore(path: path)
        defer { try? reopened.close() }
        #expect(try reopened.pending(limit: 10).map(\.entityID) == ["a", "c"])
    }

    @Test("A path that cannot be opened throws DB_001")
    func connectionFailed() {
        #expect {
            try SQLiteMutationStore(path: "/nonexistent-\(UUID().uuidString)/queue.sqlite")
        } throws: { Self.code(of: $0) == .storageConnectionFailed }
    }
}
