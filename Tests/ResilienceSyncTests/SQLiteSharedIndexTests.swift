import Foundation
import ResilienceSync
import ResilienceTesting
import Testing

/// A store whose shared-memory index (`<path>-shm`), alone or with its write-ahead log, is removed while it is open,
/// and another process (the `sync-crash-child`) opens the file meanwhile: the two must not write the one log through
/// two indexes.
@Suite("SQLiteMutationStore with its shared-memory index removed", .serialized)
struct SQLiteSharedIndexTests {
    @Test(
        "An index (alone or with its log) removed while open, another process writing: every acknowledged enqueue kept",
        arguments: [["-shm"], ["-wal", "-shm"]])
    func removedIndexWithAnotherProcess(removing suffixes: [String]) async throws {
        let child = try #require(SyncCrashSafetyTests.childBinary(), "sync-crash-child is not built beside the tests")
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let logPath = directory.path("acknowledged.log")
        let store = try SQLiteMutationStore(path: path)
        defer { try? store.close() }
        var mine = [try store.enqueue(SQLiteMutationStoreTests.draft("a")).entityID]
        for suffix in suffixes { try FileManager.default.removeItem(atPath: path + suffix) }
        // Nothing listens on port 9: the child's engine only records failed attempts, and applies nothing.
        let process = try SyncCrashSafetyTests.launch(
            child, ["--store", path, "--log", logPath, "--url", "http://127.0.0.1:9/mutations", "--count", "30"])
        // The two processes take turns: each enqueue of this one waits for one more of the child's.
        for index in 0..<30 {
            mine.append(try store.enqueue(SQLiteMutationStoreTests.draft("mine-\(index)")).entityID)
            _ = await SyncCrashSafetyTests.waitForLog(logPath, toReach: index + 1, of: process, timeout: .seconds(10))
        }
        kill(process.processIdentifier, SIGKILL)
        _ = await SyncCrashSafetyTests.wait(for: process, timeout: .seconds(10))
        let logged = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(!logged.isEmpty)
        // What a crash of this process now would leave.
        let crash = directory.path("crash.sqlite")
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: crash + suffix)
        }
        let after = try SQLiteMutationStore(path: crash)
        defer { try? after.close() }
        let pending = try after.pending(limit: 1_000)
        #expect(Set(mine).subtracting(pending.map(\.entityID)).isEmpty, "enqueues of this process lost")
        #expect(Set(logged).subtracting(pending.map(\.idempotencyKey)).isEmpty, "enqueues of the other process lost")
    }
}
