import Foundation
import Testing

/// Makes a file read-only for the test's process, root included: its mode loses every write bit and, for root
/// (whom modes do not stop), it is marked immutable (`chattr +i`).
enum ReadOnlyFile {
    /// Makes `path` read-only and returns what undoes it (safe to call more than once). Fails the test when the
    /// file stays writable.
    static func make(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> () -> Void {
        let manager = FileManager.default
        try manager.setAttributes([.posixPermissions: 0o444], ofItemAtPath: path)
        var immutable = false
        if geteuid() == 0 { immutable = chattr("+i", path) }
        let undo = {
            if immutable { _ = chattr("-i", path) }
            try? manager.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        }
        guard access(path, W_OK) != 0 else {
            undo()
            Issue.record("\(path) stays writable: cannot make it read-only here", sourceLocation: sourceLocation)
            throw CocoaError(.fileWriteNoPermission)
        }
        return undo
    }

    /// Runs `chattr flag path`; whether it succeeded.
    private static func chattr(_ flag: String, _ path: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [flag, path]
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
