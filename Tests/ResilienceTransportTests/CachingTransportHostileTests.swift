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

/// Hostile and unusual answers a production cache meets that the http-tests suite does not send.
@Suite("Caching transport: hostile answers")
struct CachingTransportHostileTests {
    static let url = "https://api.example/jobs"
    let context = ResilienceContext(key: "jobs")

    func get(_ cache: CachingTransport) async throws -> HTTPResponse {
        try await cache.send(HTTPRequest(url: URL(string: Self.url)!), context: context)
    }

    @Test("A 304 that adds no-store or Vary: * answers, and removes the stored response: no stale answer serves it")
    func notModifiedThatForbidsStoring() async throws {
        for forbidding: HTTPHeaders in [
            ["Cache-Control": "no-store, max-age=600"], ["Cache-Control": "max-age=600", "Vary": "Accept, *"],
        ] {
            let network = ScriptedHTTPTransport()
            network.script(
                Self.url,
                [
                    .status(
                        200, headers: ["Cache-Control": "max-age=10, stale-if-error=3600", "ETag": "\"a\""],
                        body: "v1"),
                    .status(304, headers: forbidding),
                    .status(503),
                ])
            let clock = TestWallClock()
            let store = InMemoryHTTPCacheStore()
            let cache = CachingTransport(wrapping: network, store: store, wallClock: clock.read)
            _ = try await get(cache)
            clock.advance(by: 20)
            let validated = try await get(cache)
            #expect(validated.status == 200)
            #expect(String(decoding: validated.body, as: UTF8.self) == "v1")
            #expect(store.entries(forKey: Self.url).isEmpty)
            // The origin fails next: the response it said not to keep is not served stale.
            let failed = try await get(cache)
            #expect(failed.status == 503)
            #expect(network.requests.count == 3)
            #expect(network.requests.last?.headers["If-None-Match"] == nil)
        }
    }

    @Test("A 304 that takes the fields past the cache's header limit answers, and the stored response stays as it was")
    func notModifiedPastTheHeaderLimit() async throws {
        let network = ScriptedHTTPTransport()
        let large = String(repeating: "x", count: 2_000)
        network.script(
            Self.url,
            [
                .status(200, headers: ["Cache-Control": "max-age=10", "ETag": "\"a\""], body: "v1"),
                .status(304, headers: ["Cache-Control": "max-age=600", "X-Large": large]),
                .status(304, headers: ["Cache-Control": "max-age=600"]),
            ])
        let clock = TestWallClock()
        let store = InMemoryHTTPCacheStore()
        let policy = HTTPCachePolicy(maximumStoredHeaderBytes: 1_024)
        let cache = CachingTransport(wrapping: network, store: store, policy: policy, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 20)
        let validated = try await get(cache)
        #expect(String(decoding: validated.body, as: UTF8.self) == "v1")
        #expect(validated.headers["X-Large"]?.count == large.count)
        #expect(store.entries(forKey: Self.url).first?.response.headers["Cache-Control"] == "max-age=10")
        clock.advance(by: 20)
        let again = try await get(cache)
        #expect(network.requests.count == 3)
        #expect(network.requests.last?.headers["If-None-Match"] == "\"a\"")
        #expect(String(decoding: again.body, as: UTF8.self) == "v1")
        let stored = try #require(store.entries(forKey: Self.url).first)
        #expect(stored.response.headers["Cache-Control"] == "max-age=600")
    }

    @Test("A 304 with thousands of fields is merged in linear time")
    func notModifiedWithManyFields() async throws {
        var many = HTTPHeaders()
        for index in 0..<10_000 { many.add(name: "X-Field-\(100_000 + index)", value: "v") }
        many.add(name: "Cache-Control", value: "max-age=600")
        var stored: HTTPHeaders = ["Cache-Control": "max-age=10", "ETag": "\"a\""]
        for index in 0..<2_000 { stored.add(name: "X-Stored-\(100_000 + index)", value: "v") }
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                .status(200, headers: stored, body: "v1"),
                ScriptedHTTPTransport.Answer(result: .success(HTTPResponse(status: 304, headers: many))),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(
            wrapping: network, policy: HTTPCachePolicy(maximumStoredHeaderBytes: 1 << 20), wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 20)
        let started = ContinuousClock.now
        let validated = try await get(cache)
        let elapsed = ContinuousClock.now - started
        #expect(validated.headers.fields.filter { $0.name.hasPrefix("X-") }.count == 12_000)
        #expect(validated.headers["Cache-Control"] == "max-age=600")
        #expect(elapsed < .seconds(10), "merging took \(elapsed)")
    }

