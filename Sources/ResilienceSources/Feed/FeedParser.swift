import Foundation
import ResilienceCore

#if canImport(FoundationXML)
import FoundationXML
#endif

/// A hardened RSS 2.0 / RSS 1.0 / Atom 1.0 parser built on Foundation's `XMLParser`.
///
/// Defences, in order:
/// 1. Size: bodies over ``Configuration-swift.struct/maximumBytes`` are refused before parsing; empty or tiny
///    bodies are refused too (a feed is never "nothing").
/// 2. Encoding: UTF-16/UTF-32 bodies are refused (so the byte scans below cannot be bypassed).
/// 3. Entities: any `<!ENTITY` declaration is refused before parsing, so entity-expansion bombs ("billion
///    laughs") and external entities never reach the parser; external entity resolution is also switched
///    off, and the delegate aborts on any entity declaration it still sees.
/// 4. HTML entities (`&nbsp;`, `&mdash;` …), common in real feeds but undefined in XML, are rewritten to
///    numeric references first, so they read as text instead of failing the feed.
/// 5. After `parse()`, the parser's error is checked even when `parse()` returned `true` (it does on
///    truncated input on Linux), and the element stack must be balanced.
/// 6. Depth, item count and field lengths are bounded.
///
/// Every failure throws ``FeedError``; a feed with no items returns `[]` only when it really is a feed.
public struct FeedParser: Sendable {
    /// Limits.
    public struct Configuration: Hashable, Sendable {
        /// The largest body accepted, in bytes.
        public var maximumBytes: Int = 5 * 1024 * 1024
        /// The smallest body accepted (after whitespace), in bytes.
        public var minimumBytes: Int = 16
        /// The most items accepted.
        public var maximumItems: Int = 5_000
        /// The deepest element nesting accepted.
        public var maximumDepth: Int = 64
        /// The longest title, link or id kept, in characters (longer text is cut).
        public var maximumFieldLength: Int = 2_048
        /// The longest summary kept, in characters (longer text is cut).
        public var maximumSummaryLength: Int = 4_096

        /// Creates a configuration.
        public init(
            maximumBytes: Int = 5 * 1024 * 1024, minimumBytes: Int = 16, maximumItems: Int = 5_000,
            maximumDepth: Int = 64, maximumFieldLength: Int = 2_048, maximumSummaryLength: Int = 4_096
        ) {
            self.maximumBytes = maximumBytes
            self.minimumBytes = minimumBytes
            self.maximumItems = maximumItems
            self.maximumDepth = maximumDepth
            self.maximumFieldLength = maximumFieldLength
            self.maximumSummaryLength = maximumSummaryLength
        }

        /// 5 MB, 5,000 items, depth 64.
        public static let standard = Configuration()
    }

    /// The limits.
    public var configuration: Configuration

    /// Creates a parser.
    public init(configuration: Configuration = .standard) {
        self.configuration = configuration
    }

    /// The items of the feed in `data`, attributed to `source`; throws ``FeedError`` for anything that is
    /// not a well-formed, bounded RSS or Atom document.
    public func parse(_ data: Data, source: SourceID) throws -> [FeedItem] {
        try checkBeforeParsing(data)
        let prepared = HTMLEntities.numericReferences(in: data)
        let parser = XMLParser(data: prepared)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = false
        parser.shouldReportNamespacePrefixes = false
        let collector = FeedCollector(configuration: configuration, source: source)
        parser.delegate = collector
        let finished = parser.parse()
        if let violation = collector.violation { throw violation }
        if let error = parser.parserError ?? collector.parseError {
            throw FeedError(.malformedXML, detail: Self.describe(error), line: parser.lineNumber)
        }
        if !finished { throw FeedError(.malformedXML, detail: "the parser stopped", line: parser.lineNumber) }
        guard let root = collector.root else { throw FeedError(.malformedXML, detail: "no root element") }
        if !collector.openElements.isEmpty || !collector.documentEnded {
            throw FeedError(
                .unbalancedElements, detail: "unclosed <\(collector.openElements.last ?? root)>",
                line: parser.lineNumber)
        }
        guard collector.format != nil else { throw FeedError(.notAFeed, detail: "root element <\(root)>") }
        if collector.format == .rss, !collector.sawChannel {
            throw FeedError(.notAFeed, detail: "<\(root)> without a <channel>")
        }
        return collector.items
    }

    private func checkBeforeParsing(_ data: Data) throws {
        if data.count > configuration.maximumBytes {
            throw FeedError(.tooLarge, detail: "\(data.count) bytes, limit \(configuration.maximumBytes)")
        }
        let meaningful = data.lazy.filter { !(Self.whitespace.contains($0)) }.prefix(configuration.minimumBytes).count
        if meaningful < configuration.minimumBytes {
            throw FeedError(.empty, detail: data.isEmpty ? "empty body" : "\(data.count) bytes is too short for a feed")
        }
        let head = Array(data.prefix(4))
        if head.starts(with: [0xFE, 0xFF]) || head.starts(with: [0xFF, 0xFE]) || head.prefix(4).contains(0) {
            throw FeedError(.unsupportedEncoding, detail: "UTF-16/UTF-32 feeds are not accepted")
        }
        if Self.containsEntityDeclaration(data) {
            throw FeedError(.entityDeclaration, detail: "entity declarations are refused")
        }
    }

    private static let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF]

    /// True when `data` contains `<!ENTITY` (ASCII case-insensitive).
    static func containsEntityDeclaration(_ data: Data) -> Bool {
        let pattern = Array("<!ENTITY".utf8)
        var matched = 0
        for byte in data {
            let upper = (97...122).contains(byte) ? byte - 32 : byte
            if upper == pattern[matched] {
                matched += 1
                if matched == pattern.count { return true }
            } else {
                matched = upper == pattern[0] ? 1 : 0
            }
        }
        return false
    }

    private static func describe(_ error: any Error) -> String {
        let nsError = error as NSError
        return "XML error \(nsError.code)"
    }
}
