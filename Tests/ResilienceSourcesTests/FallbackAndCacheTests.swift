import Foundation
import ResilienceSources
import ResilienceTesting
import Testing

@Suite("Fallback chains and cache")
struct FallbackAndCacheTests {
    let clock = ManualClock()
    var context: ResilienceContext { ResilienceContext(key: "k", clock: .manual(clock)) }

    @Test("Primary → backup → RSS: the first that delivers serves, and is named")
    func chainOrder() async throws {
        let sink = RecordingTelemetrySink()
        let primary = ScriptedSource<String>(id: "acme", steps: [.failure(TestFailure(category: .serverError))])
        let backup = ScriptedSource<String>(id: "acme-backup", steps: [.failure(TestFailure(category: .timeout))])
        let rss = ScriptedSource<String>(id: "acme-rss", items: ["from-rss"])
        let chain = FallbackSource(
            primary: primary, fallbacks: [.source(backup, name: "backup"), .source(rss, name: "rss")])
        var observed = context
        observed.telemetry = sink
        let result = try await chain.fetchResult(SourceQuery(), context: observed)
        #expect(result.items == ["from-rss"])
        #expect(result.servedBy == "rss")
        #expect(result.cacheAge == nil)
        #expect(sink.events(.fallbackUsed).first?.classification?.category == .serverError)
        #expect(chain.id == "acme")
        #expect(primary.callCount == 1)
        #expect(backup.callCount == 1)
    }

    @Test("A primary that hangs gets its share of the deadline, and the backup answers in the time left")
    func hungPrimaryLeavesTimeForTheBackup() async throws {
        let sink = RecordingTelemetrySink()
        let primary = ScriptedSource<String>(
            id: "acme", steps: [.items(["late"], after: .seconds(60))], clock: .manual(clock))
        let rss = ScriptedSource<String>(id: "acme-rss", items: ["from-rss"])
        let chain = FallbackSource(primary: primary, fallbacks: [.source(rss, name: "rss")])
        var bounded = context
        bounded.telemetry = sink
        bounded.deadline = ResilienceInstant(offset: clock.now.offset).advanced(by: .seconds(10))
        let finished = LockedBox(false)
        let fetch = Task { [bounded] in
            defer { finished.mutate { $0 = true } }
            return try await chain.fetchResult(SourceQuery(), context: bounded)
        }
        await clock.waitForSleepers(count: 1)  // the primary's answer
        clock.advance(by: .seconds(5))  // the end of the primary's share of the 10 s
        for _ in 0..<10_000 where !finished.value { await Task.yield() }
        #expect(finished.value, "the chain was still waiting for the primary at its share's end")
        clock.advance(by: .seconds(60))  // lets a chain still waiting finish
        let result = try await fetch.value
        #expect(result.items == ["from-rss"])
        #expect(result.servedBy == "rss")
        #expect(sink.events(.fallbackUsed).first?.classification?.category == .timeout)
        #expect(rss.callCount == 1)
    }

