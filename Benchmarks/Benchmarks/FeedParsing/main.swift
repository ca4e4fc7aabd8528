import Foundation
@_spi(Benchmarks) import ResilienceSources

#if canImport(FoundationXML)
import FoundationXML
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Feed parsing speed as a ratio to baselines in the same run (the machine is shared and noisy): reading the
// same bytes, the feed parser's own XML tokenizer alone, and Foundation's XMLParser alone (no feed logic).
// Then peak RSS, and the heap left behind by 10,000 parses of a small feed (glibc's mallinfo2).
// Usage: swift run -c release --package-path Benchmarks FeedParsing [rounds]
//
// The document: a realistic RSS 2.0 feed (HTML descriptions with entities, content:encoded in CDATA,
// Dublin Core dates, enclosures) of about 4 MB, under the parser's 5 MB cap. "Reading the bytes" is a
// checksum over every byte of the same `Data`, the cheapest honest pass over the input.

func makeFeed(targetBytes: Int) -> Data {
    var xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"
         xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>Benchmark &amp; Co</title>
        <link>https://bench.example/</link><description>Jobs</description>

        """
    var index = 0
    while xml.utf8.count < targetBytes {
        xml += """
            <item><title>Senior Swift Engineer &#8211; Platform #\(index) &#8212; Remote</title>
            <link>https://bench.example/jobs/\(index)</link><guid isPermaLink="false">bench-\(index)</guid>
            <pubDate>Tue, 24 Nov 2026 09:\(String(format: "%02d", index % 60)):00 +0100</pubDate>
            <dc:creator>Hiring team</dc:creator>
            <description>&lt;p&gt;Build resilient clients in Swift. Caf&amp;eacute; included &amp;amp; more.&lt;/p&gt;\
            &lt;ul&gt;&lt;li&gt;Retry budgets&lt;/li&gt;&lt;li&gt;Circuit breakers&lt;/li&gt;&lt;/ul&gt;</description>
            <content:encoded><![CDATA[<p>We are hiring for <b>platform</b> work: networking, caching and feeds.</p>
            <p>Salary &euro;90k&ndash;120k. Apply at <a href="https://bench.example/apply/\(index)">the board</a>.</p>]]></content:encoded>
            <enclosure url="https://bench.example/logo/\(index).png" length="1234" type="image/png"/>
            </item>

            """
        index += 1
    }
    xml += "</channel></rss>\n"
    return Data(xml.utf8)
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func peakResidentMegabytes() -> Double {
    var usage = rusage()
    #if canImport(Darwin)
    getrusage(RUSAGE_SELF, &usage)
    #else
    getrusage(RUSAGE_SELF.rawValue, &usage)
    #endif
    #if canImport(Darwin)
    return Double(usage.ru_maxrss) / 1_048_576
    #else
    return Double(usage.ru_maxrss) / 1_024
    #endif
}

// `FeedParsing leak N`: only N parses each of a small feed, the same feed cut off and podcast fixture 068,
// then exit; for `valgrind --leak-check=full`, comparing two values of N.
if CommandLine.arguments.dropFirst().first == "leak" {
    let count = CommandLine.arguments.dropFirst(2).first.flatMap(Int.init) ?? 1_000
    let leakParser = FeedParser()
    let small = makeFeed(targetBytes: 6_144)
    let fixture =
        (try? Data(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../../Tests/Fixtures/Feeds/068-podcast-2.xml"))) ?? Data()
    var items = 0
    for _ in 0..<count {
        items += (try? leakParser.parse(small, source: "leak"))?.count ?? 0
        items += (try? leakParser.parse(small.prefix(small.count - 300), source: "leak"))?.count ?? 0
        items += (try? leakParser.parse(fixture, source: "leak"))?.count ?? 0
    }
    print("\(count) × 3 parses, \(items) items")
    exit(0)
}

let rounds = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 7
let feed = makeFeed(targetBytes: 4 * 1_024 * 1_024)
let megabytes = Double(feed.count) / 1_048_576
let clock = ContinuousClock()
let parser = FeedParser(configuration: .init(maximumItems: 100_000))
// Memory retained across parses, measured first (while the heap is small, so that retained blocks cannot
// hide in memory freed by the large parses): resident memory after 1,000 warm-up parses and after 10,000
// more, through the feed parser and through Foundation's XMLParser.
func residentMegabytes() -> Double {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
        let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
    else { return 0 }
    return pages * Double(sysconf(Int32(_SC_PAGESIZE))) / 1_048_576
}

func retained(_ label: String, _ body: () -> Void) {
    for _ in 0..<1_000 { body() }
    let before = residentMegabytes()
    for _ in 0..<10_000 { body() }
    let after = residentMegabytes()
    print(
        String(
            format: "%@: RSS %.1f MB -> %.1f MB over 10,000 parses (%.0f bytes/parse)", label, before, after,
            (after - before) * 1_048_576 / 10_000))
}

/// Counts what Foundation's parser reports, as the feed parser's old delegate saw it.
final class CountingDelegate: NSObject, XMLParserDelegate {
    var events = 0
    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) { events += 1 }
    func parser(_ parser: XMLParser, foundCharacters string: String) { events += 1 }
    func parser(_ parser: XMLParser, didStartMappingPrefix prefix: String, toURI namespaceURI: String) { events += 1 }
}

let podcast =
    (try? Data(
        contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../Tests/Fixtures/Feeds/068-podcast-2.xml"))) ?? Data()
let small = makeFeed(targetBytes: 6_144)
let failing = small.prefix(small.count - 300)
if residentMegabytes() > 0 {
    retained("feed parser, 6 KB namespaced feed") { _ = try? parser.parse(small, source: "bench") }
    retained("feed parser, the same feed cut off") { _ = try? parser.parse(failing, source: "bench") }
    retained("feed parser, podcast fixture 068 (\(podcast.count) bytes)") {
        _ = try? parser.parse(podcast, source: "bench")
    }
    retained("XMLParser + counting delegate, podcast fixture 068") {
        let xml = XMLParser(data: podcast)
        xml.shouldProcessNamespaces = true
        xml.shouldReportNamespacePrefixes = true
        let delegate = CountingDelegate()
        xml.delegate = delegate
        _ = xml.parse()
    }
    retained("XMLParser alone, 6 KB namespaced feed") {
        let xml = XMLParser(data: small)
        xml.shouldProcessNamespaces = true
        xml.shouldReportNamespacePrefixes = true
        _ = xml.parse()
    }
    retained("XMLParser alone, the same feed cut off") {
        let xml = XMLParser(data: failing)
        xml.shouldProcessNamespaces = true
        _ = xml.parse()
    }
}

let baselineRSS = peakResidentMegabytes()
/// The floor: Foundation's `XMLParser` over the same bytes with a delegate that does nothing.
final class EmptyDelegate: NSObject, XMLParserDelegate {}
var xmlTimes: [Double] = []
var tokenizerTimes: [Double] = []
var parseTimes: [Double] = []
var readTimes: [Double] = []
var itemCount = 0
for _ in 0..<rounds {
    let readStart = clock.now
    var checksum: UInt64 = 0
    feed.withUnsafeBytes { raw in
        for byte in raw { checksum = checksum &* 31 &+ UInt64(byte) }
    }
    readTimes.append(seconds(readStart.duration(to: clock.now)))
    precondition(checksum != 0)
    let xmlStart = clock.now
    let xml = XMLParser(data: feed)
    let delegate = EmptyDelegate()
    xml.delegate = delegate
    precondition(xml.parse())
    xmlTimes.append(seconds(xmlStart.duration(to: clock.now)))
    let tokenizerStart = clock.now
    let events = try FeedParser.tokenizeOnly(feed)
    precondition(events > 0)
    tokenizerTimes.append(seconds(tokenizerStart.duration(to: clock.now)))
    let parseStart = clock.now
    let items = try parser.parse(feed, source: "bench")
    parseTimes.append(seconds(parseStart.duration(to: clock.now)))
    itemCount = items.count
}
parseTimes.sort()
readTimes.sort()
xmlTimes.sort()
tokenizerTimes.sort()
let tokenizerMedian = tokenizerTimes[tokenizerTimes.count / 2]
let xmlMedian = xmlTimes[xmlTimes.count / 2]
let parseMedian = parseTimes[parseTimes.count / 2]
let readMedian = readTimes[readTimes.count / 2]
let parseRate = megabytes / parseMedian
print(String(format: "feed: %.2f MB, %d items, %d rounds", megabytes, itemCount, rounds))
print(
    String(
        format: "parse: median %.3f s (min %.3f, max %.3f) = %.1f MB/s", parseMedian, parseTimes.first!,
        parseTimes.last!, parseRate))
print(String(format: "read the same bytes: median %.4f s = %.0f MB/s", readMedian, megabytes / readMedian))
print(String(format: "XMLParser alone (empty delegate): median %.3f s = %.1f MB/s", xmlMedian, megabytes / xmlMedian))
print(
    String(
        format: "tokenizer alone: median %.3f s = %.1f MB/s (%.1fx XMLParser alone)", tokenizerMedian,
        megabytes / tokenizerMedian, xmlMedian / tokenizerMedian))
print(
    String(
        format: "ratio parse/read time: %.0fx; parse/XMLParser-alone time: %.2fx; parse/tokenizer-alone time: %.1fx",
        parseMedian / readMedian, parseMedian / xmlMedian, parseMedian / tokenizerMedian))
print(
    String(
        format: "peak RSS: %.0f MB (%.0f MB before parsing; input %.1f MB, cap %d MB)", peakResidentMegabytes(),
        baselineRSS, megabytes, parser.configuration.maximumBytes / 1_048_576))
print(parseRate >= 20 ? "goal met: >= 20 MB/s" : "goal missed: < 20 MB/s")
