import Foundation
import ResilienceSources
import ResilienceTesting
import ResilienceTransport
import Testing

@Suite("Feed HTTP caching")
struct FeedHTTPCachingTests {
    static let url = "https://feeds.example/jobs.rss"
    static let rss = """
        <rss version="2.0"><channel><title>Jobs</title><ttl>30</ttl><item><title>Swift Engineer</title>
        <link>/jobs/1</link></item></channel></rss>
        """

    func fullResponse(cacheControl: String = "max-age=600, stale-if-error=3600") -> ScriptedHTTPTransport.Answer {
        ScriptedHTTPTransport.Answer(
            result: .success(
                HTTPResponse(
                    status: 200,
                    headers: [
                        "ETag": "\"v1\"", "Last-Modified": "Tue, 24 Nov 2026 09:00:00 GMT",
                        "Cache-Control": cacheControl, "Content-Type": "application/rss+xml; charset=utf-8",
                    ], body: Data(Self.rss.utf8))))
    }

    /// A wall clock tests move by hand.
    final class WallClock: Sendable {
        private let now = LockedState(initialState: Date(timeIntervalSince1970: 1_795_000_000))
        var read: @Sendable () -> Date { { [now] in now.withLock { $0 } } }
        func advance(by seconds: Double) { now.withLock { $0.addTimeInterval(seconds) } }
    }

    @Test("Through an HTTP cache, the fetch after max-age is conditional and a 304 serves the stored feed as fresh")
    func conditionalGet() async throws {
        let transport = ScriptedHTTPTransport()
        transport.script(Self.url, [fullResponse(), .status(304)])
        let wallClock = WallClock()
        let cached = CachingTransport(wrapping: transport, wallClock: wallClock.read)
        let feed = FeedSource(id: "jobs", url: URL(string: Self.url)!, transport: cached)
        let context = ResilienceContext(key: "jobs")
        let first = try await feed.fetchResult(SourceQuery(), context: context)
        wallClock.advance(by: 601)
        let second = try await feed.fetchResult(SourceQuery(), context: context)
        #expect(first.items.map(\.title) == ["Swift Engineer"])
        #expect(first.items.first?.link?.absoluteString == "https://feeds.example/jobs/1")
        #expect(second.items == first.items)
        #expect(second.cacheAge == nil && !second.isStale)
        #expect((second.age ?? .zero) < .seconds(2))  // the publisher just confirmed it: new again
        #expect(first.freshness == CacheFreshness(maxAge: .seconds(600), staleIfError: .seconds(3_600)))
        let requests = transport.requests
        #expect(requests.count == 2)
        #expect(requests[0].headers["If-None-Match"] == nil)
        #expect(requests[1].headers["If-None-Match"] == "\"v1\"")
        #expect(requests[1].headers["If-Modified-Since"] == "Tue, 24 Nov 2026 09:00:00 GMT")
        #expect(feed.pollingInterval(for: URL(string: Self.url)!) == .seconds(1_800))
    }

