#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// The `errno` values that mean the file system has no room for a write: no space left (`ENOSPC`), a quota spent
/// (`EDQUOT`), a file size limit (`EFBIG`). Both SQLite stores (the HTTP cache and the mutation queue) read a
/// failed write's `errno` through it, so a full disk is told apart from a failing one the same way in each.
package enum DiskFullErrno {
    /// Whether `code` is one of them.
    package static func matches(_ code: Int32) -> Bool {
        code == ENOSPC || code == EDQUOT || code == EFBIG
    }
}
