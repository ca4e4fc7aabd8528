import Foundation

/// Where a corrupt database file is moved aside: the one naming rule both SQLite stores (the HTTP cache and the
/// mutation queue) follow, so a second corruption never takes, or loses, the name of the first.
package enum QuarantineName {
    /// The first free name of `<path>.corrupt-<unix time>`, `<path>.corrupt-<unix time>-2`, `-3`, … at `date`:
    /// a file already quarantined in the same second keeps its name, and the new one takes the next.
    package static func destination(for path: String, at date: Date) -> String {
        let manager = FileManager.default
        let stamp = Int64(date.timeIntervalSince1970)
        var target = "\(path).corrupt-\(stamp)"
        var suffix = 1
        while manager.fileExists(atPath: target) || manager.fileExists(atPath: target + "-wal") {
            suffix += 1
            target = "\(path).corrupt-\(stamp)-\(suffix)"
        }
        return target
    }
}
