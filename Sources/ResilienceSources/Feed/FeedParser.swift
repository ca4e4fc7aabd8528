import Foundation
import ResilienceCore

/// A hardened RSS (0.9x, 1.0, 2.0), Atom (0.3, 1.0) and Channel Definition Format parser with its own XML
/// tokenizer: a pull-style, well-formedness-checking scanner over the UTF-8 bytes, with no recursion and no
/// Foundation `XMLParser`.
///
/// Defences and repairs, in order:
/// 1. Size: bodies over ``Configuration-swift.struct/maximumBytes`` are refused before parsing; empty or tiny
///    bodies are refused too (a feed is never "nothing").
/// 2. Encoding: the body is converted to UTF-8 first (byte-order mark, then the HTTP `charset`, then the XML
///    declaration, as RFC 7303 orders them), so the byte scans below see every document the same way.
/// 3. Entities: internal general entities declared in the document type declaration are expanded, within
///    bounds (declarations, replacement length, total expansion) that refuse an expansion bomb; external
///    entities are refused and nothing is ever fetched.
/// 4. HTML named entities (the full HTML5 set) are decoded; an unknown one loses only the text it stands
///    for, with a ``FeedWarning`` on its item; a bare `&` reads as a literal ampersand.
/// 5. Names are resolved by namespace URI (`<atom:feed>` and `<feed xmlns="…Atom">` are the same element);
///    a prefix used without a declaration falls back to its conventional namespace.
/// 6. The document must be well-formed to its end: elements balanced, one root, no forbidden character.
///    Depth, item count and field lengths are bounded; nesting never recurses.
///
/// What is read from where is documented in `Docs/Feeds.md`.
public struct FeedParser: Sendable {
    /// Limits. A negative size or length counts as zero; `Int.max` (or any value too large to compute with)
    /// as no limit.
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
        /// - Parameters:
        ///   - maximumBytes: The largest body accepted, in bytes.
        ///   - minimumBytes: The smallest body accepted (after whitespace), in bytes.
        ///   - maximumItems: The most items accepted.
        ///   - maximumDepth: The deepest element nesting accepted.
        ///   - maximumFieldLength: The longest title, link or id kept, in characters.
        ///   - maximumSummaryLength: The longest summary kept, in characters.
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

