import Foundation

/// Finds an executable product of this package built beside the running tests (`.build/debug/NAME`), for
/// tests that run a helper program in a process of its own (a crash child, a memory probe, a connectivity
/// probe in a network namespace).
public enum BuiltExecutable {
    /// The executable named `name` in the build directory of the running test bundle, or `nil` when it was
    /// not built (declare it as a dependency of the test target so it is).
    ///
    /// - Parameter name: The product's name (`"sync-crash-child"`).
    public static func url(named name: String) -> URL? {
        var roots = [URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()]
        roots += Bundle.allBundles.map(\.bundleURL)
        roots.append(Bundle.main.bundleURL)
        for root in roots {
            var directory = root.deletingLastPathComponent()
            for _ in 0..<5 {
                let candidate = directory.appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
                directory = directory.deletingLastPathComponent()
            }
        }
        return nil
    }
}
