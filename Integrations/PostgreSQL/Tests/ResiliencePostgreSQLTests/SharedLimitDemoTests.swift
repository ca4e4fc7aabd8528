import Foundation
import Testing

/// The multi-process test: runs the `shared-limit-demo` executable, which starts four replica processes that
/// share one 20 requests/s limit and one breaker through the test cluster, fails the server for 3 s, stops
/// PostgreSQL for 10 s and starts it again, then checks every goal and exits non-zero if one fails.
@Suite("shared-limit-demo across four processes", .serialized, .timeLimit(.minutes(4)))
struct SharedLimitDemoTests {
    /// The demo is built beside the test bundle (`swift test` builds every product of the package).
    static let demoExecutable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("shared-limit-demo")

    /// The demo stops and restarts the cluster, so it needs the control variables `.ci/postgres.sh` sets too.
    static var canControlTheCluster: Bool {
        ["RESILIENCE_PG_PORT", "RESILIENCE_PG_CTL", "RESILIENCE_PG_DATA", "RESILIENCE_PG_SOCKET_DIR"].allSatisfy {
            TestDatabase.environment[$0] != nil
        }
    }

    @Test(
        .enabled(
            if: canControlTheCluster,
            "needs the RESILIENCE_PG_* variables of .ci/postgres.sh (including RESILIENCE_PG_CTL) to stop PostgreSQL"
        ))
    func fourProcessesMeetEveryGoal() async throws {
        let executable = Self.demoExecutable
        try #require(
            FileManager.default.isExecutableFile(atPath: executable.path),
            "shared-limit-demo was not built at \(executable.path)")
        let duration = 30.0
        // Output goes to a file, not a pipe: the four replicas inherit it, and a pipe nobody drains could
        // block them.
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("shared-limit-demo-\(getpid()).txt")
        defer { try? FileManager.default.removeItem(at: output) }
        let demo = try ChildProcess(
            executable: executable.path, arguments: ["--duration", "\(Int(duration))"], output: output.path)
        // The demo ends 1.5 s after `duration` plus its analysis; it waits at most 15 s for a hung replica.
        // Anything beyond a generous bound counts as a hang.
        let exitStatus = try await demo.waitForExit(within: .seconds(duration + 90))
        let hung = exitStatus == nil

        let report = try String(contentsOf: output, encoding: .utf8)
        let lines = report.split(separator: "\n")
        let passed = lines.filter { $0.hasPrefix("PASS") }
        let failed = lines.filter { $0.hasPrefix("FAIL") }
        #expect(!hung, "shared-limit-demo did not finish within \(Int(duration + 90)) s:\n\(report)")
        #expect(
            exitStatus == 0, "shared-limit-demo exited with \(exitStatus.map(String.init) ?? "no status"):\n\(report)")
        #expect(failed.isEmpty, "goals failed:\n\(report)")
        #expect(passed.count == 7, "expected the demo's seven goals to pass:\n\(report)")
        print(report)
    }
}

/// A child process started with `posix_spawn` and reaped by polling `waitpid`.
///
/// Foundation's `Process` did not notice this child's exit inside the test runner on Linux (the child stayed a
/// zombie and `isRunning` stayed true), so the test spawns and reaps the process itself.
struct ChildProcess {
    let pid: pid_t

    /// Starts `executable` with `arguments`, standard output and error appended to the file at `output`.
    init(executable: String, arguments: [String], output: String) throws {
        #if canImport(Darwin)
        var actions: posix_spawn_file_actions_t?
        #else
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard result == 0 else { throw SpawnError(code: result) }
        self.pid = pid
    }

    /// Waits for the process to exit and returns its exit code (or 128 + the signal that ended it); kills it and
    /// returns nil when it is still running after `limit`.
    func waitForExit(within limit: Duration) async throws -> Int32? {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: limit)
        var status: Int32 = 0
        while clock.now < deadline {
            if waitpid(pid, &status, WNOHANG) == pid { return Self.exitCode(status) }
            try await Task.sleep(for: .milliseconds(200))
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        return nil
    }

    /// Decodes a `waitpid` status: the exit code, or 128 + the terminating signal.
    private static func exitCode(_ status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// `posix_spawn` failed with `code` (an `errno` value).
    struct SpawnError: Error {
        let code: Int32
    }
}
