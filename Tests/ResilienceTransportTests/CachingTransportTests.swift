import Foundation
import ResilienceCore
import ResilienceTesting
import ResilienceTransport
import Testing

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A wall clock tests move by hand.
final class TestWallClock: Sendable {
    private let now: LockedState<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_795_000_000)) { now = LockedState(initialState: start) }
    var read: @Sendable () -> Date { { [now] in now.withLock { $0 } } }
    var date: Date { now.withLock { $0 } }
    func advance(by seconds: Double) { now.withLock { $0.addTimeInterval(seconds) } }
}

@Suite("Caching transport")
struct CachingTransportTests {
    static let url = "https://api.example/jobs"
    let context = ResilienceContext(key: "jobs")

    static func ok(_ body: String, _ headers: HTTPHeaders) -> ScriptedHTTPTransport.Answer {
        .status(200, headers: headers, body: body)
    }

    func get(_ cache: CachingTransport, headers: HTTPHeaders = [:]) async throws -> HTTPResponse {
        try await cache.send(HTTPRequest(url: URL(string: Self.url)!, headers: headers), context: context)
    }

    @Test("A fresh response answers from storage with Age and Cache-Status; the network is not asked")
    func freshHit() async throws {
        let network = ScriptedHTTPTransport()
        network.script(Self.url, [Self.ok("v1", ["Cache-Control": "max-age=60"]), Self.ok("v2", [:])])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 30)
        let hit = try await get(cache)
        #expect(String(decoding: hit.body, as: UTF8.self) == "v1")
        #expect(hit.headers["Age"] == "30")
        let status = try #require(HTTPCacheStatus(headers: hit.headers, cacheName: CachingTransport.cacheName))
        #expect(status.isHit && !status.isStale && status.timeToLive == 30)
        #expect(network.requests.count == 1)
    }

    @Test("A stale response is validated with its ETag and Last-Modified; a 304 freshens the stored headers")
    func validation() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.ok(
                    "v1",
                    [
                        "Cache-Control": "max-age=10", "ETag": "\"a\"",
                        "Last-Modified": HTTPDate.format(Date(timeIntervalSince1970: 0)),
                    ]),
                .status(304, headers: ["Cache-Control": "max-age=300", "X-Generation": "2"]),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 20)
        let validated = try await get(cache)
        #expect(validated.status == 200)
        #expect(String(decoding: validated.body, as: UTF8.self) == "v1")
        #expect(validated.headers["X-Generation"] == "2")
        #expect(network.requests.last?.headers["If-None-Match"] == "\"a\"")
        #expect(network.requests.last?.headers["If-Modified-Since"] == "Thu, 01 Jan 1970 00:00:00 GMT")
        clock.advance(by: 200)
        _ = try await get(cache)
        #expect(network.requests.count == 2)
    }

    @Test("Vary keeps one variant per selecting header value")
    func vary() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.ok("en", ["Cache-Control": "max-age=60", "Vary": "Accept-Language"]),
                Self.ok("de", ["Cache-Control": "max-age=60", "Vary": "Accept-Language"]),
            ])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        _ = try await get(cache, headers: ["Accept-Language": "en"])
        let german = try await get(cache, headers: ["Accept-Language": "de"])
        let english = try await get(cache, headers: ["Accept-Language": "en"])
        #expect(String(decoding: german.body, as: UTF8.self) == "de")
        #expect(String(decoding: english.body, as: UTF8.self) == "en")
        #expect(network.requests.count == 2)
    }

    @Test("A 304 naming another validator than the stored response's updates nothing: the whole is fetched")
    func notModifiedForAnotherRepresentation() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.ok("v1", ["Cache-Control": "max-age=10", "ETag": "\"a\""]),
                .status(304, headers: ["Cache-Control": "max-age=100", "ETag": "\"b\""]),
                Self.ok("v2", ["Cache-Control": "max-age=100", "ETag": "\"b\""]),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 20)
        let answer = try await get(cache)
        #expect(String(decoding: answer.body, as: UTF8.self) == "v2" && answer.headers["ETag"] == "\"b\"")
        #expect(network.requests.count == 3)
        #expect(network.requests.last?.headers["If-None-Match"] == nil)
        clock.advance(by: 50)
        let stored = try await get(cache)
        #expect(String(decoding: stored.body, as: UTF8.self) == "v2")
        #expect(network.requests.count == 3)
    }

    @Test("A HEAD's 200 updates the stored GET response when its validators agree, and removes it when they do not")
    func headResponseUpdatesOrInvalidates() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.ok("v1", ["Cache-Control": "max-age=10, stale-if-error=600", "ETag": "\"a\"", "X-Tag": "1"]),
                // Same ETag and length: the stored response takes the HEAD's fields and freshness.
                .status(
                    200,
                    headers: ["Cache-Control": "max-age=100", "ETag": "\"a\"", "Content-Length": "2", "X-Tag": "2"]),
                // Another ETag: the stored body is outdated and goes, so an error is not answered with it.
                .status(200, headers: ["Cache-Control": "max-age=10", "ETag": "\"b\""]),
                .failure(URLError(.notConnectedToInternet)),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 20)
        let head = try await cache.send(HTTPRequest(method: .head, url: URL(string: Self.url)!), context: context)
        #expect(head.status == 200 && head.headers["X-Tag"] == "2")
        clock.advance(by: 50)
        let updated = try await get(cache)
        #expect(String(decoding: updated.body, as: UTF8.self) == "v1")
        #expect(updated.headers["X-Tag"] == "2")
        #expect(network.requests.count == 2)
        clock.advance(by: 100)
        _ = try await cache.send(HTTPRequest(method: .head, url: URL(string: Self.url)!), context: context)
        #expect(network.requests.count == 3)
        await #expect(throws: URLError.self) { try await get(cache) }
    }

    @Test("A HEAD's 200 that updates the stored GET response is answered with its fields; the GET keeps its body")
    func headResponseAnsweredWithStoredFields() async throws {
        let clock = TestWallClock()
        let headDate = HTTPDate.format(clock.date.addingTimeInterval(3))
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.ok("v1", ["Cache-Control": "max-age=2", "Content-Type": "text/plain", "X-Tag": "1"]),
                // No validators on either side, and none of the stored fields but a new Date.
                .status(200, headers: ["Date": headDate]),
            ])
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 3)
        let head = try await cache.send(HTTPRequest(method: .head, url: URL(string: Self.url)!), context: context)
        #expect(network.requests.last?.method == .head)
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.headers["X-Tag"] == "1" && head.headers["Content-Type"] == "text/plain")
        #expect(head.headers["Date"] == headDate)
        // The stored GET response stays, with its body, freshened by the HEAD's Date.
        let stored = try await get(cache)
        #expect(String(decoding: stored.body, as: UTF8.self) == "v1" && stored.headers["X-Tag"] == "1")
        #expect(network.requests.count == 2)
    }

    @Test("A HEAD's 200 for a stored 404 does not update it: the HEAD is answered as sent, and the 404 goes")
    func headResponseForAnotherStoredStatus() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                .status(404, headers: ["Cache-Control": "max-age=10"], body: "missing"),
                .status(200, headers: ["Cache-Control": "max-age=100", "X-Tag": "2"]),
                Self.ok("v2", ["Cache-Control": "max-age=100"]),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 20)
        let head = try await cache.send(HTTPRequest(method: .head, url: URL(string: Self.url)!), context: context)
        #expect(head.status == 200 && head.headers["X-Tag"] == "2")
        let found = try await get(cache)
        #expect(found.status == 200 && String(decoding: found.body, as: UTF8.self) == "v2")
        #expect(network.requests.count == 3)
    }

    @Test("A HEAD answered 410 (any final status but 200, 206 and 304, short of a momentary failure) removes it")
    func headResponseOfAnotherStatusInvalidates() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.ok("v1", ["Cache-Control": "max-age=100, stale-if-error=600"]),
                // A momentary failure says nothing about the representation: the stored response stays.
                .status(503),
                .status(410, headers: ["Cache-Control": "max-age=1000"]),
                .failure(URLError(.notConnectedToInternet)),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await get(cache)
        let head = HTTPRequest(method: .head, url: URL(string: Self.url)!, headers: ["Cache-Control": "no-cache"])
        _ = try await cache.send(head, context: context)
        let kept = try await get(cache)
        #expect(String(decoding: kept.body, as: UTF8.self) == "v1")
        #expect(network.requests.count == 2)
        let gone = try await cache.send(head, context: context)
        #expect(gone.status == 410)
        // The origin said the resource is gone: neither a fresh answer nor stale-if-error serves the old 200.
        await #expect(throws: URLError.self) { try await get(cache) }
        #expect(network.requests.count == 4)
    }

    @Test("A HEAD that outdates the stored response it selects removes that variant only; the URL's others stay")
    func headResponseOutdatesOnlyItsVariant() async throws {
        let network = ScriptedHTTPTransport()
        let varying: HTTPHeaders = ["Cache-Control": "max-age=100", "Vary": "Accept-Language"]
        network.script(
            Self.url,
            [
                Self.ok("en", varying), Self.ok("de", varying),
                // The English HEAD's 410 and the English HEAD's 200 with another ETag each outdate the English
                // variant alone.
                .status(410, headers: ["Vary": "Accept-Language"]),
                Self.ok("en2", ["Cache-Control": "max-age=100", "Vary": "Accept-Language", "ETag": "\"a\""]),
                .status(200, headers: ["Cache-Control": "max-age=100", "Vary": "Accept-Language", "ETag": "\"b\""]),
                Self.ok("en3", varying),
            ])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        let english: HTTPHeaders = ["Accept-Language": "en"]
        let german: HTTPHeaders = ["Accept-Language": "de"]
        _ = try await get(cache, headers: english)
        _ = try await get(cache, headers: german)
        var head = HTTPRequest(method: .head, url: URL(string: Self.url)!, headers: english)
        head.headers["Cache-Control"] = "no-cache"
        #expect(try await cache.send(head, context: context).status == 410)
        let stillGerman = try await get(cache, headers: german)
        #expect(String(decoding: stillGerman.body, as: UTF8.self) == "de")
        #expect(network.requests.count == 3)
        #expect(String(decoding: try await get(cache, headers: english).body, as: UTF8.self) == "en2")
        #expect(network.requests.count == 4)
        #expect(try await cache.send(head, context: context).status == 200)
        #expect(String(decoding: try await get(cache, headers: german).body, as: UTF8.self) == "de")
        #expect(String(decoding: try await get(cache, headers: english).body, as: UTF8.self) == "en3")
        #expect(network.requests.count == 6)
    }

    @Test("A 304 that changes Vary keys the stored response by its new Vary: it is selected again, not a second copy")
    func notModifiedChangingVary() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.ok("v1", ["Cache-Control": "max-age=10", "ETag": "\"a\"", "Vary": "Accept-Language"]),
                .status(304, headers: ["Cache-Control": "max-age=100", "ETag": "\"a\"", "Vary": "Accept-Encoding"]),
            ])
        let clock = TestWallClock()
        let store = InMemoryHTTPCacheStore()
        let cache = CachingTransport(wrapping: network, store: store, wallClock: clock.read)
        let headers: HTTPHeaders = ["Accept-Language": "en", "Accept-Encoding": "gzip"]
        _ = try await get(cache, headers: headers)
        clock.advance(by: 20)
        let validated = try await get(cache, headers: headers)
        #expect(String(decoding: validated.body, as: UTF8.self) == "v1")
        let entries = store.entries(forKey: Self.url)
        #expect(entries.map(\.variantKey) == ["accept-encoding=gzip\n"])
        let reused = try await get(cache, headers: headers)
        #expect(String(decoding: reused.body, as: UTF8.self) == "v1")
        #expect(network.requests.count == 2)
        #expect(store.count == 1)
    }

    /// A store whose every call throws, as one on a full disk or whose database is gone does.
    struct FailingStore: HTTPCacheStore {
        static let error = HTTPCacheStoreError(.diskFull, message: "SQLite 13: database or disk is full")
        func entries(forKey key: String) throws(HTTPCacheStoreError) -> [HTTPCacheEntry] { throw Self.error }
        func store(_ entry: HTTPCacheEntry) throws(HTTPCacheStoreError) { throw Self.error }
        func removeEntries(forKey key: String) throws(HTTPCacheStoreError) { throw Self.error }
    }

    @Test("A store that throws is a miss answered from the network, and each failed call is a cache-store-failed event")
    func failingStoreIsReported() async throws {
        let network = ScriptedHTTPTransport()
        network.script(Self.url, [Self.ok("v1", ["Cache-Control": "max-age=60"])])
        let sink = RecordingTelemetrySink()
        let context = ResilienceContext(key: "jobs", operation: "list", telemetry: sink)
        let cache = CachingTransport(wrapping: network, store: FailingStore(), wallClock: TestWallClock().read)
        let answer = try await cache.send(HTTPRequest(url: URL(string: Self.url)!), context: context)
        #expect(String(decoding: answer.body, as: UTF8.self) == "v1")
        let status = try #require(HTTPCacheStatus(headers: answer.headers, cacheName: CachingTransport.cacheName))
        #expect(!status.isHit && !status.stored)
        _ = try await cache.send(HTTPRequest(method: .post, url: URL(string: Self.url)!), context: context)
        let failures = sink.events(.cacheStoreFailed, key: "jobs")
        let message = FailingStore.error.message
        #expect(failures.map(\.detail) == ["read", "store", "remove"].map { "\($0) disk-full: \(message)" })
        #expect(failures.allSatisfy { $0.operation == "list" })
        #expect(network.requests.count == 2)
    }

    @Test("A successful POST invalidates the target URI; request no-store and no-cache bypass storage")
    func invalidationAndRequestDirectives() async throws {
        let network = ScriptedHTTPTransport()
        network.script(Self.url, [Self.ok("v1", ["Cache-Control": "max-age=60"])])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        _ = try await get(cache)
        _ = try await get(cache, headers: ["Cache-Control": "no-cache"])
        #expect(network.requests.count == 2)
        _ = try await get(cache, headers: ["Pragma": "no-cache"])
        #expect(network.requests.count == 3)
        _ = try await get(cache)
        #expect(network.requests.count == 3)
        _ = try await cache.send(HTTPRequest(method: .post, url: URL(string: Self.url)!), context: context)
        _ = try await get(cache)
        #expect(network.requests.count == 5)
        let onlyIfCached = try await cache.send(
            HTTPRequest(url: URL(string: "https://api.example/other")!, headers: ["Cache-Control": "only-if-cached"]),
            context: context)
        #expect(onlyIfCached.status == 504)
        #expect(network.requests.count == 5)
    }

    @Test("stale-if-error: a failure the wrapped transport could not recover from is answered stale, and says so")
    func staleIfError() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.ok("v1", ["Cache-Control": "max-age=60, stale-if-error=600"]),
                .failure(URLError(.notConnectedToInternet)), .status(503), .failure(URLError(.timedOut)),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 100)
        let stale = try await get(cache)
        #expect(String(decoding: stale.body, as: UTF8.self) == "v1")
        #expect(stale.headers["Age"] == "100")
        let status = try #require(HTTPCacheStatus(headers: stale.headers, cacheName: CachingTransport.cacheName))
        #expect(status.isStale && status.timeToLive == -40 && status.detail == "stale-if-error")
        let afterServerError = try await get(cache)
        #expect(afterServerError.status == 200)
        clock.advance(by: 600)
        await #expect(throws: URLError.self) { try await get(cache) }
    }

    @Test("A cancelled request is never answered from the cache")
    func cancellation() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [Self.ok("v1", ["Cache-Control": "max-age=0, stale-if-error=600"]), .failure(CancellationError())])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        _ = try await get(cache)
        await #expect(throws: CancellationError.self) { try await get(cache) }
    }

    @Test("stale-while-revalidate answers stale at once and refreshes in the background")
    func staleWhileRevalidate() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.ok("v1", ["Cache-Control": "max-age=10, stale-while-revalidate=60"]),
                Self.ok("v2", ["Cache-Control": "max-age=100"]),
            ])
        let clock = TestWallClock()
        let store = InMemoryHTTPCacheStore()
        let cache = CachingTransport(wrapping: network, store: store, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 20)
        let stale = try await get(cache)
        #expect(String(decoding: stale.body, as: UTF8.self) == "v1")
        for _ in 0..<1_000
        where network.requests.count < 2 || store.entries(forKey: Self.url).first?.response.body != Data("v2".utf8) {
            await Task.yield()
        }
        let refreshed = try await get(cache)
        #expect(String(decoding: refreshed.body, as: UTF8.self) == "v2")
        #expect(network.requests.count == 2)
    }

    @Test(
        "A heuristic fraction that is NaN or negative gives no heuristic freshness; an infinite one gives the maximum",
        arguments: [(Double.nan, 0.0), (-1, 0), (.infinity, 7 * 86_400), (-.infinity, 0)])
    func hostileHeuristicFraction(fraction: Double, lifetime: Double) async throws {
        let policy = HTTPCachePolicy(heuristicFraction: fraction)
        let clock = TestWallClock()
        for modifiedAgo in [0.0, 1_000] {
            let modified = HTTPDate.format(clock.date.addingTimeInterval(-modifiedAgo))
            let response = HTTPResponse(status: 200, headers: ["Last-Modified": modified], body: Data("v1".utf8))
            let expected = modifiedAgo == 0 ? 0 : lifetime
            #expect(policy.freshnessLifetime(of: response, responseTime: clock.date) == expected)
            let network = ScriptedHTTPTransport()
            let headers: HTTPHeaders = ["Last-Modified": modified, "Cache-Control": "stale-if-error=600"]
            network.script(Self.url, [Self.ok("v1", headers), .failure(URLError(.notConnectedToInternet))])
            let cache = CachingTransport(wrapping: network, policy: policy, wallClock: clock.read)
            _ = try await get(cache)
            // Fresh: answered from storage; stale: the network fails and the stale response answers.
            let second = try await get(cache)
            #expect(String(decoding: second.body, as: UTF8.self) == "v1")
            #expect(
                network.requests.count == (expected > 0 ? 1 : 2), "fraction \(fraction), modified \(modifiedAgo) s ago")
        }
    }
}

