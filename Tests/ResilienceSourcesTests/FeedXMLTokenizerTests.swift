import Foundation
import ResilienceSources
import Testing

/// The feed parser's own XML tokenizer, through the public parser: what XML 1.0 requires of a feed, and
/// the typed error each violation gives.
@Suite("Feed XML tokenizer")
struct FeedXMLTokenizerTests {
    let parser = FeedParser()

    func titles(_ text: String, parser: FeedParser? = nil) throws -> [String] {
        try (parser ?? self.parser).parse(Data(text.utf8), source: "t").map(\.title)
    }

    func code(_ text: String, parser: FeedParser? = nil) -> FeedError.Code? {
        do {
            _ = try (parser ?? self.parser).parse(Data(text.utf8), source: "t")
            return nil
        } catch {
            return (error as? FeedError)?.code
        }
    }

    func rss(_ item: String) -> String { "<rss version=\"2.0\"><channel><title>T</title>\(item)</channel></rss>" }

    @Test("Attributes: both quote styles, whitespace around =, references and normalised whitespace")
    func attributes() throws {
        let feed = rss(
            """
            <item><title>A</title><link>https://e.example/a</link>
            <enclosure url = 'https://e.example/a.mp3?x=1&amp;y=2' type="audio/mpeg"\tlength="12"\n/></item>
            """)
        let items = try parser.parse(Data(feed.utf8), source: "t")
        #expect(items.first?.enclosures.first?.url.absoluteString == "https://e.example/a.mp3?x=1&y=2")
        #expect(items.first?.enclosures.first?.length == 12)
    }

    @Test("Malformed tags and attributes are malformed-xml")
    func malformedTags() throws {
        let cases = [
            rss("<item a=\"1\" a=\"2\"><title>dup</title></item>"),
            rss("<item a=\"1\"b=\"2\"><title>no space</title></item>"),
            rss("<item a=1><title>unquoted</title></item>"),
            rss("<item a><title>no value</title></item>"),
            rss("<item a=\"<\"><title>lt</title></item>"),
            rss("<item><title>x ]]> y</title></item>"),
            rss("<item><title>x</title><!BOGUS></item>"),
            rss("<item>< title>x</title></item>"),
            "{\"json\": \"is not a feed at all\"}",
            rss("<item><title>x</title></item>") + "<rss/>",
            rss("<item><title>x</title></item>") + "trailing text",
        ]
        for text in cases { #expect(code(text) == .malformedXML, "\(text)") }
        let many = (0..<40).map { " a\($0)=\"\($0)\"" }.joined()
        #expect(code(rss("<item\(many) a39=\"again\"><title>x</title></item>")) == .malformedXML)
        #expect(try titles(rss("<item\(many)><title>many</title></item>")) == ["many"])
    }

    @Test("Mismatched, unclosed and stray end tags keep their codes")
    func balance() {
        #expect(code(rss("<item><title>x</item></title>")) == .unbalancedElements)
        #expect(code("<rss version=\"2.0\"><channel></channel></rss></rss>") == .unbalancedElements)
        #expect(code("<rss version=\"2.0\"><channel><item><title>cut") == .truncated)
        #expect(code("<rss version=\"2.0\"><channel><item><title>x</title><link") == .truncated)
        #expect(code("<rss version=\"2.0\"><channel><item><title><![CDATA[cut") == .truncated)
        #expect(code("<rss version=\"2.0\"><channel><item><title>x</title><!-- cut") == .truncated)
        #expect(code("<rss version=\"2.0\"><channel><item><title a=\"cut") == .truncated)
    }

    @Test("Characters XML forbids, raw or as references")
    func characters() throws {
        #expect(code(rss("<item><title>bell \u{7}</title></item>")) == .invalidCharacter)
        #expect(code(rss("<item><title>x\u{FFFE}</title></item>")) == .invalidCharacter)
        #expect(code(rss("<item><title>x</title><guid a=\"\u{1}\">g</guid></item>")) == .invalidCharacter)
        let document = try parser.parseDocument(
            Data(rss("<item><title>A&#1;B &#x41;&#66;&#x1F600;</title></item>").utf8), source: "t")
        #expect(document.items.map(\.title) == ["AB AB😀"])
        #expect(document.items.first?.warnings.contains { $0.code == .unknownEntity } == true)
    }

    @Test("CDATA, comments, processing instructions and a DOCTYPE (with an internal subset) are read or skipped")
    func markup() throws {
        let feed = """
            <?xml version="1.0" encoding="utf-8"?>
            <?xml-stylesheet type="text/xsl" href="s.xsl"?>
            <!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "http://e.example/rss-0.91.dtd" [
              <!ELEMENT rss ANY> <!-- a comment with ] and > inside --> <!ATTLIST rss version CDATA "0.91">
            ]>
            <!-- before the root -->
            <rss version="0.91"><channel><title>T</title><?pi?>
            <item><title><![CDATA[One & <b>two</b>]]></title><!-- x --><link>https://e.example/1</link></item>
            </channel></rss>
            <!-- after the root -->
            """
        #expect(try titles(feed) == ["One & two"])
        #expect(code("<!DOCTYPE a><!DOCTYPE b>" + rss("")) == .malformedXML)
        let declared = "<!DOCTYPE r [<!ENTITY a \"aaaa\">]>" + rss("<item><title>&a;</title></item>")
        #expect(try titles(declared) == ["aaaa"])
    }

    @Test("Namespace declarations are scoped to their element")
    func namespaceScopes() throws {
        let feed = """
            <rss version="2.0" xmlns:x="http://purl.org/dc/elements/1.1/"><channel><title>T</title>
            <item><title>One</title><x:date>2026-11-24T10:00:00Z</x:date></item>
            <item xmlns:x="urn:other"><title>Two</title><x:date>2026-11-24T11:00:00Z</x:date></item>
            <item><title>Three</title><x:date>2026-11-24T12:00:00Z</x:date></item>
            </channel></rss>
            """
        let items = try parser.parse(Data(feed.utf8), source: "t")
        #expect(items.map(\.title) == ["One", "Two", "Three"])
        #expect(items.map { $0.published != nil } == [true, false, true])
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>
            <entry><title>In</title><id xmlns="">not-atom</id><id>urn:1</id></entry></feed>
            """
        #expect(try parser.parse(Data(atom.utf8), source: "t").map(\.id) == ["urn:1"])
    }

    @Test("100,000 nested elements: a typed error, never a stack overflow")
    func deepNesting() {
        let depth = 100_000
        let deep =
            "<rss version=\"2.0\"><channel>" + String(repeating: "<a>", count: depth)
            + String(repeating: "</a>", count: depth) + "</channel></rss>"
        #expect(code(deep) == .tooDeep)
        let unlimited = FeedParser(configuration: .init(maximumBytes: 8 << 20, maximumDepth: .max))
        #expect(code(deep, parser: unlimited) == nil)
        #expect(code(String(deep.dropLast(60_000)), parser: unlimited) == .truncated)
    }
}
