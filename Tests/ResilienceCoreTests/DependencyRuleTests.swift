import Foundation
import Testing

/// ARCHITECTURE.md's one dependency rule, enforced by reading the `import` lines under `Sources/`:
/// a feature module (and the test kit) imports `ResilienceCore` and no other module of ours.
@Suite("Dependency rule")
struct DependencyRuleTests {
    static let sourcesDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    static let compositionRoots: Set<String> = ["ResilienceCore", "ResilienceKit"]

    static func ourImports(in file: URL) throws -> [String] {
        let text = try String(contentsOf: file, encoding: .utf8)
        let pattern = try NSRegularExpression(
            pattern: #"^\s*(?:@[A-Za-z_]+\s+)*(?:public\s+|internal\s+|package\s+)?import\s+(Resilience[A-Za-z]*)"#,
            options: [.anchorsMatchLines])
        let range = NSRange(text.startIndex..., in: text)
        return pattern.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: 1), in: text).map { String(text[$0]) }
        }
    }

    @Test("Feature modules import only ResilienceCore")
    func featureModulesImportOnlyCore() throws {
        let manager = FileManager.default
        let modules = try manager.contentsOfDirectory(atPath: Self.sourcesDirectory.path)
            .filter { $0.hasPrefix("Resilience") && !Self.compositionRoots.contains($0) }
        #expect(modules.contains("ResiliencePolicies"))
        #expect(modules.contains("ResilienceTesting"))
        var violations: [String] = []
        for module in modules {
            let root = Self.sourcesDirectory.appendingPathComponent(module)
            let files =
                manager.enumerator(at: root, includingPropertiesForKeys: nil)?
                .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
            for file in files {
                for imported in try Self.ourImports(in: file) where imported != "ResilienceCore" {
                    violations.append("\(module)/\(file.lastPathComponent) imports \(imported)")
                }
            }
        }
        #expect(violations.isEmpty, "\(violations)")
    }

    @Test("The import scanner sees every spelling of an import")
    func scannerRecognisesImports() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("scanner-\(UUID()).swift")
        try """
        import ResilienceCore
        @_exported import ResiliencePolicies
        public import ResilienceTransport
          @testable import ResilienceSync
        // import ResilienceNotReal (comment, not an import)
        """.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(
            try Self.ourImports(in: file)
                == ["ResilienceCore", "ResiliencePolicies", "ResilienceTransport", "ResilienceSync"])
    }
}
