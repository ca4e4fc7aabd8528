import Foundation
import ResilienceSources
import Testing

/// The forms feedparser's own corpus showed FeedParser losing: character references in hexadecimal, markup
/// declarations inside CDATA, entities declared in the document type declaration, an empty Atom `type`,
/// elements in unknown namespaces and Channel Definition Format files.
@Suite("Feed dialects")
struct FeedDialectTests {
    let parser = FeedParser()

    func document(_ text: String) throws -> FeedDocument {
        try parser.parseDocument(Data(text.utf8), source: "t")
    }

    func code(_ text: String) -> FeedError.Code? {
        do {
            _ = try document(text)
            return nil
        } catch let error as FeedError {
            return error.code
        } catch {
            return nil
        }
    }

    @Test("Hexadecimal character references decode in text, attributes and escaped HTML, in either case")
    func hexadecimalReferences() throws {
        let feed = try document(
            """
            <rss version="2.0"><channel><title>&#x41;&#X42;&#x20ac;</title>
            <item><title>&amp;#x3C;b&amp;#x3E;bold&amp;#x3C;/b&amp;#x3E; &#x1F600;</title>
            <link>https://e.example/?a=1&#x26;b=2</link></item></channel></rss>
            """)
        #expect(feed.title == "AB€")
        #expect(feed.items.first?.title == "bold 😀")
        #expect(feed.items.first?.link?.absoluteString == "https://e.example/?a=1&b=2")
    }

    @Test("A CDATA section containing <!DOCTYPE or <!ENTITY is content, in an RSS without a channel too")
    func markupDeclarationsInCDATA() throws {
        let feed = try document(
            """
            <rss version="2.0"><channel><item><title>T</title>
            <description><![CDATA[ <!DOCTYPE x [<!ENTITY e "v">]> words ]]></description></item></channel></rss>
            """)
        #expect(feed.items.map(\.title) == ["T"])
        #expect(feed.items.first?.summary.hasSuffix("words") == true)
        let channelless = try document(
            "<rss><item><title>U</title><description><![CDATA[ <!DOCTYPE ]]></description></item></rss>")
        #expect(channelless.items.map(\.title) == ["U"])
        #expect(code("<rss><title>no channel, no item</title></rss>") == .notAFeed)
    }

    @Test("Lenient like feed readers: -- inside a comment, a root end tag cut short at the end")
    func lenientEnds() throws {
        let feed = try document("<rss><channel><!-- a -- b --><title>testing &#160; entity</title></channel></rss")
        #expect(feed.title.hasPrefix("testing") && feed.title.hasSuffix("entity"))
        #expect(try document("<rss><channel><title>x</title></channel></rss \n").title == "x")
        #expect(code("<rss><channel><title>x</title></channel></rs") == .truncated)
        #expect(code("<rss><channel><title>x</title></channel></rss x") == .malformedXML)
        #expect(code("<rss><channel><title>x</title></channel") == .truncated)
    }