    @Test("A 304 without Date is dated when it arrives: a new Expires counts from then, not from the stored Date")
    func notModifiedWithoutDate() async throws {
        let clock = TestWallClock()
        let start = clock.date
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                .status(
                    200,
                    headers: [
                        "Date": HTTPDate.format(start), "Expires": HTTPDate.format(start.addingTimeInterval(60)),
                        "ETag": "\"a\"",
                    ], body: "v1"),
                .status(304, headers: ["Expires": HTTPDate.format(start.addingTimeInterval(3_660))]),
            ])
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 3_600)
        let validated = try await get(cache)
        let status = try #require(HTTPCacheStatus(headers: validated.headers, cacheName: CachingTransport.cacheName))
        #expect(status.timeToLive == 60)
        clock.advance(by: 120)
        let expired = try await get(cache)
        #expect(network.requests.count == 3)
        #expect(expired.headers["Age"] == "0")
    }

    @Test("stale-while-revalidate: many hits in the window send one background revalidation, not one each")
    func staleWhileRevalidateOnce() async throws {
        let manual = ManualClock()
        let network = ScriptedHTTPTransport(clock: .manual(manual))
        let window = "max-age=10, stale-while-revalidate=60"
        network.script(
            Self.url,
            [
                .status(200, headers: ["Cache-Control": window], body: "v1"),
                .status(200, headers: ["Cache-Control": window], body: "v2", after: .seconds(1)),
                .status(200, headers: ["Cache-Control": window], body: "v3", after: .seconds(1)),
            ])
        let clock = TestWallClock()
        let store = InMemoryHTTPCacheStore()
        let cache = CachingTransport(wrapping: network, store: store, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 20)
        for _ in 0..<20 {
            let stale = try await get(cache)
            #expect(String(decoding: stale.body, as: UTF8.self) == "v1")
        }
        #expect(await yielding { manual.sleeperCount >= 1 })
        await yielding(10_000) { false }  // let any further background task reach the network
        #expect(network.requests.count == 2)
        manual.advance(by: .seconds(1))
        #expect(
            await yielding { store.entries(forKey: Self.url).first?.response.body == Data("v2".utf8) })
        // The revalidation that ended no longer counts as in flight: the next stale window revalidates again.
        // The entry is stored before the ending revalidation leaves the in-flight set, so a hit in between is
        // answered stale without a second one; a later hit must start it.
        clock.advance(by: 20)
        var hits = 0
        while network.requests.count < 3, hits < 1_000 {
            let stale = try await get(cache)
            #expect(String(decoding: stale.body, as: UTF8.self) == "v2")
            hits += 1
            await Task.yield()
        }
        #expect(network.requests.count == 3)
        // The answer waits on the manual clock: advance it once the revalidation sleeps, not before.
        #expect(await yielding { manual.sleeperCount >= 1 })
        manual.advance(by: .seconds(1))
        #expect(
            await yielding { store.entries(forKey: Self.url).first?.response.body == Data("v3".utf8) })
    }

    @Test("only-if-cached answered within stale-while-revalidate sends nothing to the network")
    func onlyIfCachedNeverRevalidates() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                .status(200, headers: ["Cache-Control": "max-age=10, stale-while-revalidate=60"], body: "v1"),
                .status(200, headers: ["Cache-Control": "max-age=100"], body: "v2"),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 20)
        let offline = try await cache.send(
            HTTPRequest(url: URL(string: Self.url)!, headers: ["Cache-Control": "only-if-cached"]), context: context)
        #expect(String(decoding: offline.body, as: UTF8.self) == "v1")
        await yielding(10_000) { false }  // time for a background revalidation to reach the network
        #expect(network.requests.count == 1)
    }
}

