import Foundation
import ResilienceSources
import Testing

@Suite("Feed robustness")
struct FeedRobustnessTests {
    let parser = FeedParser()

    func document(_ text: String, url: String? = nil, contentType: String? = nil) throws -> FeedDocument {
        try parser.parseDocument(
            Data(text.utf8), source: "t", contentType: contentType, documentURL: url.flatMap(URL.init(string:)))
    }

    func items(_ text: String, url: String? = nil) throws -> [FeedItem] { try document(text, url: url).items }

    @Test("Prefixed roots and elements are resolved by namespace URI")
    func namespaces() throws {
        let rss = """
            <r:rss xmlns:r="http://purl.org/rss/1.0/" version="2.0"><r:channel><r:title>P</r:title>
            <r:item><r:title>One</r:title><r:link>https://e.example/1</r:link></r:item></r:channel></r:rss>
            """
        #expect(try items(rss).map(\.title) == ["One"])
        let atom = """
            <atom:feed xmlns:atom="http://www.w3.org/2005/Atom"><atom:title>A</atom:title>
            <atom:entry><atom:title>Two</atom:title><atom:id>urn:2</atom:id>
            <atom:link href="https://e.example/2"/></atom:entry></atom:feed>
            """
        let parsed = try items(atom)
        #expect(parsed.map(\.title) == ["Two"])
        #expect(parsed.first?.link?.absoluteString == "https://e.example/2")
        // A `feed` in a namespace nobody defined is read as Atom in that namespace, as feedparser reads it.
        let other = """
            <feed xmlns="http://example.com/not-atom"><entry><title>x</title></entry></feed>
            """
        #expect(try items(other).map(\.title) == ["x"])
        #expect(throws: FeedError.self) { try items(#"<other xmlns="http://example.com/not-atom"/>"#) }
    }

