import Foundation

/// Finds the module's resource bundle without SwiftPM's generated `Bundle.module`, which stops the program
/// when the bundle is missing (an executable copied without its `.resources` folder, an unusual packaging).
/// A missing bundle must degrade the messages, never crash the app: without it every language reads English,
/// which is compiled in.
enum PresentationResources {
    /// The bundle holding `de.lproj` …, or `nil` when it was not shipped.
    static let bundle: Bundle? = locate()

    private static let bundleSuffixes = ["_ResiliencePresentation.resources", "_ResiliencePresentation.bundle"]

    private static func locate() -> Bundle? {
        var directories: [URL] = [Bundle.main.bundleURL]
        if let resources = Bundle.main.resourceURL { directories.append(resources) }
        directories += Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        directories += Bundle.allBundles.compactMap(\.resourceURL)
        let manager = FileManager.default
        for directory in directories {
            guard let entries = try? manager.contentsOfDirectory(atPath: directory.path) else { continue }
            for entry in entries.sorted() where bundleSuffixes.contains(where: entry.hasSuffix) {
                if let bundle = Bundle(url: directory.appendingPathComponent(entry)) { return bundle }
            }
        }
        return nil
    }
}