@Suite("HTTP cache stores")
struct HTTPCacheStoreTests {
    static func entry(_ key: String, bodyBytes: Int, variant: String = "") -> HTTPCacheEntry {
        HTTPCacheEntry(
            key: key, variantKey: variant,
            response: HTTPResponse(
                status: 200, headers: ["Cache-Control": "max-age=60"], body: Data(repeating: 7, count: bodyBytes)),
            requestTime: Date(timeIntervalSince1970: 1), responseTime: Date(timeIntervalSince1970: 2),
            freshnessLifetime: 60, initialAge: 0)
    }

    static func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("http-cache-\(UUID()).sqlite").path
    }

    func exerciseLeastRecentlyUsedEviction(_ store: some HTTPCacheStore, budget: Int) throws {
        let size = Self.entry("a", bodyBytes: 1_000).byteCount
        #expect(budget >= 3 * size && budget < 4 * size)
        try store.store(Self.entry("a", bodyBytes: 1_000))
        try store.store(Self.entry("b", bodyBytes: 1_000))
        try store.store(Self.entry("c", bodyBytes: 1_000))
        #expect(try store.entries(forKey: "a").count == 1)
        try store.store(Self.entry("d", bodyBytes: 1_000))
        #expect(try store.entries(forKey: "b").isEmpty)
        #expect(try store.entries(forKey: "a").count == 1)
        try store.store(Self.entry("huge", bodyBytes: 10_000))
        #expect(try store.entries(forKey: "huge").isEmpty)
        try store.store(Self.entry("a", bodyBytes: 1_000, variant: "accept=x"))
        #expect(try store.entries(forKey: "a").count == 2)
        try store.removeEntries(forKey: "a")
        #expect(try store.entries(forKey: "a").isEmpty)
    }

    @Test("In memory: a byte budget with least-recently-used eviction")
    func inMemory() throws {
        let store = InMemoryHTTPCacheStore(byteBudget: 5_600)
        try exerciseLeastRecentlyUsedEviction(store, budget: 5_600)
        #expect(store.byteCount <= 5_600)
    }

    /// Stores 40 variants under one key (as `Vary: Cookie` with a cookie that changes on every request would),
    /// reading the key after each, and checks the store keeps the 16 most recent and nothing of other keys goes.
    func exerciseVariantBound(_ store: some HTTPCacheStore) throws {
        try store.store(Self.entry("other", bodyBytes: 10))
        for index in 0..<40 {
            try store.store(Self.entry("a", bodyBytes: 10, variant: "cookie=\(index)\n"))
            _ = try store.entries(forKey: "a")
        }
        let variants = try store.entries(forKey: "a").map(\.variantKey)
        #expect(Set(variants) == Set((24..<40).map { "cookie=\($0)\n" }))
        #expect(try store.entries(forKey: "other").count == 1)
    }

    static let variantBoundBytes =
        Self.entry("other", bodyBytes: 10).byteCount + 16
        * Self.entry("a", bodyBytes: 10, variant: "cookie=10\n").byteCount

    /// Runs `exercise` on a new in-memory store and a new SQLite store, checks the SQLite file holds the bytes
    /// its store counts, and returns both stores' byte counts.
    func exerciseBothStores(
        _ exercise: (any HTTPCacheStore) throws -> Void
    ) throws -> (memory: Int, sqlite: Int) {
        let memory = InMemoryHTTPCacheStore()
        try exercise(memory)
        let path = Self.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let sqlite = try SQLiteHTTPCacheStore(path: path)
        try exercise(sqlite)
        #expect(try Self.fileByteCount(path) == sqlite.byteCount)
        return (memory.byteCount, sqlite.byteCount)
    }

    @Test("A key keeps at most 16 variants, the most recently stored, in memory and in SQLite")
    func variantsPerKeyBound() throws {
        let bytes = try exerciseBothStores { try exerciseVariantBound($0) }
        #expect(bytes.memory == Self.variantBoundBytes && bytes.sqlite == Self.variantBoundBytes)
    }

    /// Stores two variants of one key and another key, removes one variant (and one never stored), and checks
    /// the rest stays and the byte count follows.
    func exerciseVariantRemoval(_ store: some HTTPCacheStore) throws {
        try store.store(Self.entry("a", bodyBytes: 10))
        try store.store(Self.entry("a", bodyBytes: 10, variant: "accept=x\n"))
        try store.store(Self.entry("b", bodyBytes: 10, variant: "accept=x\n"))
        try store.removeEntry(forKey: "a", variantKey: "accept=x\n")
        try store.removeEntry(forKey: "a", variantKey: "accept=y\n")
        #expect(try store.entries(forKey: "a").map(\.variantKey) == [""])
        #expect(try store.entries(forKey: "b").map(\.variantKey) == ["accept=x\n"])
    }

    @Test("Removing one variant keeps the key's others, in memory and in SQLite; a store without it removes them all")
    func variantRemoval() throws {
        let bytes = try exerciseBothStores { try exerciseVariantRemoval($0) }
        let kept = 2 * Self.entry("a", bodyBytes: 10).byteCount + "accept=x\n".utf8.count
        #expect(bytes.memory == kept && bytes.sqlite == kept)
        let minimal = MinimalStore()
        minimal.store(Self.entry("a", bodyBytes: 10))
        minimal.store(Self.entry("a", bodyBytes: 10, variant: "accept=x\n"))
        try minimal.removeEntry(forKey: "a", variantKey: "accept=x\n")
        #expect(minimal.entries(forKey: "a").isEmpty)
    }

    /// A store with only the three calls every store has.
    struct MinimalStore: HTTPCacheStore {
        let backing = InMemoryHTTPCacheStore()
        func entries(forKey key: String) -> [HTTPCacheEntry] { backing.entries(forKey: key) }
        func store(_ entry: HTTPCacheEntry) { backing.store(entry) }
        func removeEntries(forKey key: String) { backing.removeEntries(forKey: key) }
    }

    @Test("SQLite: the same budget and eviction, and entries survive reopening")
    func sqlite() throws {
        let path = Self.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            let store = try SQLiteHTTPCacheStore(path: path, byteBudget: 5_600)
            try exerciseLeastRecentlyUsedEviction(store, budget: 5_600)
            try store.store(Self.entry("kept", bodyBytes: 10))
        }
        let reopened = try SQLiteHTTPCacheStore(path: path, byteBudget: 5_600)
        let kept = try #require(try reopened.entries(forKey: "kept").first)
        #expect(kept == Self.entry("kept", bodyBytes: 10))
        #expect(reopened.byteCount <= 5_600 && reopened.byteCount > 0)
        #expect(reopened.quarantinedPath == nil)
    }

    @Test("SQLite: a corrupt file is quarantined and an empty cache rebuilt in its place")
    func corruptFile() throws {
        let path = Self.temporaryPath()
        try Data(repeating: 0x5A, count: 8_192).write(to: URL(fileURLWithPath: path))
        let store = try SQLiteHTTPCacheStore(path: path)
        let aside = try #require(store.quarantinedPath)
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: aside)
        }
        #expect(FileManager.default.fileExists(atPath: aside))
        try store.store(Self.entry("a", bodyBytes: 10))
        #expect(try store.entries(forKey: "a").count == 1)
    }

    @Test("SQLite: a corrupt file whose quarantine name is taken keeps the earlier one and takes the next free name")
    func corruptFileWithItsQuarantineNameTaken() throws {
        let path = Self.temporaryPath()
        let now = Int64(Date().timeIntervalSince1970)
        // An earlier quarantine in this second (or the next, should the second turn before the open).
        let earlier = [now, now + 1].map { "\(path).corrupt-\($0)" }
        for name in earlier { try Data("earlier".utf8).write(to: URL(fileURLWithPath: name)) }
        let garbage = Data(repeating: 0x5A, count: 8_192)
        try garbage.write(to: URL(fileURLWithPath: path))
        let store = try SQLiteHTTPCacheStore(path: path)
        let aside = store.quarantinedPath
        defer {
            for name in earlier + [path, aside ?? ""] + ["-wal", "-shm"].map({ path + $0 }) {
                try? FileManager.default.removeItem(atPath: name)
            }
        }
        #expect(aside.map { ["\(path).corrupt-\(now)-2", "\(path).corrupt-\(now + 1)-2"].contains($0) } == true)
        #expect(aside.flatMap { FileManager.default.contents(atPath: $0) } == garbage, "the corrupt file is kept")
        for name in earlier { #expect(FileManager.default.contents(atPath: name) == Data("earlier".utf8)) }
    }

    @Test(
        "SQLite: a full disk is disk-full, every entry stored before it stays, and nothing is quarantined",
        .enabled(if: SmallVolume.isAvailable, "needs root to mount a small tmpfs"))
    func fullDisk() throws {
        let volume = try SmallVolume(bytes: 512 << 10)
        defer { volume.unmount() }
        let path = volume.path("http.sqlite")
        // Room that the test gives back once the disk is full, so the cache can be opened again.
        let filler = volume.path("filler")
        try Data(count: 96 << 10).write(to: URL(fileURLWithPath: filler))
        var stored: [String] = []
        var failures: [HTTPCacheStoreError] = []
        do {
            let store = try SQLiteHTTPCacheStore(path: path)
            for index in 0..<200 where failures.count < 3 {
                do {
                    try store.store(Self.entry("k\(index)", bodyBytes: 6_000))
                    stored.append("k\(index)")
                } catch {
                    failures.append(error)
                }
            }
            #expect(!stored.isEmpty)
            #expect(failures.count == 3, "the disk must fill")
            for failure in failures { #expect(failure.reason == .diskFull, "\(failure)") }
            for key in stored { #expect(try store.entries(forKey: key).count == 1, "\(key)") }
            #expect(store.quarantinedPath == nil)
        }
        try FileManager.default.removeItem(atPath: filler)
        let reopened = try SQLiteHTTPCacheStore(path: path)
        #expect(reopened.quarantinedPath == nil)
        // Counted without reading (each read records a use, a write of its own), then the first and the last read.
        #expect(reopened.byteCount == stored.map { Self.entry($0, bodyBytes: 6_000).byteCount }.reduce(0, +))
        for key in [stored.first, stored.last].compactMap({ $0 }) {
            #expect(try reopened.entries(forKey: key).first?.response.body == Data(repeating: 7, count: 6_000))
        }
        try reopened.store(Self.entry("after", bodyBytes: 10))
        #expect(try reopened.entries(forKey: "after").count == 1)
    }

    @Test(
        "SQLite: opening a cache on a full disk throws disk-full, and the file is kept",
        .enabled(if: SmallVolume.isAvailable, "needs root to mount a small tmpfs"))
    func openingOnAFullDisk() throws {
        let volume = try SmallVolume(bytes: 256 << 10)
        defer { volume.unmount() }
        let path = volume.path("http.sqlite")
        do { try SQLiteHTTPCacheStore(path: path).store(Self.entry("a", bodyBytes: 1_000)) }
        let filler = volume.path("filler")
        #expect(FileManager.default.createFile(atPath: filler, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: filler))
        while (try? handle.write(contentsOf: Data(count: 4_096))) != nil {}
        try handle.close()
        #expect {
            _ = try SQLiteHTTPCacheStore(path: path)
        } throws: { error in
            (error as? HTTPCacheStoreError)?.reason == .diskFull
        }
        try FileManager.default.removeItem(atPath: filler)
        let reopened = try SQLiteHTTPCacheStore(path: path)
        #expect(reopened.quarantinedPath == nil)
        #expect(try reopened.entries(forKey: "a").count == 1)
    }

    @Test("SQLite: a healthy file that cannot be opened (its index refused) throws with the errno, and is kept")
    func fileThatCannotBeOpenedIsKept() throws {
        let path = Self.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        do { try SQLiteHTTPCacheStore(path: path).store(Self.entry("a", bodyBytes: 10)) }
        // SQLite opens the shared-memory index without following links: the open fails as on a file system that
        // refuses the index (permissions, no room), not for anything in the database file.
        try FileManager.default.createSymbolicLink(atPath: path + "-shm", withDestinationPath: path + ".elsewhere")
        #expect {
            _ = try SQLiteHTTPCacheStore(path: path)
        } throws: { error in
            (error as? HTTPCacheStoreError)?.reason == .unavailable && "\(error)".contains("errno")
        }
        try FileManager.default.removeItem(atPath: path + "-shm")
        let reopened = try SQLiteHTTPCacheStore(path: path)
        #expect(reopened.quarantinedPath == nil)
        #expect(try reopened.entries(forKey: "a").count == 1)
    }

    @Test("SQLite: a file another connection keeps locked fails the open after the busy timeout, and is kept")
    func fileLockedByAnotherConnection() throws {
        let path = Self.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        do { try SQLiteHTTPCacheStore(path: path).store(Self.entry("a", bodyBytes: 10)) }
        // Another program holds the file in exclusive locking mode: even readers wait for it.
        var holder: OpaquePointer?
        #expect(sqlite3_open(path, &holder) == SQLITE_OK)
        let lock = "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; UPDATE http_cache SET last_use = last_use;"
        #expect(sqlite3_exec(holder, lock, nil, nil, nil) == SQLITE_OK)
        let start = ContinuousClock.now
        #expect(throws: HTTPCacheStoreError.self) { _ = try SQLiteHTTPCacheStore(path: path) }
        // The busy timeout is 2 s; each attempt used to wait that long again, for 400 attempts (13 minutes).
        #expect(ContinuousClock.now - start < .seconds(30))
        sqlite3_close(holder)
        let reopened = try SQLiteHTTPCacheStore(path: path)
        #expect(reopened.quarantinedPath == nil)
        #expect(try reopened.entries(forKey: "a").count == 1)
    }

    @Test("SQLite: a cache file removed while open is started over at its path by the next write")
    func removedFile() throws {
        let path = Self.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let store = try SQLiteHTTPCacheStore(path: path)
        try store.store(Self.entry("a", bodyBytes: 10))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try store.store(Self.entry("b", bodyBytes: 10))
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(try store.entries(forKey: "a").isEmpty)
        let reopened = try SQLiteHTTPCacheStore(path: path)
        #expect(try reopened.entries(forKey: "b").count == 1)
    }

    /// The bytes the file at `path` holds, read through a connection of its own.
    static func fileByteCount(_ path: String) throws -> Int {
        var database: OpaquePointer?
        defer { sqlite3_close(database) }
        try #require(sqlite3_open(path, &database) == SQLITE_OK)
        var statement: OpaquePointer?
        defer { sqlite3_finalize(statement) }
        try #require(
            sqlite3_prepare_v2(database, "SELECT COALESCE(SUM(size), 0) FROM http_cache", -1, &statement, nil)
                == SQLITE_OK)
        try #require(sqlite3_step(statement) == SQLITE_ROW)
        return Int(sqlite3_column_int64(statement, 0))
    }

    @Test("SQLite: a log removed while open is replaced by the next write: another store opens the file and reads it")
    func removedLogIsReplacedByTheNextWrite() throws {
        let path = Self.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let store = try SQLiteHTTPCacheStore(path: path)
        try store.store(Self.entry("a", bodyBytes: 100))
        try FileManager.default.removeItem(atPath: path + "-wal")
        try store.store(Self.entry("b", bodyBytes: 100))
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        let other = try SQLiteHTTPCacheStore(path: path)
        #expect(other.quarantinedPath == nil)
        #expect(try other.entries(forKey: "a").count == 1)
        #expect(try other.entries(forKey: "b").count == 1)
        #expect(try store.entries(forKey: "a").count == 1)
    }

    @Test(
        "SQLite: an index (alone or with its log) removed while open is replaced by the next write, at its path",
        arguments: [["-shm"], ["-wal", "-shm"]])
    func removedIndexIsReplacedByTheNextWrite(removing suffixes: [String]) throws {
        let path = Self.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let store = try SQLiteHTTPCacheStore(path: path)
        try store.store(Self.entry("a", bodyBytes: 100))
        for suffix in suffixes { try FileManager.default.removeItem(atPath: path + suffix) }
        try store.store(Self.entry("b", bodyBytes: 100))
        // Another process opening the file now shares the index the store writes the log through: not a second one.
        #expect(FileManager.default.fileExists(atPath: path + "-shm"), "the store writes through an unlinked index")
        #expect(FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(try store.entries(forKey: "b").count == 1)
        try store.store(Self.entry("c", bodyBytes: 100))
        #expect(try Self.fileByteCount(path) == store.byteCount)
    }

    @Test("SQLite: two stores on one file keep its budget together and evict the entry least recently used by either")
    func twoStoresOnOneFile() throws {
        let path = Self.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        func entry(_ key: String) -> HTTPCacheEntry { Self.entry(key, bodyBytes: 1_000) }
        func bytes(_ keys: [String]) -> Int { keys.reduce(0) { $0 + entry($1).byteCount } }
        let budget = 5_600
        #expect(budget >= bytes(["k0", "k1", "k2"]) && budget < bytes(["a", "b", "c", "d"]))
        let first = try SQLiteHTTPCacheStore(path: path, byteBudget: budget)
        let second = try SQLiteHTTPCacheStore(path: path, byteBudget: budget)
        try first.store(entry("a"))
        try second.store(entry("b"))
        try first.store(entry("c"))
        #expect(try second.entries(forKey: "a").count == 1)  // a use through the other store
        try first.store(entry("d"))
        #expect(try Self.fileByteCount(path) == bytes(["a", "c", "d"]))
        #expect(try first.entries(forKey: "b").isEmpty)
        for key in ["a", "c", "d"] { #expect(try second.entries(forKey: key).count == 1, "\(key)") }
        for index in 0..<10 {
            try (index.isMultiple(of: 2) ? first : second).store(entry("k\(index)"))
            #expect(try Self.fileByteCount(path) <= budget, "after write \(index)")
        }
        let kept = bytes(["k7", "k8", "k9"])
        #expect(try Self.fileByteCount(path) == kept)
        #expect(first.byteCount == kept && second.byteCount == kept)
        for index in 0..<7 { #expect(try first.entries(forKey: "k\(index)").isEmpty, "k\(index)") }
        for index in 7..<10 { #expect(try second.entries(forKey: "k\(index)").count == 1, "k\(index)") }
        try second.removeEntries(forKey: "k9")
        try first.store(entry("e"))
        #expect(try Self.fileByteCount(path) == bytes(["k7", "k8", "e"]))
        #expect(try second.entries(forKey: "k7").count == 1)
    }

    @Test("SQLite: two stores writing to one file at the same moment wait for each other and keep the budget")
    func twoStoresWritingAtOnce() throws {
        let path = Self.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let budget = 5_600
        let stores = try (0..<2).map { _ in try SQLiteHTTPCacheStore(path: path, byteBudget: budget) }
        let failures = LockedState(initialState: [String]())
        let finished = DispatchSemaphore(value: 0)
        for (number, store) in stores.enumerated() {
            Thread {
                for index in 0..<100 {
                    do {
                        try store.store(Self.entry("s\(number)-\(index)", bodyBytes: 1_000))
                    } catch {
                        failures.withLock { $0.append("\(error)") }
                    }
                }
                finished.signal()
            }.start()
        }
        for _ in stores { try #require(finished.wait(timeout: .now() + 60) == .success, "the writers did not finish") }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(try Self.fileByteCount(path) <= budget)
        #expect(try Self.fileByteCount(path) == stores[0].byteCount)
    }

    @Test("SQLite: stores opening one new file at the same moment all share it: none fails or moves it aside")
    func storesOpeningOneFileAtOnce() throws {
        var outcomes: [String: Int] = [:]
        for _ in 0..<100 {
            let path = Self.temporaryPath()
            let results = LockedState(initialState: [String]())
            let group = DispatchGroup()
            for _ in 0..<4 {
                group.enter()
                Thread {
                    do {
                        let store = try SQLiteHTTPCacheStore(path: path)
                        try store.store(Self.entry("a", bodyBytes: 10))
                        results.withLock { $0.append(store.quarantinedPath.map { _ in "quarantined" } ?? "shared") }
                    } catch {
                        results.withLock { $0.append("failed: \(error)") }
                    }
                    group.leave()
                }.start()
            }
            try #require(group.wait(timeout: .now() + 60) == .success, "the stores did not open")
            for result in results.withLock({ $0 }) { outcomes[result, default: 0] += 1 }
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
            let name = URL(fileURLWithPath: path).lastPathComponent
            for file in try FileManager.default.contentsOfDirectory(atPath: directory) where file.hasPrefix(name) {
                try? FileManager.default.removeItem(atPath: directory + "/" + file)
            }
        }
        #expect(outcomes == ["shared": 400])
    }

    @Test("SQLite: a row whose body no longer matches its recorded length is dropped and read as absent")
    func damagedRow() throws {
        let path = Self.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let store = try SQLiteHTTPCacheStore(path: path)
        try store.store(Self.entry("a", bodyBytes: 100))
        try store.store(Self.entry("b", bodyBytes: 100))
        let before = store.byteCount
        var database: OpaquePointer?
        #expect(sqlite3_open(path, &database) == SQLITE_OK)
        let damage = "UPDATE http_cache SET body = x'00' WHERE key = 'a'"
        #expect(sqlite3_exec(database, damage, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(database)
        #expect(try store.entries(forKey: "a").isEmpty)
        #expect(try store.entries(forKey: "b").count == 1)
        #expect(store.byteCount < before)
    }
}
