import Foundation
import ResilienceSources
import ResilienceTesting
import Testing

@Suite("Feed parser")
struct FeedParserTests {
    let parser = FeedParser()

    func parse(_ text: String) throws -> [FeedItem] { try parser.parse(Data(text.utf8), source: "test-feed") }

    func expectFeedError(_ code: FeedError.Code, _ text: String) {
        #expect {
            try parse(text)
        } throws: { error in
            guard let feedError = error as? FeedError else { return false }
            return feedError.code == code && feedError.classification.category == .invalidResponse
                && feedError.classification.code == .malformedFeed
        }
    }

    @Test("A Greenhouse-style RSS 2.0 feed parses with dates, links, ids and cleaned summaries")
    func greenhouseRSS() throws {
        let items = try parse(FeedFixtures.greenhouseRSS)
        #expect(items.count == 3)
        #expect(items[0].title == "Senior iOS Engineer (Swift)")
        #expect(items[0].id == "acme-4012345")
        #expect(items[0].link?.absoluteString == "https://boards.example.com/acme/jobs/4012345")
        #expect(items[0].summary == "Build our iOS app in Swift. Remote")
        #expect(items[0].published == Date(timeIntervalSince1970: 1_772_443_800))
        #expect(items[0].source == "test-feed")
        #expect(items[1].title == "Backend Engineer — Platform")
        #expect(items[1].summary == "Work on our APIs in Swift & Go. Café included.")
        #expect(items[1].published == FeedDateParser.parse("2026-03-03T19:05:00Z"))
        #expect(items[2].id == "https://boards.example.com/acme/jobs/4012347")
        #expect(items[2].published == FeedDateParser.parse("2026-03-04T07:00:00Z"))
    }

    @Test("A Lever-style Atom 1.0 feed parses alternate links, fractional dates and content fallbacks")
    func leverAtom() throws {
        let items = try parse(FeedFixtures.leverAtom)
        #expect(items.count == 2)
        #expect(items[0].link?.absoluteString == "https://jobs.example.org/globex/7a1")
        #expect(items[0].id == "urn:lever:globex:7a1")
        #expect(items[0].summary == "Lead the Swift server team.")
        #expect(items[0].published == Date(timeIntervalSince1970: 1_772_702_130.25))
        #expect(items[1].published == FeedDateParser.parse("2026-03-01T20:00:00Z"))
        #expect(items[1].summary == "SQL & dashboards.")
    }

    @Test("A real feed with no items is an empty list, not an error")
    func emptyChannel() throws {
        #expect(try parse(FeedFixtures.emptyChannel).isEmpty)
    }

    @Test("Billion laughs is refused before parsing")
    func billionLaughs() { expectFeedError(.entityDeclaration, FeedFixtures.billionLaughs) }

    @Test("External entities are refused")
    func externalEntity() { expectFeedError(.entityDeclaration, FeedFixtures.externalEntity) }

    @Test("An external DTD is never fetched; the feed still parses")
    func externalDTD() throws {
        let items = try parse(FeedFixtures.externalDTD)
        #expect(items.map(\.title) == ["Harmless & fine"])
    }

    @Test("Truncated feeds are errors, even when the parser claims success")
    func truncated() {
        #expect(throws: FeedError.self) { try parse(FeedFixtures.truncated) }
        #expect(throws: FeedError.self) { try parse(FeedFixtures.truncatedAtTag) }
    }

    @Test("Empty, whitespace and three-byte bodies are errors")
    func emptyAndTiny() {
        expectFeedError(.empty, "")
        expectFeedError(.empty, "   \n\t  ")
        expectFeedError(.empty, "<a>")
    }

    @Test("Oversized bodies are refused before parsing")
    func oversized() {
        let small = FeedParser(configuration: FeedParser.Configuration(maximumBytes: 100))
        #expect {
            try small.parse(Data(FeedFixtures.greenhouseRSS.utf8), source: "x")
        } throws: { ($0 as? FeedError)?.code == .tooLarge }
    }

    @Test("Too many items and too deep nesting are bounded")
    func bounds() {
        let strict = FeedParser(configuration: FeedParser.Configuration(maximumItems: 2, maximumDepth: 4))
        #expect {
            try strict.parse(Data(FeedFixtures.greenhouseRSS.utf8), source: "x")
        } throws: { ($0 as? FeedError)?.code == .tooManyItems }
        let deep = "<rss><channel><item><title><b><i>x</i></b></title></item></channel></rss>"
        #expect {
            try strict.parse(Data(deep.utf8), source: "x")
        } throws: { ($0 as? FeedError)?.code == .tooDeep }
    }

    @Test("HTML pages and other roots are not feeds")
    func notAFeed() {
        expectFeedError(.notAFeed, FeedFixtures.notAFeed)
        expectFeedError(.notAFeed, #"<?xml version="1.0"?><rss version="2.0"></rss>"#)
        #expect(throws: FeedError.self) { try parse(FeedFixtures.htmlErrorPage) }
    }

    @Test("Garbage is malformed, never silently empty; an unknown entity costs only its own text")
    func garbage() throws {
        let items = try parse(FeedFixtures.unknownEntity)
        #expect(items.count == 1)
        #expect(items.first?.warnings.contains { $0.code == .unknownEntity } == true)
        #expect(throws: FeedError.self) { try parse("this is definitely not xml at all, just text") }
        expectFeedError(.unbalancedElements, "<rss><channel><item></channel></item></rss>")
        let utf16 = Data([0xFF, 0xFE]) + FeedFixtures.emptyChannel.data(using: .utf16LittleEndian)!
        #expect(try parser.parse(utf16, source: "x").isEmpty)
    }

    @Test("Inline markup inside a field keeps its text")
    func inlineMarkup() throws {
        let feed = """
            <rss version="2.0"><channel><item><title>Dev</title><guid>g1</guid>
            <description><p>Hi <b>there</b>, <i>Swift</i> fans</p></description></item></channel></rss>
            """
        let items = try parse(feed)
        #expect(items.first?.summary == "Hi there, Swift fans")
        #expect(items.first?.title == "Dev")
    }

    @Test("Huge fields are cut, not kept whole")
    func hugeFields() throws {
        let title = String(repeating: "A", count: 100_000)
        let feed = "<rss version=\"2.0\"><channel><item><title>\(title)</title><guid>g</guid></item></channel></rss>"
        let items = try parse(feed)
        #expect(items.first?.title.count == FeedParser.Configuration.standard.maximumFieldLength)
    }
}