    @Test("When the publisher fails within stale-if-error, the cache answers and the result says stale and how old")
    func staleIfError() async throws {
        let transport = ScriptedHTTPTransport()
        transport.script(Self.url, [fullResponse(), .status(503)])
        let wallClock = WallClock()
        let cached = CachingTransport(wrapping: transport, wallClock: wallClock.read)
        let feed = FeedSource(id: "jobs", url: URL(string: Self.url)!, transport: cached)
        let first = try await feed.fetchResult(SourceQuery(), context: ResilienceContext(key: "jobs"))
        #expect(!first.isStale)
        wallClock.advance(by: 700)
        let second = try await feed.fetchResult(SourceQuery(), context: ResilienceContext(key: "jobs"))
        #expect(second.items.map(\.title) == ["Swift Engineer"])
        #expect(second.isStale)
        #expect(second.cacheAge == .seconds(700))
        wallClock.advance(by: 3_600)
        await #expect(throws: HTTPStatusError.self) {
            try await feed.fetch(SourceQuery(), context: ResilienceContext(key: "jobs"))
        }
    }

    @Test("Items an HTTP cache answered fresh keep their age in the source cache: saved data never reads younger")
    func sourceCacheKeepsTheHTTPAge() async throws {
        let transport = ScriptedHTTPTransport()
        transport.script(Self.url, [fullResponse(cacheControl: "max-age=3600"), .status(503)])
        let wallClock = WallClock()
        let clock = ManualClock()
        let cached = CachingTransport(wrapping: transport, wallClock: wallClock.read)
        var aggregator = Aggregator<FeedItem>(
            configuration: AggregatorConfiguration(sourceTimeout: nil), clock: .manual(clock),
            cache: SourceCache(clock: .manual(clock)))
        aggregator.register(FeedSource(id: "jobs", url: URL(string: Self.url)!, transport: cached))
        func advance(_ seconds: Int) {
            wallClock.advance(by: Double(seconds))
            clock.advance(by: .seconds(seconds))
        }
        _ = try await aggregator.fetch()  // from the publisher
        advance(3_000)
        let fresh = try await aggregator.fetch()  // the HTTP cache answers: fresh, but 50 minutes old
        #expect(fresh.report.sources.first?.status == .succeeded)
        advance(1_200)
        let saved = try await aggregator.fetch()  // stale in the HTTP cache, the publisher is down
        #expect(transport.requests.count == 2)
        #expect(saved.report.sources.first?.status == .servedFromCache)
        #expect(saved.report.sources.first?.cacheAge == .seconds(4_200))
        #expect(saved.report.sources.first?.isStale == true)  // max-age 3600 ran out 10 minutes ago
    }

    @Test("A 304 the caller did not ask for is an HTTP error, and without a cache fetches are unconditional")
    func unexpected304() async throws {
        let transport = ScriptedHTTPTransport()
        transport.script(Self.url, [.status(304)])
        let feed = FeedSource(
            id: "jobs", url: URL(string: Self.url)!, transport: CachingTransport(wrapping: transport))
        await #expect(throws: HTTPStatusError.self) {
            try await feed.fetch(SourceQuery(), context: ResilienceContext(key: "k"))
        }
        let plain = ScriptedHTTPTransport()
        plain.script(Self.url, [fullResponse()])
        let uncached = FeedSource(id: "jobs", url: URL(string: Self.url)!, transport: plain)
        _ = try await uncached.fetch(SourceQuery(), context: ResilienceContext(key: "k"))
        _ = try await uncached.fetch(SourceQuery(), context: ResilienceContext(key: "k"))
        #expect(plain.requests.allSatisfy { $0.headers["If-None-Match"] == nil })
    }

    @Test("Cache-Control parsing")
    func cacheControl() {
        #expect(CacheFreshness(cacheControl: "public, max-age=60") == CacheFreshness(maxAge: .seconds(60)))
        #expect(
            CacheFreshness(cacheControl: "max-age=60, must-revalidate")
                == CacheFreshness(maxAge: .seconds(60), mustRevalidate: true))
        #expect(CacheFreshness(cacheControl: "no-store")?.noStore == true)
        #expect(CacheFreshness(cacheControl: "public") == nil)
        // RFC 9111 §4.2.1: an invalid lifetime means stale.
        #expect(CacheFreshness(cacheControl: "max-age=abc") == CacheFreshness(maxAge: .zero))
    }

    @Test("max-age and stale-if-error bound what SourceCache serves")
    func sourceCacheBounds() {
        let clock = ManualClock()
        let cache = SourceCache<String>(clock: .manual(clock))
        let query = SourceQuery()
        cache.store(
            ["a"], for: "s", query: query, freshness: CacheFreshness(maxAge: .seconds(60), staleIfError: .seconds(120)))
        cache.store(
            ["b"], for: "r", query: query, freshness: CacheFreshness(maxAge: .seconds(60), mustRevalidate: true))
        cache.store(["c"], for: "n", query: query, freshness: CacheFreshness(noStore: true))
        cache.store(["d"], for: "plain", query: query)
        #expect(cache.entry(for: "s", query: query)?.isStale == false)
        #expect(cache.entry(for: "n", query: query) == nil)
        clock.advance(by: .seconds(61))
        #expect(cache.entry(for: "s", query: query)?.isStale == true)
        #expect(cache.entry(for: "r", query: query) == nil)
        clock.advance(by: .seconds(120))
        #expect(cache.entry(for: "s", query: query) == nil)
        #expect(cache.entry(for: "plain", query: query)?.items == ["d"])
    }

    @Test("Without max-age, must-revalidate and stale-if-error count from the end of the cache's own freshness")
    func sourceCacheBoundsWithoutMaxAge() throws {
        let clock = ManualClock()
        let cache = SourceCache<String>(
            configuration: SourceCacheConfiguration(freshFor: .seconds(300), maximumAge: .seconds(86_400)),
            clock: .manual(clock))
        let query = SourceQuery()
        let revalidate = try #require(CacheFreshness(cacheControl: "private, must-revalidate"))
        let staleIfError = try #require(CacheFreshness(cacheControl: "stale-if-error=60"))
        cache.store(["r"], for: "r", query: query, freshness: revalidate)
        cache.store(["e"], for: "e", query: query, freshness: staleIfError)
        clock.advance(by: .seconds(300))
        #expect(cache.entry(for: "r", query: query)?.isStale == false)
        #expect(cache.entry(for: "e", query: query)?.isStale == false)
        clock.advance(by: .seconds(1))
        #expect(cache.entry(for: "r", query: query) == nil, "must-revalidate: never served stale")
        #expect(cache.entry(for: "e", query: query)?.isStale == true)
        clock.advance(by: .seconds(60))
        #expect(cache.entry(for: "e", query: query) == nil, "stale-if-error=60 ran out 361 s after storing")
    }
}