    @Test("A huge element name quoted in a feed error is cut: the detail stays short")
    func feedErrorDetailIsBounded() {
        let name = String(repeating: "n", count: 1_000_000)
        for body in ["<\(name)/>", "<rss><channel></\(name)></channel></rss>", "<rss><\(name)>"] {
            #expect {
                try items(body)
            } throws: { error in
                let detail = (error as? FeedError)?.detail ?? ""
                return !detail.isEmpty && detail.unicodeScalars.count <= 200 && detail.hasSuffix("…")
                    && "\(error)".unicodeScalars.count <= 260
            }
        }
    }

    @Test("An RSS link that stays relative is dropped with an unresolvable-link warning, as an Atom link is")
    func unresolvableRSSLink() throws {
        let rss = """
            <rss version="2.0"><channel><item><title>One</title><guid>1</guid><link>/jobs/1</link></item>
            </channel></rss>
            """
        let dropped = try items(rss)
        #expect(dropped.first?.link == nil)
        #expect(dropped.first?.warnings == [FeedWarning(.unresolvableLink, detail: "/jobs/1")])
        let resolved = try items(rss, url: "https://e.example/feed.xml")
        #expect(resolved.first?.link?.absoluteString == "https://e.example/jobs/1")
        #expect(resolved.first?.warnings.isEmpty == true)
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><entry><id>1</id><link href="/jobs/1"/></entry></feed>
            """
        #expect(try items(atom).first?.warnings == [FeedWarning(.unresolvableLink, detail: "/jobs/1")])
    }

    @Test("Every HTML5 named entity reads; an unknown one loses only its own text, with a warning")
    func entities() throws {
        let rss = """
            <rss version="2.0"><channel><item><title>&alpha; &rArr; &CounterClockwiseContourIntegral; &nbsp;x</title>
            <guid>1</guid></item><item><title>Keep &bogus; this</title><guid>2</guid></item>
            <item><title>Bad &#1; ref</title><guid>3</guid></item><item><title>AT&T rocks</title><guid>4</guid></item>
            </channel></rss>
            """
        let document = try document(rss)
        #expect(document.items.map(\.title) == ["α ⇒ ∳ x", "Keep this", "Bad ref", "AT&T rocks"])
        #expect(document.items[0].warnings.isEmpty)
        #expect(document.items[1].warnings == [FeedWarning(.unknownEntity, detail: "&bogus;")])
        #expect(document.items[2].warnings.first?.code == .unknownEntity)
        #expect(document.warnings.contains { $0.code == .bareAmpersand })
    }

    @Test("Entity expansion bombs stay refused in every encoding")
    func entityDeclarations() {
        let utf16 = Data([0xFE, 0xFF]) + FeedFixtures.billionLaughs.data(using: .utf16BigEndian)!
        #expect { try parser.parse(utf16, source: "t") } throws: { ($0 as? FeedError)?.code == .entityDeclaration }
    }

    @Test("Atom enclosure links are de-duplicated by URL, as RSS enclosures and media:content are: the first wins")
    func atomEnclosuresAreDeduplicated() throws {
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/"><title>A</title>
            <entry><title>Twice</title><link rel="enclosure" type="audio/mpeg" href="https://e.example/a.mp3"/>
            <link rel="enclosure" type="audio/ogg" href="https://e.example/a.mp3"/></entry>
            <entry><title>Media first</title><media:content url="https://e.example/v.mp4" type="video/mp4"/>
            <link rel="enclosure" type="video/webm" href="https://e.example/v.mp4"/></entry>
            <entry><title>Link first</title><link rel="enclosure" type="video/mp4" href="https://e.example/v.mp4"/>
            <media:content url="https://e.example/v.mp4" type="video/webm"/></entry></feed>
            """
        let parsed = try items(atom, url: "https://e.example/feed")
        #expect(parsed.map(\.enclosures.count) == [1, 1, 1])
        #expect(parsed.map { $0.enclosures.first?.type } == ["audio/mpeg", "video/mp4", "video/mp4"])
    }

    @Test("Atom links: alternate is the link; enclosure and related apart; id never a wrong link")
    func atomLinks() throws {
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>A</title>
            <entry><title>E</title><link rel="license" href="https://l.example/"/><link rel="self" href="/self"/>
            <link rel="enclosure" type="audio/mpeg" length="12" href="https://e.example/a.mp3"/>
            <link rel="related" href="https://r.example/"/><link rel="via" href="https://v.example/"/>
            <link rel="alternate" type="application/pdf" href="https://e.example/e.pdf"/>
            <link href="https://e.example/e.html"/></entry>
            <entry><title>No link</title><link rel="license" href="https://l.example/"/></entry></feed>
            """
        let parsed = try items(atom, url: "https://e.example/feed")
        #expect(parsed[0].link?.absoluteString == "https://e.example/e.html")
        #expect(
            parsed[0].enclosures == [
                FeedEnclosure(url: URL(string: "https://e.example/a.mp3")!, type: "audio/mpeg", length: 12)
            ])
        #expect(parsed[0].related == [URL(string: "https://r.example/")!])
        #expect(parsed[1].link == nil)
        #expect(parsed[1].id == "No link")
    }

    @Test("RSS permalink guid, RDF rdf:about, xml:base and the document URL")
    func linksAndIDs() throws {
        let rss = """
            <rss version="2.0"><channel><item><title>P</title><guid>https://e.example/p</guid></item>
            <item><title>N</title><guid isPermaLink="false">https://e.example/n</guid></item>
            <item><title>R</title><link>/jobs/3</link></item></channel></rss>
            """
        let parsed = try items(rss, url: "https://e.example/feed.xml")
        #expect(parsed[0].link?.absoluteString == "https://e.example/p")
        #expect(parsed[1].link == nil)
        #expect(parsed[1].id == "https://e.example/n")
        #expect(parsed[2].link?.absoluteString == "https://e.example/jobs/3")
        let rdf = """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
            <channel rdf:about="https://e.example/"><title>R</title></channel>
            <item rdf:about="https://e.example/i1"><title>I</title><link>https://e.example/i1</link></item></rdf:RDF>
            """
        #expect(try items(rdf).first?.id == "https://e.example/i1")
        let based = """
            <feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://b.example/blog/"><title>B</title>
            <entry xml:base="posts/"><title>x</title><id>urn:x</id><link href="one.html"/></entry></feed>
            """
        #expect(try items(based).first?.link?.absoluteString == "https://b.example/blog/posts/one.html")
    }

    @Test("Titles are plain text without script; summaries as sanitized HTML and as text")
    func textFields() throws {
        let rss = """
            <rss version="2.0"><channel><item><title>safe&lt;script&gt;location.href='x'&lt;/script&gt; &lt;b&gt;bold&lt;/b&gt;</title>
            <guid>g</guid><description>&lt;p onclick="x()"&gt;Hi &lt;a href="javascript:alert(1)"&gt;there&lt;/a&gt;&lt;style&gt;p{}&lt;/style&gt;&lt;/p&gt;</description></item>
            </channel></rss>
            """
        let item = try #require(try items(rss).first)
        #expect(item.title == "safe bold")
        #expect(item.summary == "Hi there")
        #expect(item.summaryHTML == "<p>Hi <a>there</a></p>")
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><entry><id>1</id>
            <title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">X <b>y</b></div></title>
            <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>1 &lt; 2</p></div></content></entry>
            <entry><id>2</id><title type="text">a &lt; b &amp; c</title><summary type="html">&lt;i&gt;it&lt;/i&gt;</summary></entry>
            <entry><id>3</id><title>t</title><content type="text/plain;charset=utf-8">plain</content></entry></feed>
            """
        let entries = try items(atom)
        #expect(entries[0].title == "X y")
        #expect(entries[0].summary == "1 < 2")
        #expect(entries[0].summaryHTML == "<div><p>1 &lt; 2</p></div>" || entries[0].summaryHTML == "<p>1 &lt; 2</p>")
        #expect(entries[1].title == "a < b & c")
        #expect(entries[1].summaryHTML == "<i>it</i>")
    }

    @Test("Summaries and titles from Dublin Core, iTunes, Media RSS and XHTML bodies")
    func extensionFields() throws {
        let rss = """
            <rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
             xmlns:media="http://search.yahoo.com/mrss/" xmlns:xhtml="http://www.w3.org/1999/xhtml"><channel><title>C</title>
            <item><dc:title>DC title</dc:title><dc:description>DC desc</dc:description><guid>1</guid></item>
            <item><media:group><media:title>Media title</media:title><media:description>Media desc</media:description>
            <media:content url="https://m.example/v.mp4" type="video/mp4"/></media:group><guid>2</guid></item>
            <item><title>I</title><itunes:summary>Pod summary</itunes:summary><guid>3</guid></item>
            <item><title>X</title><xhtml:body><xhtml:p>Body text</xhtml:p></xhtml:body><guid>4</guid></item>
            </channel></rss>
            """
        let parsed = try items(rss)
        #expect(parsed.map(\.title) == ["DC title", "Media title", "I", "X"])
        #expect(parsed.map(\.summary) == ["DC desc", "Media desc", "Pod summary", "Body text"])
        #expect(parsed[1].enclosures.first?.url.absoluteString == "https://m.example/v.mp4")
    }

    @Test("Atom 0.3: issued/modified dates, escaped and base64 content")
    func atom03() throws {
        let atom = """
            <feed version="0.3" xmlns="http://purl.org/atom/ns#"><title>Old</title>
            <entry><title mode="escaped" type="text/html">&lt;b&gt;Old&lt;/b&gt; entry</title>
            <link rel="alternate" type="text/html" href="https://o.example/1"/><id>tag:o,2003:1</id>
            <issued>2003-12-13T08:29:29-04:00</issued><modified>2003-12-13T18:30:02Z</modified>
            <content type="text/html" mode="base64">PHA+SGVsbG8gd29ybGQ8L3A+</content></entry></feed>
            """
        let document = try document(atom)
        #expect(document.format == .atom03)
        let item = try #require(document.items.first)
        #expect(item.title == "Old entry")
        #expect(item.link?.absoluteString == "https://o.example/1")
        #expect(item.published == FeedDateParser.parse("2003-12-13T12:29:29Z"))
        #expect(item.updated == FeedDateParser.parse("2003-12-13T18:30:02Z"))
        #expect(item.summary == "Hello world")
    }

    @Test("dcterms dates and polling hints")
    func dctermsAndPolling() throws {
        let rss = """
            <rss version="2.0" xmlns:dcterms="http://purl.org/dc/terms/"><channel><title>C</title><ttl>90</ttl>
            <item><title>x</title><guid>1</guid><dcterms:issued>2003-12-13T18:30:02Z</dcterms:issued></item>
            <item><title>y</title><guid>2</guid><dcterms:modified>2003-12-14</dcterms:modified></item></channel></rss>
            """
        let document = try document(rss)
        #expect(document.pollingInterval == .seconds(5_400))
        #expect(document.items[0].published == FeedDateParser.parse("2003-12-13T18:30:02Z"))
        #expect(document.items[1].updated == FeedDateParser.parse("2003-12-14"))
        let rdf = """
            <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
             xmlns:sy="http://purl.org/rss/1.0/modules/syndication/"><channel><title>R</title>
            <sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>4</sy:updateFrequency></channel></rdf:RDF>
            """
        #expect(try self.document(rdf).pollingInterval == .seconds(900))
    }

    @Test("Character sets: BOM, Content-Type over the declaration, UTF-16/32, legacy code pages")
    func charsets() throws {
        let template =
            #"<?xml version="1.0" encoding="ENC"?><rss version="2.0"><channel><item><title>TITLE</title><guid>g</guid></item></channel></rss>"#
        func feed(_ encodingLabel: String, _ title: String, _ encoding: String.Encoding) -> Data {
            template.replacingOccurrences(of: "ENC", with: encodingLabel).replacingOccurrences(of: "TITLE", with: title)
                .data(using: encoding)!
        }
        let cases: [(String, String, String.Encoding)] = [
            ("UTF-16", "Grüße", .utf16), ("UTF-32BE", "Grüße", .utf32BigEndian), ("ISO-8859-1", "Grüße", .isoLatin1),
            ("windows-1251", "Привет", .windowsCP1251), ("macintosh", "Café", String.Encoding(rawValue: 0x8000_0000)),
            ("KOI8-R", "Привет", String.Encoding(rawValue: 0x8000_0A02)),
            ("IBM437", "Café", String.Encoding(rawValue: 0x8000_0400)),
            ("IBM866", "Привет", String.Encoding(rawValue: 0x8000_041B)),
            ("x-mac-greek", "Αθήνα", String.Encoding(rawValue: 0x8000_0006)),
        ]
        for (label, title, encoding) in cases {
            let parsed = try parser.parseDocument(feed(label, title, encoding), source: "t")
            #expect(parsed.items.first?.title == title, "\(label)")
        }
        let latin = feed("UTF-8", "Grüße", .isoLatin1)
        let byHeader = try parser.parseDocument(
            latin, source: "t", contentType: "application/rss+xml; charset=iso-8859-1")
        #expect(byHeader.items.first?.title == "Grüße")
        let guessed = try parser.parseDocument(latin, source: "t")
        #expect(guessed.items.first?.title == "Grüße")
        #expect(guessed.warnings.contains { $0.code == .invalidEncoding })
        #expect {
            try parser.parseDocument(feed("x-klingon", "a", .utf8), source: "t")
        } throws: { error in
            guard let error = error as? FeedError else { return false }
            return error.code == .unsupportedEncoding && error.detail.contains("x-klingon")
        }
    }

    @Test("Unreadable feeds say why")
    func errorCodes() {
        #expect { try items("<rss version=\"2.0\"><channel><item><title>cut") } throws: {
            ($0 as? FeedError)?.code == .truncated
        }
        #expect { try items("<rss version=\"2.0\"><channel></item></channel></rss>") } throws: {
            ($0 as? FeedError)?.code == .unbalancedElements
        }
        #expect { try items("<html><body>no feed here at all</body></html>") } throws: {
            ($0 as? FeedError)?.code == .notAFeed
        }
    }
}