    @Test("A character set named with underscores or by Microsoft's names, and EBCDIC, are read")
    func characterSetNames() throws {
        let euro =
            Data(#"<?xml version="1.0" encoding="windows_1252"?><rss><channel><title>"#.utf8) + Data([0x80])
            + Data("</title></channel></rss>".utf8)
        #expect(try parser.parseDocument(euro, source: "t").title == "€")
        let ansi =
            Data(#"<?xml version="1.0" encoding="ms-ansi"?><rss><channel><title>"#.utf8) + Data([0x80])
            + Data("</title></channel></rss>".utf8)
        #expect(try parser.parseDocument(ansi, source: "t").title == "€")
        let text = #"<?xml version="1.0" encoding="cp037"?><rss><channel><title>EBCDIC</title></channel></rss>"#
        let ebcdic = try #require(text.data(using: String.Encoding(rawValue: 0x8000_0C02)))
        #expect(ebcdic.prefix(4) == Data([0x4C, 0x6F, 0xA7, 0x94]))
        #expect(try parser.parseDocument(ebcdic, source: "t").title == "EBCDIC")
    }

    @Test("RSS's own elements are read in any case, in RSS only: Atom and other namespaces keep theirs")
    func rssElementCase() throws {
        let feed = try document(
            """
            <rss xmlns:itunes="http://www.itunes.com/DTDs/Podcast-1.0.dtd" xmlns:dc="http://purl.org/dc/elements/1.1/">
            <Channel><TiTlE>Example title</TiTlE>
            <ITEM><Title>Post</Title><LINK>https://e.example/post</LINK><PubDate>Sat, 13 Dec 2003 18:30:02 GMT</PubDate>
            <Description>&lt;B&gt;bold&lt;/B&gt; text</Description></ITEM>
            <item><dc:Title>not dc:title</dc:Title><title>Second</title></item></Channel></rss>
            """)
        #expect(feed.title == "Example title")
        #expect(feed.items.map(\.title) == ["Post", "Second"])
        #expect(feed.items.first?.link?.absoluteString == "https://e.example/post")
        #expect(feed.items.first?.published == Date(timeIntervalSince1970: 1_071_340_202))
        #expect(feed.items.first?.summary == "bold text")
        let atom = try document(
            #"<feed xmlns="http://www.w3.org/2005/Atom"><Title>not read</Title><entry><title>E</title></entry></feed>"#)
        #expect(atom.title == "")
        #expect(atom.items.map(\.title) == ["E"])
    }

    @Test("Internal general entities declared in the DOCTYPE are expanded, nested ones too")
    func internalEntities() throws {
        let feed = try document(
            """
            <!DOCTYPE rss [
              <!-- a comment -->
              <!ENTITY site "example.com">
              <!ENTITY id "tag:&site;,">
              <!ENTITY amp2 "A &amp; B &#x263A;">
              <!ENTITY id "ignored: the first declaration binds">
              <!ENTITY % parameter "skipped">
              <!ELEMENT rss ANY>
            ]>
            <rss version="2.0"><channel><title>&amp2;</title>
            <item><title>Post</title><guid isPermaLink="false">&id;2006:/blog/</guid></item></channel></rss>
            """)
        #expect(feed.title == "A & B ☺")
        #expect(feed.items.first?.id == "tag:example.com,2006:/blog/")
    }

    @Test("Entity expansion is bounded: bombs, external entities and malformed declarations are refused")
    func entityBounds() {
        let bomb = """
            <!DOCTYPE r [<!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
            <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
            <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
            <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
            <rss><channel><title>&d;</title></channel></rss>
            """
        #expect(code(bomb) == .entityDeclaration)
        // Each reference stays under the per-entity cap, but together they pass the document's budget.
        let value = String(repeating: "x", count: 16_000)
        let references = String(repeating: "&e;", count: 70)
        let wide = "<!DOCTYPE r [<!ENTITY e \"\(value)\">]><rss><channel><title>\(references)</title></channel></rss>"
        #expect(code(wide) == .entityDeclaration)
        let external = #"<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><rss><channel/></rss>"#
        #expect(code(external) == .entityDeclaration)
        let lowercase = #"<!DOCTYPE r [<!entity x "y">]><rss><channel/></rss>"#
        #expect(code(lowercase) == .entityDeclaration)
        let parameterInValue = #"<!DOCTYPE r [<!ENTITY x "%p;">]><rss><channel/></rss>"#
        #expect(code(parameterInValue) == .entityDeclaration)
        let many = (0...256).map { "<!ENTITY e\($0) \"v\">" }.joined()
        #expect(code("<!DOCTYPE r [\(many)]><rss><channel/></rss>") == .entityDeclaration)
        #expect(code(#"<!DOCTYPE r [<!ENTITY x "y"#) == .truncated)
    }

    @Test("An Atom title with an empty type is text")
    func emptyAtomType() throws {
        let feed = try document(
            """
            <feed xmlns="http://www.w3.org/2005/Atom"><title type="">Feed</title>
            <entry><title type="">evil</title><id>urn:1</id></entry><entry><title type=" ">two</title></entry></feed>
            """)
        #expect(feed.title == "Feed")
        #expect(feed.items.map(\.title) == ["evil", "two"])
    }

    @Test("Elements in unknown namespaces, declared or not, do not stop the feed")
    func unknownNamespaces() throws {
        let feed = try document(
            """
            <rss version="2.0" xmlns:x="urn:unknown"><channel><title>T</title><x:meta a="1"><x:deep/></x:meta>
            <foo:bar>undeclared</foo:bar>
            <item><title>One</title><x:title>not the title</x:title><y:z xmlns:y="urn:y">t</y:z></item>
            </channel></rss>
            """)
        #expect(feed.title == "T")
        #expect(feed.items.map(\.title) == ["One"])
    }

    @Test("Channel Definition Format: CHANNEL, ITEM HREF and LASTMOD, TITLE and ABSTRACT")
    func channelDefinitionFormat() throws {
        let feed = try document(
            """
            <?xml version="1.0"?>
            <CHANNEL HREF="http://www.example.org/" BASE="http://www.example.org/">
              <TITLE>Example channel</TITLE>
              <ABSTRACT>About it</ABSTRACT>
              <ITEM HREF="http://www.example.org/1" LASTMOD="2004-04-06T23:05:43-05:00">
                <TITLE>First &lt;b&gt;item&lt;/b&gt;</TITLE>
                <ABSTRACT>Its abstract</ABSTRACT>
              </ITEM>
              <item href="http://www.example.org/2"><title>Second</title></item>
            </CHANNEL>
            """)
        #expect(feed.format == .cdf)
        #expect(feed.title == "Example channel")
        #expect(feed.items.map(\.title) == ["First item", "Second"])
        #expect(feed.items.first?.link?.absoluteString == "http://www.example.org/1")
        #expect(feed.items.first?.summary == "Its abstract")
        #expect(feed.items.first?.updated == Date(timeIntervalSince1970: 1_081_310_743))
        #expect(feed.items.last?.link?.absoluteString == "http://www.example.org/2")
    }
}