@Suite("HTTP cache stores: hostile files and fields")
struct HTTPCacheStoreHostileTests {
    @Test("SQLite: eviction removes the oldest row even when its key cannot be read back as written")
    func evictionOfUnreadableKey() throws {
        let path = HTTPCacheStoreTests.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        do {
            let store = try SQLiteHTTPCacheStore(path: path, byteBudget: 5_600)
            try store.store(HTTPCacheStoreTests.entry("a", bodyBytes: 1_000))
            try store.store(HTTPCacheStoreTests.entry("b", bodyBytes: 1_000))
        }
        var database: OpaquePointer?
        #expect(sqlite3_open(path, &database) == SQLITE_OK)
        // A key that is not UTF-8 (another writer, a flipped bit quick_check does not see).
        let damage = "UPDATE http_cache SET key = CAST(x'ff61' AS TEXT) WHERE key = 'a'"
        #expect(sqlite3_exec(database, damage, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(database)
        let store = try SQLiteHTTPCacheStore(path: path, byteBudget: 5_600)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            try? store.store(HTTPCacheStoreTests.entry("c", bodyBytes: 1_000))
            try? store.store(HTTPCacheStoreTests.entry("d", bodyBytes: 1_000))
            finished.signal()
        }.start()
        try #require(finished.wait(timeout: .now() + 20) == .success, "eviction did not finish")
        #expect(store.byteCount <= 5_600)
        #expect(try store.entries(forKey: "d").count == 1)
        #expect(try store.entries(forKey: "b").count == 1)
    }

    @Test("SQLite: a NUL in a header field reads back as written, never as other fields")
    func nulInHeaderField() throws {
        let path = HTTPCacheStoreTests.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        var entry = HTTPCacheStoreTests.entry("a", bodyBytes: 10)
        entry.response.headers.add(name: "X-Note", value: "a\u{0}Set-Cookie\u{0}session=evil")
        let store = try SQLiteHTTPCacheStore(path: path)
        try store.store(entry)
        let read = try store.entries(forKey: "a")
        #expect(read.first?.response.headers.contains("Set-Cookie") == false)
        #expect(read == [entry])
        var named = HTTPCacheStoreTests.entry("b", bodyBytes: 10)
        named.response.headers.add(name: "X-\u{0}Name", value: "\u{0}")
        try store.store(named)
        #expect(try store.entries(forKey: "b") == [named])
    }

    @Test("SQLite: a NUL in a key or a variant key keeps it apart from every other key, never cut at the NUL")
    func nulInKey() throws {
        let path = HTTPCacheStoreTests.temporaryPath()
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        let store = try SQLiteHTTPCacheStore(path: path)
        let first = HTTPCacheStoreTests.entry("k\u{0}one", bodyBytes: 1)
        let second = HTTPCacheStoreTests.entry("k\u{0}two", bodyBytes: 2)
        let plain = HTTPCacheStoreTests.entry("k", bodyBytes: 3)
        let variant = HTTPCacheStoreTests.entry("v", bodyBytes: 4, variant: "accept=a\u{0}b\n")
        for entry in [first, second, plain, variant] { try store.store(entry) }
        #expect(try store.entries(forKey: "k\u{0}one") == [first])
        #expect(try store.entries(forKey: "k\u{0}two") == [second])
        #expect(try store.entries(forKey: "k") == [plain])
        #expect(try store.entries(forKey: "v") == [variant])
        try store.removeEntry(forKey: "v", variantKey: "accept=a")
        #expect(try store.entries(forKey: "v") == [variant])
        try store.removeEntries(forKey: "k\u{0}one")
        #expect(try store.entries(forKey: "k\u{0}one").isEmpty)
        #expect(try store.entries(forKey: "k\u{0}two") == [second])
        #expect(try store.entries(forKey: "k") == [plain])
        #expect(try HTTPCacheStoreTests.fileByteCount(path) == store.byteCount)
    }

    @Test("SQLite: a file whose table has another schema is quarantined, not kept failing every write")
    func anotherSchema() throws {
        let path = HTTPCacheStoreTests.temporaryPath()
        var database: OpaquePointer?
        #expect(sqlite3_open(path, &database) == SQLITE_OK)
        // What a later version might write: one more column, required.
        let newer = """
            CREATE TABLE http_cache(
                key TEXT NOT NULL, variant TEXT NOT NULL, status INTEGER NOT NULL, url TEXT,
                headers BLOB NOT NULL, body BLOB NOT NULL, body_length INTEGER NOT NULL,
                request_time REAL NOT NULL, response_time REAL NOT NULL, lifetime REAL NOT NULL,
                initial_age REAL NOT NULL, size INTEGER NOT NULL, last_use INTEGER NOT NULL,
                encoding TEXT NOT NULL, PRIMARY KEY(key, variant));
            """
        #expect(sqlite3_exec(database, newer, nil, nil, nil) == SQLITE_OK)
        sqlite3_close(database)
        let store = try SQLiteHTTPCacheStore(path: path)
        let aside = try #require(store.quarantinedPath)
        defer {
            for file in [path, aside] {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
            }
        }
        try store.store(HTTPCacheStoreTests.entry("a", bodyBytes: 10))
        #expect(try store.entries(forKey: "a").count == 1)
        let reopened = try SQLiteHTTPCacheStore(path: path)
        #expect(reopened.quarantinedPath == nil)
        #expect(try reopened.entries(forKey: "a").count == 1)
    }

    @Test("In memory: a budget filled with empty responses holds what it costs, not 13 times its size")
    func manySmallEntries() {
        let budget = 1 << 20
        let store = InMemoryHTTPCacheStore(byteBudget: budget)
        let policy = HTTPCachePolicy()
        for index in 0..<20_000 {
            let request = HTTPRequest(url: URL(string: "https://api.example/items/\(index)")!)
            let response = HTTPResponse(
                status: 200, headers: ["Cache-Control": "max-age=60"], body: Data(), url: request.url)
            if let entry = policy.entry(for: response, to: request, requestTime: Date(), responseTime: Date()) {
                store.store(entry)
            }
        }
        // Each such entry takes about 800 bytes of memory (measured: 48 MB for 60,000), so 1 MiB holds about 1,300.
        #expect(store.count <= budget / 700)
        #expect(store.byteCount <= budget)
    }
}