@Suite("Feed dates")
struct FeedDateParserTests {
    @Test("RFC 3339 variants")
    func rfc3339() {
        let base = Date(timeIntervalSince1970: 1_772_443_800)  // 2026-03-02T09:30:00Z
        #expect(FeedDateParser.parse("2026-03-02T09:30:00Z") == base)
        #expect(FeedDateParser.parse("2026-03-02t09:30:00z") == base)
        #expect(FeedDateParser.parse("2026-03-02 09:30:00Z") == base)
        #expect(FeedDateParser.parse("2026-03-02T11:30:00+02:00") == base)
        #expect(FeedDateParser.parse("2026-03-02T04:00:00-0530") == base)
        #expect(FeedDateParser.parse("2026-03-02T09:30:00.5Z") == base.addingTimeInterval(0.5))
        #expect(FeedDateParser.parse("2026-03-02") == Date(timeIntervalSince1970: 1_772_409_600))
        #expect(FeedDateParser.parse("1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
        #expect(FeedDateParser.parse("2000-02-29T00:00:00Z") == Date(timeIntervalSince1970: 951_782_400))
    }

    @Test("RFC 822 variants")
    func rfc822() {
        let base = Date(timeIntervalSince1970: 1_772_443_800)
        #expect(FeedDateParser.parse("Mon, 02 Mar 2026 09:30:00 GMT") == base)
        #expect(FeedDateParser.parse("02 Mar 2026 09:30:00 +0000") == base)
        #expect(FeedDateParser.parse("Mon, 2 March 2026 04:30 EST") == base)
        #expect(FeedDateParser.parse("Mon, 02 Mar 26 01:30:00 PST") == base)
        #expect(FeedDateParser.parse("  Monday, 02 Mar 2026 10:30:00 +01:00 ") == base)
        #expect(FeedDateParser.parse("Mon, 02 Mar 2026 09:30:00") == base)
    }

    @Test("Invalid dates are nil, never a crash")
    func invalid() {
        for text in [
            "", "yesterday", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "2026-03-02T25:00:00Z",
            "Mon, 32 Mar 2026 09:30:00 GMT", "Mon, 02 Foo 2026 09:30:00 GMT", "2026-03-02T09:30:00+99:00",
            "Mon, 02 Mar 2026 09:30:00 Mars", String(repeating: "9", count: 10_000), "2026-03-02T09:30:00.Z",
        ] {
            #expect(FeedDateParser.parse(text) == nil, "\(text.prefix(40))")
        }
    }
}