@Suite("Feed dates, real-world forms")
struct FeedDateFormsTests {
    static let instant = Date(timeIntervalSince1970: 1_071_340_202)  // 2003-12-13T18:30:02Z

    @Test(
        "ISO 8601 forms",
        arguments: [
            "2003-12-13T18:30:02Z", "2003-12-13T19:30:02+01:00", "2003-12-13T19:30:02 +01:00", "2003-12-13T19:30:02+01",
            "2003-12-13T13:30:02-0500", "20031213T183002Z", "2003-12-13 18:30:02 GMT", "2003-12-13T19:30:02 CET",
        ])
    func iso(_ text: String) { #expect(FeedDateParser.interpret(text) == .date(Self.instant), "\(text)") }

    @Test(
        "RFC 822 and textual forms",
        arguments: [
            "Sat, 13 Dec 2003 18:30:02 GMT", "Sat, 13 Dec 2003 19:30:02 CET", "Sat, 13 Dec 2003 20:30:02 CEST",
            "Sat, 13 Dec 2003 19:30:02 BST", "Sun, 14 Dec 2003 03:30:02 JST", "Sun, 14 Dec 2003 04:30:02 AEST",
            "Sat, 13 Dec 2003 19:30:02 MET", "Sat, 13 Dec 2003 20:30:02 MEST", "13 Dec, 2003 18:30:02 +0000",
            "Dec 13, 2003 18:30:02 GMT", "Sat Dec 13 18:30:02 2003 GMT", "Sat, 13 Dec 2003 06:30:02 PM GMT",
            "December 13, 2003 6:30:02 pm +0000", "13-Dec-2003 18:30:02 +0000", "Sat, 13 Dec 03 18:30:02 Z",
            "Sat, 13 Dec 2003 18:30:02 +0000 (GMT)",
        ])
    func textual(_ text: String) { #expect(FeedDateParser.interpret(text) == .date(Self.instant), "\(text)") }

    @Test("Reduced precision and date-only forms are midnight UTC")
    func reduced() {
        #expect(FeedDateParser.parse("2003-12") == Date(timeIntervalSince1970: 1_070_236_800))
        #expect(FeedDateParser.parse("2003") == Date(timeIntervalSince1970: 1_041_379_200))
        #expect(FeedDateParser.parse("Sat, 13 Dec 2003") == Date(timeIntervalSince1970: 1_071_273_600))
        #expect(FeedDateParser.parse("13/12/2003") == Date(timeIntervalSince1970: 1_071_273_600))
    }

    @Test("A time without a zone is read as UTC and says so")
    func zoneless() {
        #expect(FeedDateParser.interpret("2003-12-13T18:30:02") == .zoneAssumed(Self.instant))
        #expect(FeedDateParser.interpret("Sat Dec 13 18:30:02 2003") == .zoneAssumed(Self.instant))
    }

    @Test("Ambiguous dates are nil, never a wrong instant")
    func ambiguous() {
        for text in ["01/02/2003", "Sat, 13 Dec 2003 18:30:02 IST", "Sat, 13 Dec 2003 18:30:02 XYZT"] {
            guard case .ambiguous = FeedDateParser.interpret(text) else {
                Issue.record("\(text) should be ambiguous")
                continue
            }
        }
        #expect(FeedDateParser.parse("13:00 PM 13 Dec 2003") == nil)
    }
}

@Suite("Feed parser, fuzz findings")
struct FeedFuzzFindingsTests {
    @Test("Processing instructions without data never reach Foundation's XMLParser (it crashes on them)")
    func emptyProcessingInstruction() throws {
        let parser = FeedParser()
        let feed =
            #"<?xm?><rss version="2.0"><channel><?pi?><item><title>ok</title><guid>1</guid></item></channel></rss>"#
        #expect(try parser.parse(Data(feed.utf8), source: "t").map(\.title) == ["ok"])
        let crashInput = Data([
            0x3C, 0x3F, 0x78, 0x6D, 0x3F, 0x3E, 0x3C, 0x72, 0x73, 0x73, 0x20, 0x76, 0x65, 0x72, 0x73, 0x69, 0x6F, 0x6E,
            0x3D, 0x22, 0x32, 0x2E, 0x30, 0x22, 0x3E, 0x3C, 0x9E, 0x63, 0x2F, 0x63, 0x68, 0x61, 0x6E, 0x6E, 0x65, 0x00,
            0x00, 0x00, 0x72,
        ])
        #expect(throws: FeedError.self) { try parser.parse(crashInput, source: "t") }
        let declared = #"<?xml version="1.0"?><?xml-stylesheet href="s.xsl"?><rss version="2.0"><channel/></rss>"#
        #expect(try parser.parse(Data(declared.utf8), source: "t").isEmpty)
    }
}

@Suite("Feed titles, escaped markup")
struct FeedEscapedMarkupTests {
    @Test("Double- and triple-escaped script in a title never survives as text")
    func multiplyEscaped() throws {
        let feed = """
            <rss version="2.0"><channel><item><guid>1</guid><title>Safe &amp;lt;script&amp;gt;location.href='x'&amp;lt;/script&amp;gt;title</title></item>
            <item><guid>2</guid><title><![CDATA[Also &amp;lt;SCRIPT&amp;gt;alert(1)&amp;lt;/SCRIPT&amp;gt;safe]]></title></item>
            <item><guid>3</guid><title>a &amp;lt; b and AT&amp;amp;T</title></item></channel></rss>
            """
        let titles = try FeedParser().parse(Data(feed.utf8), source: "t").map(\.title)
        #expect(titles[0] == "Safe title")
        #expect(titles[2] == "a < b and AT&T")
        // Inside CDATA the escapes are literal text: one decoding leaves `&lt;SCRIPT&gt;`, which is text, not
        // markup; it never becomes a tag.
        #expect(!titles[1].lowercased().contains("<script"))
    }
}

@Suite("Feed parser, hostile input")
struct FeedHostileInputTests {
    let parser = FeedParser()

    func items(_ inner: String) throws -> [FeedItem] {
        try parser.parse(
            Data("<rss version=\"2.0\"><channel><title>T</title>\(inner)</channel></rss>".utf8), source: "t")
    }

    /// True when `text` holds a character no feed text should carry: NUL, another C0 control than tab, line
    /// feed, form feed and carriage return, DEL or a C1 control.
    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            let value = scalar.value
            return (value < 0x20 && ![0x09, 0x0A, 0x0C, 0x0D].contains(value)) || (0x7F...0x9F).contains(value)
        }
    }

