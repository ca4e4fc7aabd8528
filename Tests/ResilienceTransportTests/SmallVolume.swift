import Foundation

/// A tmpfs of a few hundred kilobytes mounted on a fresh directory: a real file system that runs out of space
/// (`ENOSPC`), for tests of what a store does on a full disk. Mounting needs root (or `CAP_SYS_ADMIN`).
struct SmallVolume {
    let directory: String

    /// Whether a tmpfs can be mounted here (tried once, on a directory of its own).
    static let isAvailable: Bool = {
        guard let volume = try? SmallVolume(bytes: 64 << 10) else { return false }
        volume.unmount()
        return true
    }()

    /// Mounts a tmpfs of `bytes` on a new directory under the temporary directory.
    init(bytes: Int) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("small-volume-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        guard Self.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=\(bytes)", "tmpfs", directory]) else {
            try? FileManager.default.removeItem(atPath: directory)
            throw CocoaError(.fileWriteNoPermission)
        }
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// Unmounts the volume (everything on it goes) and removes its directory.
    func unmount() {
        _ = Self.run("/usr/bin/umount", [directory])
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func run(_ executable: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
