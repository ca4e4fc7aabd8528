#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Which file is at a path: its device and inode. Both SQLite stores (the HTTP cache and the mutation queue) keep
/// their write-ahead log's, to notice the log removed or replaced while they write into it.
package struct FileIdentity: Equatable, Sendable {
    /// The device the file is on.
    package var device: UInt64
    /// The file's inode on that device.
    package var inode: UInt64

    /// The file at `path` (one `lstat`: a link is not followed), or `nil` when nothing is there.
    package init?(path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}