    @Test("Numeric references in escaped HTML never put NUL or a control character in a title or summary")
    func escapedNumericReferences() throws {
        let references = "a&#x0;b&#1;c&#x1B;d&#xD800;e&#x110000;f&#99999999999;g&#150;h&#x7F;i&#x41;&#9;j"
        let parsed = try items(
            """
            <item><guid>1</guid><title><![CDATA[\(references)]]></title>
            <description><![CDATA[<p>\(references)</p>]]></description></item>
            <item><guid>2</guid><title>x&amp;#x0;y&amp;#x1b;z</title></item>
            """)
        let expected = "a\u{FFFD}b\u{FFFD}c\u{FFFD}d\u{FFFD}e\u{FFFD}f\u{FFFD}g\u{2013}h\u{FFFD}iA j"
        #expect(parsed[0].title == expected)
        #expect(parsed[0].summary == expected)
        #expect(!Self.hasControl(parsed[0].summaryHTML))
        #expect(parsed[1].title == "x\u{FFFD}y\u{FFFD}z")
    }

    @Test("A body that is not UTF-8 is read as Windows-1252 even with the bytes Windows-1252 leaves undefined")
    func windows1252Fallback() throws {
        var body = Data("<rss version=\"2.0\"><channel><item><guid>1</guid><title>a".utf8)
        body += Data([0x81, 0x62, 0x93, 0x63, 0x94, 0x8D, 0x8F, 0x90, 0x9D, 0xE9])
        body += Data("</title></item></channel></rss>".utf8)
        for contentType in [nil, "application/rss+xml; charset=utf-8"] {
            let document = try parser.parseDocument(body, source: "t", contentType: contentType)
            #expect(
                document.items.map(\.title) == ["a\u{FFFD}b\u{201C}c\u{201D}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{E9}"])
            #expect(document.encoding == "windows-1252")
            #expect(document.warnings.contains { $0.code == .invalidEncoding })
        }
    }

    @Test("Items with no guid, id, link or title still get distinct, stable ids (RSS allows description-only items)")
    func idsWithoutIdentifiers() throws {
        let feed = """
            <item><description>First &lt;b&gt;opening&lt;/b&gt;</description></item>
            <item><description>Second opening</description></item>
            <item><description>Second opening</description><enclosure url="https://e.example/a.mp3"/></item>
            <item><description>Second opening</description><pubDate>Sat, 13 Dec 2003 18:30:02 GMT</pubDate></item>
            <item><description>First &lt;b&gt;opening&lt;/b&gt;</description></item>
            """
        let ids = try items(feed).map(\.id)
        #expect(ids.allSatisfy { !$0.isEmpty })
        #expect(Set(ids.prefix(4)).count == 4)
        #expect(ids[4] == ids[0])
        #expect(try items(feed).map(\.id) == ids)
    }

    @Test("Tens of thousands of enclosures in one item are de-duplicated in linear time")
    func manyEnclosures() throws {
        let count = 30_000
        let enclosures = (0..<count).map { "<enclosure url=\"https://e.example/\($0)\"/>" }.joined()
        let media = (0..<count).map { "<media:content url=\"https://e.example/\($0 % 2 == 0 ? $0 : -1)\"/>" }.joined()
        let started = ContinuousClock.now
        let parsed = try items(
            "<item xmlns:media=\"http://search.yahoo.com/mrss/\"><title>t</title>\(enclosures)\(media)</item>")
        let elapsed = ContinuousClock.now - started
        // The media contents repeat the even enclosures and one new URL, many times over.
        #expect(parsed[0].enclosures.count == count + 1)
        #expect(parsed[0].enclosures.first?.url.absoluteString == "https://e.example/0")
        #expect(parsed[0].enclosures.last?.url.absoluteString == "https://e.example/-1")
        #expect(elapsed < .seconds(10), "parsing took \(elapsed)")
    }

    @Test("Thousands of distinct unknown entities per item cost linear time; each is warned about once")
    func manyUnknownEntities() throws {
        /// The feed of 20 items with `count` distinct unknown entities each (and the first again), and the
        /// fastest of two parses of it: the machine is shared, so the time is read as a ratio between sizes.
        func parse(entities count: Int) throws -> (items: [FeedItem], time: Duration) {
            let unknown = (0..<count).map { "&u\($0);" }.joined()
            let feed = String(repeating: "<item><guid>g</guid><title>\(unknown)&u0;</title></item>", count: 20)
            var fastest = Duration.seconds(Int64.max)
            var parsed: [FeedItem] = []
            for _ in 0..<2 {
                let started = ContinuousClock.now
                parsed = try items(feed)
                fastest = min(fastest, ContinuousClock.now - started)
            }
            return (parsed, fastest)
        }
        let small = try parse(entities: 1_000)
        let large = try parse(entities: 4_000)
        #expect(large.items.count == 20)
        let warnings = large.items[0].warnings.filter { $0.code == .unknownEntity }
        #expect(Set(warnings).count == warnings.count)
        #expect(warnings.first == FeedWarning(.unknownEntity, detail: "&u0;"))
        #expect(warnings.count > 1_000)
        // Four times the entities: four times the time when linear, sixteen when quadratic.
        let ratio = large.time / small.time
        #expect(ratio < 8, "1,000 entities an item: \(small.time); 4,000: \(large.time)")
    }

    @Test("Limits configured as Int.max or below zero never crash a parse")
    func extremeLimits() throws {
        let feed = Data(
            """
            <rss version="2.0"><channel><item><guid>1</guid><title>a &amp; <b>b</b></title>
            <description>&lt;p&gt;x&lt;/p&gt;</description></item></channel></rss>
            """.utf8)
        let unlimited = FeedParser.Configuration(
            maximumBytes: .max, minimumBytes: .max, maximumItems: .max, maximumDepth: .max, maximumFieldLength: .max,
            maximumSummaryLength: .max)
        #expect { try FeedParser(configuration: unlimited).parse(feed, source: "t") } throws: {
            ($0 as? FeedError)?.code == .empty
        }
        var open = unlimited
        open.minimumBytes = 0
        let parsed = try FeedParser(configuration: open).parse(feed, source: "t")
        #expect(parsed.map(\.title) == ["a & b"])
        #expect(parsed.map(\.summary) == ["x"])
        let negative = FeedParser.Configuration(
            maximumBytes: 1 << 20, minimumBytes: -1, maximumFieldLength: -1, maximumSummaryLength: -1)
        let cut = try FeedParser(configuration: negative).parse(feed, source: "t")
        #expect(cut.map(\.title) == [""])
        #expect(cut.map(\.summary) == [""])
        #expect { try FeedParser(configuration: .init(maximumBytes: -1)).parse(feed, source: "t") } throws: {
            ($0 as? FeedError)?.code == .tooLarge
        }
    }

    @Test("A UTF-8 body whose declaration says UTF-16 (as .NET writes into a string) is read as UTF-8")
    func singleByteBodyDeclaringUTF16() throws {
        for label in ["utf-16", "UTF-16LE", "utf-32"] {
            let body = Data(
                """
                <?xml version="1.0" encoding="\(label)"?><rss version="2.0"><channel><item><guid>1</guid>
                <title>Grüße</title></item></channel></rss>
                """.utf8)
            let document = try parser.parseDocument(body, source: "t")
            #expect(document.items.map(\.title) == ["Grüße"], "\(label)")
            #expect(document.encoding == "UTF-8", "\(label)")
        }
    }

    @Test("A numeric reference with leading zeros reads; one with too many digits is an unknown entity, not text")
    func longNumericReferences() throws {
        let atom = """
            <feed xmlns="http://www.w3.org/2005/Atom"><title>T</title>
            <entry><id>1</id><title>a&#00000000000065;b&#x00000000000042;c</title></entry>
            <entry><id>2</id><title>x&#99999999999999999999;y</title></entry></feed>
            """
        let document = try parser.parseDocument(Data(atom.utf8), source: "t")
        #expect(document.items.map(\.title) == ["aAbBc", "xy"])
        #expect(document.items[0].warnings.isEmpty)
        #expect(document.items[1].warnings.map(\.code) == [.unknownEntity])
        #expect(!document.warnings.contains { $0.code == .bareAmpersand })
    }
}