        /// The limits as a parse applies them: a negative size or length counts as zero, and one too large
        /// to compute with (`Int.max` for "no limit") as the largest that can be, so no limit can make a parse
        /// crash.
        var effective: Configuration {
            var limits = self
            limits.maximumBytes = min(max(0, maximumBytes), Int.max / 4)
            limits.minimumBytes = max(0, minimumBytes)
            limits.maximumFieldLength = min(max(0, maximumFieldLength), Int.max / 16)
            limits.maximumSummaryLength = min(max(0, maximumSummaryLength), Int.max / 16)
            return limits
        }
    }

    /// The limits.
    public var configuration: Configuration

    /// Creates a parser.
    /// - Parameter configuration: The limits.
    public init(configuration: Configuration = .standard) {
        self.configuration = configuration
    }

    /// The items of the feed in `data`, attributed to `source`; throws ``FeedError`` for anything that is
    /// not a well-formed, bounded RSS or Atom document.
    public func parse(_ data: Data, source: SourceID) throws -> [FeedItem] {
        try parseDocument(data, source: source).items
    }

    /// The whole feed in `data`: items, title, polling hint and warnings.
    /// - Parameters:
    ///   - data: The body as received.
    ///   - source: The source the items are attributed to.
    ///   - contentType: The HTTP `Content-Type`, whose `charset` takes precedence over the XML declaration.
    ///   - documentURL: Where the feed was fetched from: the base for relative links.
    /// - Throws: ``FeedError``.
    public func parseDocument(
        _ data: Data, source: SourceID, contentType: String? = nil, documentURL: URL? = nil
    ) throws -> FeedDocument {
        let configuration = configuration.effective
        try Self.checkSize(data, configuration)
        let decoded = try FeedCharset.decode(data, contentType: contentType)
        if decoded.data.count > configuration.maximumBytes * 2 {
            throw FeedError(.tooLarge, detail: "\(decoded.data.count) bytes as UTF-8")
        }
        var collector = FeedCollector(configuration: configuration, documentURL: documentURL)
        let bareAmpersands = try decoded.data.withUnsafeBytes { raw throws(FeedError) in
            try Self.read(raw.bindMemory(to: UInt8.self), into: &collector)
        }
        guard let root = collector.root else { throw FeedError(.malformedXML, detail: "no root element") }
        guard let format = collector.format else { throw FeedError(.notAFeed, detail: "root element <\(root.local)>") }
        if format == .rss || format == .rdf, !collector.sawChannel, collector.drafts.isEmpty {
            throw FeedError(.notAFeed, detail: "<\(root.local)> without a <channel>")
        }
        var warnings = decoded.warnings
        if bareAmpersands > 0 {
            warnings.append(FeedWarning(.bareAmpersand, detail: "\(bareAmpersands) read as text"))
        }
        warnings += collector.warnings
        let builder = FeedItemBuilder(configuration: configuration, source: source, collector: collector)
        return FeedDocument(
            format: format, title: builder.feedTitle(), items: collector.drafts.map(builder.item),
            pollingInterval: builder.pollingInterval(), encoding: decoded.encodingName, warnings: warnings)
    }

    /// Feeds the events of `bytes` to `collector` until the document ends or the collector objects; returns
    /// how many `&` were read as text.
    private static func read(
        _ bytes: UnsafeBufferPointer<UInt8>, into collector: inout FeedCollector
    ) throws(FeedError)
        -> Int
    {
        var tokenizer = XMLTokenizer(bytes)
        /// The prefixes bound by the open elements' start tags, and how many each bound.
        var boundPrefixes: [String] = []
        var bindingCounts: [Int] = []
        while true {
            let event = try tokenizer.next()
            switch event {
            case .startElement:
                var attributes: [String: String] = [:]
                var bound = 0
                for attribute in tokenizer.attributes {
                    let value = tokenizer.attributeValue(attribute)
                    if let prefix = tokenizer.declaredPrefix(attribute.name) {
                        collector.startMapping(prefix: prefix, to: value)
                        boundPrefixes.append(prefix)
                        bound += 1
                    } else {
                        attributes[tokenizer.string(attribute.name)] = value
                    }
                }
                bindingCounts.append(bound)
                collector.startElement(tokenizer.string(tokenizer.elementName), attributes: attributes)
            case .endElement:
                collector.endElement()
                for _ in 0..<(bindingCounts.popLast() ?? 0) {
                    collector.endMapping(prefix: boundPrefixes.removeLast())
                }
            case .text, .cdata:
                if collector.isCapturing { collector.characters(tokenizer.text(event)) }
            case .endOfDocument:
                collector.endDocument()
                return tokenizer.bareAmpersands
            }
            if let violation = collector.violation {
                throw FeedError(violation.code, detail: violation.detail, line: tokenizer.line)
            }
        }
    }

    /// Runs only the XML tokenizer over `utf8` (no charset detection, no feed logic) and returns how many
    /// events it produced: the floor the feed parser's speed is measured against.
    /// - Parameter utf8: A UTF-8 document.
    /// - Throws: ``FeedError`` where the document is not well-formed.
    @_spi(Benchmarks)
    public static func tokenizeOnly(_ utf8: Data) throws -> Int {
        try utf8.withUnsafeBytes { raw throws(FeedError) in
            var tokenizer = XMLTokenizer(raw.bindMemory(to: UInt8.self))
            var events = 0
            while try tokenizer.next() != .endOfDocument { events += 1 }
            return events
        }
    }

    private static func checkSize(_ data: Data, _ configuration: Configuration) throws {
        if data.count > configuration.maximumBytes {
            throw FeedError(.tooLarge, detail: "\(data.count) bytes, limit \(configuration.maximumBytes)")
        }
        let meaningful = data.lazy.filter { !(insignificant.contains($0)) }.prefix(configuration.minimumBytes)
            .count
        if meaningful < configuration.minimumBytes {
            throw FeedError(.empty, detail: data.isEmpty ? "empty body" : "\(data.count) bytes is too short for a feed")
        }
    }

    /// Whitespace, byte-order-mark bytes and the NULs of UTF-16/32.
    private static let insignificant: Set<UInt8> = [0x00, 0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF, 0xFE, 0xFF]
}
