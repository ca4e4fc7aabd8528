import Foundation
import ResilienceSources
import ResilienceTesting
import Testing

@Suite("Fallback chains and cache")
struct FallbackAndCacheTests {
    let clock = ManualClock()
    var context: ResilienceContext { ResilienceContext(key: "k", clock: .manual(clock)) }

    @Test("Primary → backup → cache: the first that delivers serves, and is named")
    func chainOrder() async throws {
        let sink = RecordingTelemetrySink()
        let cache = SourceCache<String>(clock: .manual(clock))
        cache.store(["cached"], for: "acme", query: SourceQuery())
        let primary = ScriptedSource<String>(id: "acme", steps: [.failure(TestFailure(category: .serverError))])
        let backup = ScriptedSource<String>(id: "acme-backup", steps: [.failure(TestFailure(category: .timeout))])
        let chain = FallbackSource(
            primary: primary, fallbacks: [.source(backup, name: "backup"), .cache(cache, for: "acme")])
        clock.advance(by: .seconds(42))
        var observed = context
        observed.telemetry = sink
        let result = try await chain.fetchResult(SourceQuery(), context: observed)
        #expect(result.items == ["cached"])
        #expect(result.servedBy == "cache")
        #expect(result.cacheAge == .seconds(42))
        #expect(sink.events(.fallbackUsed).first?.classification?.category == .serverError)
        #expect(chain.id == "acme")
        #expect(primary.callCount == 1)
        #expect(backup.callCount == 1)
    }

    @Test("Every alternative failing throws fallbackExhausted with the primary's failure underneath")
    func exhausted() async throws {
        let cache = SourceCache<String>(clock: .manual(clock))
        let chain = FallbackSource<String>(
            id: "x",
            alternatives: [
                .source(ScriptedSource<String>(id: "p", steps: [.failure(TestFailure(category: .rateLimited))])),
                .cache(cache, for: "x"),
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
            fallbacks: [.simplifiedQuery(source, simplify: FallbackAlternative<String>.droppingFilters)])
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
}
