import Foundation
import Testing

/// Makes a file read-only for the test's process, root included. Its mode loses every write bit; root, whom modes
/// do not stop, gets the file marked immutable (`chattr +i`) or, where that is refused (no `CAP_LINUX_IMMUTABLE`, a
/// file system without the flag), a read-only bind mount of the file on itself. When neither can be done the
/// test is skipped, saying why.
enum ReadOnlyFile {
    /// Makes `path` read-only and returns what undoes it (safe to call more than once). Skips the test (cancels
    /// it) when the file stays writable whatever is tried.
    static func make(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> () -> Void {
        let manager = FileManager.default
        try manager.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        var undoing: [() -> Void] = [{ try? manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path) }]
        var undone = false
        let undo = {
            guard !undone else { return }
            undone = true
            for step in undoing.reversed() { step() }
        }
        if access(path, W_OK) == 0, run("/usr/bin/chattr", "+i", path) {
            undoing.append { _ = run("/usr/bin/chattr", "-i", path) }
        }
        if access(path, W_OK) == 0, run("/usr/bin/mount", "--bind", path, path) {
            undoing.append { _ = run("/usr/bin/umount", path) }
            _ = run("/usr/bin/mount", "-o", "remount,bind,ro", path)
        }
        guard access(path, W_OK) != 0 else {
            undo()
            let reason =
                "\(path) stays writable for this process: its mode does not stop root, and neither chattr +i nor "
                + "a read-only bind mount is permitted here"
            try Test.cancel(Comment(rawValue: reason), sourceLocation: sourceLocation)
        }
        return undo
    }

    /// Runs `executable` with `arguments`; whether it exited 0.
    private static func run(_ executable: String, _ arguments: String...) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