    @Test("Every alternative failing throws fallbackExhausted with the primary's failure underneath")
    func exhausted() async throws {
        let chain = FallbackSource<String>(
            id: "x",
            alternatives: [
                .source(ScriptedSource<String>(id: "p", steps: [.failure(TestFailure(category: .rateLimited))])),
                .simplifiedQuery(ScriptedSource<String>(id: "s", items: ["never"]), simplify: { _ in nil }),
                .source(ScriptedSource<String>(id: "b", steps: [.failure(TestFailure(category: .timeout))])),
            ])
        let error = try await #require(throws: ResilienceError.self) {
            try await chain.fetch(SourceQuery(), context: context)
        }
        #expect(error.code == .fallbackExhausted)
        #expect(error.underlying?.category == .rateLimited)
        #expect(error.classification.code == .fallbackExhausted)
    }

    @Test("Full query → simplified query")
    func simplifiedQuery() async throws {
        let source = ScriptedSource<String>(
            id: "search", steps: [.failure(TestFailure(category: .clientError)), .items(["broad"])])
        let chain = FallbackSource(
            primary: source,
            fallbacks: [.simplifiedQuery(source, simplify: FallbackSource<String>.Alternative.droppingFilters)])
        let query = SourceQuery(text: "swift", filters: ["location": "remote"])
        let result = try await chain.fetchResult(query, context: context)
        #expect(result.items == ["broad"])
        #expect(result.servedBy == "simplified-query")
        #expect(source.queries.last == SourceQuery(text: "swift"))
    }

    @Test("Cancellation is never answered by a fallback; a veto stops the chain")
    func cancellationAndVeto() async throws {
        let backup = ScriptedSource(id: "backup", items: ["b"])
        let cancelled = FallbackSource(
            primary: ScriptedSource<String>(id: "p", steps: [.failure(CancellationError())]),
            fallbacks: [.source(backup)])
        await #expect(throws: CancellationError.self) { try await cancelled.fetch(SourceQuery(), context: context) }
        #expect(backup.callCount == 0)

        let vetoed = FallbackSource(
            primary: ScriptedSource<String>(id: "p", steps: [.failure(TestFailure(category: .authentication))]),
            fallbacks: [.source(backup)], shouldFallBack: { $0.category != .authentication })
        await #expect(throws: TestFailure.self) { try await vetoed.fetch(SourceQuery(), context: context) }
        #expect(backup.callCount == 0)
    }

    @Test("A capacity set to 0 or less after init is clamped to 1, as init clamps it: the cache keeps an entry")
    func nonPositiveCapacityIsClamped() {
        for capacity in [0, -1, Int.min] {
            var configuration = SourceCacheConfiguration()
            configuration.capacity = capacity
            #expect(configuration.capacity == 1)
            let cache = SourceCache<Int>(configuration: configuration, clock: .manual(clock))
            cache.store([1], for: "a", query: SourceQuery())
            #expect(cache.entry(for: "a", query: SourceQuery())?.items == [1], "capacity \(capacity)")
        }
    }

    @Test("The cache is age-aware and bounded")
    func cacheBounds() {
        let cache = SourceCache<Int>(
            configuration: SourceCacheConfiguration(capacity: 2, freshFor: .seconds(10), maximumAge: .seconds(100)),
            clock: .manual(clock))
        cache.store([1], for: "a", query: SourceQuery())
        cache.store([2], for: "b", query: SourceQuery())
        #expect(cache.entry(for: "a", query: SourceQuery())?.items == [1])  // touch a: b is now least recent
        cache.store([3], for: "c", query: SourceQuery())
        #expect(cache.count == 2)
        #expect(cache.entry(for: "b", query: SourceQuery()) == nil)
        #expect(cache.entry(for: "a", query: SourceQuery(text: "other")) == nil)
        clock.advance(by: .seconds(11))
        let stale = cache.entry(for: "c", query: SourceQuery())
        #expect(stale?.isStale == true)
        #expect(stale?.age == .seconds(11))
        clock.advance(by: .seconds(100))
        #expect(cache.entry(for: "c", query: SourceQuery()) == nil)
        cache.store([4], for: "a", query: SourceQuery())
        cache.removeAll(for: "a")
        #expect(cache.entry(for: "a", query: SourceQuery()) == nil)
    }

    @Test("Queries whose renderings coincide are different keys: neither is served the other's items")
    func cacheKeysAreUnambiguous() {
        let cache = SourceCache<Int>(clock: .manual(clock))
        // Both render as `q=x&limit=5&&limit=`.
        let filtered = SourceQuery(text: "x", filters: ["limit": "5&"])
        let typed = SourceQuery(text: "x&limit=5")
        #expect(filtered.description == typed.description)
        cache.store([1], for: "a", query: filtered)
        #expect(cache.entry(for: "a", query: typed) == nil)
        cache.store([2], for: "a", query: typed)
        #expect(cache.entry(for: "a", query: filtered)?.items == [1])
        #expect(cache.entry(for: "a", query: typed)?.items == [2])
        #expect(cache.count == 2)
    }

    @Test("Mapping a source or chaining it as a fallback keeps everything it says about its items")
    func provenancePassesThrough() async throws {
        // A feed an HTTP cache answered stale, 10 minutes old, which the publisher said must revalidate.
        let said = SourceFetchResult(
            items: [1, 2], cacheAge: .seconds(600), isStale: true,
            freshness: CacheFreshness(maxAge: .seconds(60), mustRevalidate: true), age: .seconds(600))
        let feed = ProvenanceStub(id: "feed", result: said)
        let mapped = try await feed.mapItems { "job-\($0)" }.fetchResult(SourceQuery(), context: context)
        #expect(mapped.items == ["job-1", "job-2"])
        #expect(mapped.cacheAge == said.cacheAge && mapped.isStale)
        #expect(mapped.freshness == said.freshness && mapped.age == said.age)

        let chain = FallbackSource(primary: feed, fallbacks: [.source(ProvenanceStub(id: "backup", result: said))])
        let chained = try await chain.fetchResult(SourceQuery(), context: context)
        #expect(chained.cacheAge == said.cacheAge && chained.isStale)
        #expect(chained.freshness == said.freshness && chained.age == said.age)

        // Through an aggregator: reported as served from a cache with its age, never as live and new.
        var aggregator = Aggregator<Int>(
            configuration: AggregatorConfiguration(sourceTimeout: nil), clock: .manual(clock))
        aggregator.register(chain)
        let report = try await aggregator.fetch().report.sources.first
        #expect(report?.status == .servedFromCache)
        #expect(report?.cacheAge == .seconds(600))
    }
}

/// A source that reports where its items came from, always the same.
private struct ProvenanceStub: ProvenanceReportingSource {
    let id: SourceID
    let kind: SourceKind = "stub"
    var displayName: String { id.rawValue }
    let result: SourceFetchResult<Int>

    func fetch(_ query: SourceQuery, context: ResilienceContext) async throws -> [Int] { result.items }

    func fetchResult(_ query: SourceQuery, context: ResilienceContext) async throws -> SourceFetchResult<Int> {
        result
    }
}
