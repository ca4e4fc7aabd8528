import Foundation
import ResilienceSync
import ResilienceTesting
import Testing

/// A real file system that refuses to grow a file: the `sync-crash-child` process runs under a file size limit
/// (`ulimit -f`, with `SIGXFSZ` ignored, so a write past it fails with `EFBIG` as a full disk fails with
/// `ENOSPC`). The kernel's error reaches SQLite as an I/O error (its shared-memory index cannot grow, a write to
/// the log comes up short), which the store must report as `DB_005`, not as an unknown failure, and every
/// acknowledged enqueue must still be in the store afterwards.
@Suite("SQLiteMutationStore under a file size limit", .serialized)
struct SQLiteFileSizeLimitTests {
    struct Outcome {
        var status: Int32
        var standardError: String
    }

    /// Runs the child under a file size limit of `blocks` × 512 bytes and waits (60 s at most).
    static func runChild(limitBlocks blocks: Int, store: String, log: String, count: Int) async throws -> Outcome {
        let child = try #require(SyncCrashSafetyTests.childBinary(), "sync-crash-child is not built beside the tests")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "trap '' XFSZ; ulimit -f \(blocks) || exit 99; exec \"$0\" \"$@\"", child.path,
            "--store", store, "--log", log, "--url", "http://127.0.0.1:9/mutations", "--count", "\(count)",
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let finished = await SyncCrashSafetyTests.wait(for: process, timeout: .seconds(60))
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(finished, "the child hung: \(text)")
        return Outcome(status: process.terminationStatus, standardError: text)
    }

    @Test("Opening a store whose files cannot grow throws DB_005, and the store is intact afterwards")
    func openingWithoutSpace() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let store = try SQLiteMutationStore(path: path)
        _ = try store.enqueue(MutationDraft(entityType: "event", entityID: "a", operation: .create))
        try store.close()

        let outcome = try await Self.runChild(limitBlocks: 0, store: path, log: directory.path("log"), count: 1)
        #expect(outcome.status == 3, "the store must not open: \(outcome.standardError)")
        #expect(outcome.standardError.contains("DB_005"), "\(outcome.standardError)")

        let reopened = try SQLiteMutationStore(path: path)
        defer { try? reopened.close() }
        #expect(reopened.recovery == nil)
        #expect(try reopened.pending(limit: 10).map(\.entityID) == ["a"])
    }

    @Test("Enqueues that hit the limit throw DB_005; every acknowledged one is kept, in order, and none other")
    func enqueueWithoutSpace() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("queue.sqlite")
        let logPath = directory.path("acknowledged.log")
        // The store's files may grow to 160 KiB: the shared-memory index (32 KiB), the schema and a few enqueues.
        let outcome = try await Self.runChild(limitBlocks: 320, store: path, log: logPath, count: 200)
        #expect(outcome.status == 5, "an enqueue must fail: \(outcome.standardError)")
        #expect(outcome.standardError.contains("enqueue failed: DB_005"), "\(outcome.standardError)")

        let logged = (try String(contentsOfFile: logPath, encoding: .utf8)).split(separator: "\n").map(String.init)
        let reopened = try SQLiteMutationStore(path: path)
        defer { try? reopened.close() }
        #expect(reopened.recovery == nil)
        #expect(!logged.isEmpty)
        #expect(try reopened.pending(limit: 1_000).map(\.idempotencyKey) == logged)
        _ = try reopened.enqueue(MutationDraft(entityType: "event", entityID: "after", operation: .create))
        #expect(try reopened.pendingCount() == logged.count + 1)
    }
}
