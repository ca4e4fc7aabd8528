import Foundation
import ResilienceCore
import ResilienceTesting
import ResilienceTransport
import Testing

/// The `Cache-Status` member (RFC 9211) the cache writes says what it did on each path: `hit` only when the
/// origin was not asked, `fwd` with the reason and `fwd-status` whenever it was, `stored` when the answer was
/// stored.
@Suite("Caching transport: Cache-Status")
struct CachingTransportStatusTests {
    static let url = "https://api.example/jobs"
    let context = ResilienceContext(key: "jobs")

    func send(
        _ cache: CachingTransport, method: HTTPMethod = .get, headers: HTTPHeaders = [:]
    ) async throws -> (response: HTTPResponse, status: HTTPCacheStatus) {
        let response = try await cache.send(
            HTTPRequest(method: method, url: URL(string: Self.url)!, headers: headers), context: context)
        // An answer without the cache's member reads as a status with nothing set, which the checks reject.
        let status =
            HTTPCacheStatus(headers: response.headers, cacheName: CachingTransport.cacheName)
            ?? HTTPCacheStatus(cacheName: "none", isHit: false)
        return (response, status)
    }

    @Test("A miss says uri-miss (vary-miss when only Vary differs), the origin's status, and whether it was stored")
    func misses() async throws {
        let network = ScriptedHTTPTransport()
        let varying: HTTPHeaders = ["Cache-Control": "max-age=60", "Vary": "Accept-Language"]
        network.script(
            Self.url,
            [
                .status(200, headers: varying, body: "en"), .status(200, headers: varying, body: "de"),
                .status(200, headers: ["Cache-Control": "no-store"], body: "private"),
            ])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        let first = try await send(cache, headers: ["Accept-Language": "en"]).status
        #expect(!first.isHit && first.forwardReason == "uri-miss" && first.forwardStatus == 200 && first.stored)
        let other = try await send(cache, headers: ["Accept-Language": "de"]).status
        #expect(!other.isHit && other.forwardReason == "vary-miss" && other.forwardStatus == 200 && other.stored)
        let hit = try await send(cache, headers: ["Accept-Language": "de"]).status
        #expect(hit.isHit && hit.forwardReason == nil && hit.forwardStatus == nil && hit.timeToLive == 60)
        // Fresh, but the request's no-cache forbids using it: forwarded for the request's sake.
        let refused = try await send(cache, headers: ["Accept-Language": "de", "Cache-Control": "no-cache"]).status
        #expect(!refused.isHit && refused.forwardReason == "request" && refused.forwardStatus == 200)
        #expect(!refused.stored)
        #expect(network.requests.count == 3)
    }

    @Test("A 304 revalidation is forwarded, not a hit: fwd=stale; fwd-status=304, stored, with the new ttl")
    func revalidated() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                .status(200, headers: ["Cache-Control": "max-age=10", "ETag": "\"a\""], body: "v1"),
                .status(304, headers: ["Cache-Control": "max-age=100", "ETag": "\"a\""]),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await send(cache)
        clock.advance(by: 20)
        let (response, status) = try await send(cache)
        #expect(String(decoding: response.body, as: UTF8.self) == "v1")
        #expect(!status.isHit && status.forwardReason == "stale" && status.forwardStatus == 304)
        #expect(status.stored && status.timeToLive == 100 && !status.isStale)
    }

    @Test("A stale answer on an error says it went forward, what came back, and how stale the answer is")
    func staleOnError() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                .status(200, headers: ["Cache-Control": "max-age=60, stale-if-error=600"], body: "v1"),
                .status(503), .failure(URLError(.notConnectedToInternet)),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await send(cache)
        clock.advance(by: 100)
        let afterStatus = try await send(cache).status
        #expect(!afterStatus.isHit && afterStatus.forwardReason == "stale" && afterStatus.forwardStatus == 503)
        #expect(afterStatus.isStale && afterStatus.timeToLive == -40 && afterStatus.detail == "stale-if-error")
        let afterFailure = try await send(cache).status
        #expect(!afterFailure.isHit && afterFailure.forwardReason == "stale" && afterFailure.forwardStatus == nil)
        #expect(afterFailure.isStale && afterFailure.detail == "stale-if-error")
    }

    @Test("stale-while-revalidate is a stale hit; only-if-cached with nothing stored is a 504 that went nowhere")
    func staleWhileRevalidateAndOnlyIfCached() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                .status(200, headers: ["Cache-Control": "max-age=10, stale-while-revalidate=60"], body: "v1"),
                .status(200, headers: ["Cache-Control": "max-age=10"]),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await send(cache)
        clock.advance(by: 20)
        let served = try await send(cache).status
        #expect(served.isHit && served.isStale && served.detail == "stale-while-revalidate")
        let onlyIfCached = try await cache.send(
            HTTPRequest(url: URL(string: "https://api.example/other")!, headers: ["Cache-Control": "only-if-cached"]),
            context: context)
        let unanswered = try #require(
            HTTPCacheStatus(headers: onlyIfCached.headers, cacheName: CachingTransport.cacheName))
        #expect(onlyIfCached.status == 504 && !unanswered.isHit && unanswered.forwardReason == nil)
    }

    @Test("A HEAD's 200 that updates the stored response, a completed part, an unsafe method and a bypass say so")
    func otherPaths() async throws {
        let network = ScriptedHTTPTransport()
        let parts = "https://api.example/parts"
        network.script(
            Self.url,
            [
                .status(200, headers: ["Cache-Control": "max-age=10", "ETag": "\"a\""], body: "v1"),
                .status(200, headers: ["Cache-Control": "max-age=100", "ETag": "\"a\""]),
                .status(201), .status(200, body: "fresh"), .status(200, body: "not stored"),
            ])
        network.script(
            parts,
            [
                .status(
                    206, headers: ["Cache-Control": "max-age=60", "Content-Range": "bytes 0-4/10", "ETag": "\"p\""],
                    body: "01234"),
                .status(
                    206, headers: ["Cache-Control": "max-age=60", "Content-Range": "bytes 5-9/10", "ETag": "\"p\""],
                    body: "56789"),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await send(cache)
        clock.advance(by: 20)
        let head = try await send(cache, method: .head).status
        #expect(!head.isHit && head.forwardReason == "stale" && head.forwardStatus == 200 && head.stored)
        #expect(head.timeToLive == 100)
        let post = try await send(cache, method: .post).status
        #expect(!post.isHit && post.forwardReason == "method" && post.forwardStatus == 201)
        let tooMany = (0..<100).map { "d\($0)" }.joined(separator: ", ")
        let bypassed = try await send(cache, headers: ["Cache-Control": tooMany]).status
        #expect(!bypassed.isHit && bypassed.forwardReason == "bypass" && bypassed.forwardStatus == 200)
        let unstored = try await send(cache, headers: ["Cache-Control": "no-store"]).status
        #expect(!unstored.isHit && unstored.forwardReason == "request" && !unstored.stored)
        func part(_ headers: HTTPHeaders) async throws -> (HTTPResponse, HTTPCacheStatus) {
            let response = try await cache.send(
                HTTPRequest(url: URL(string: parts)!, headers: headers), context: context)
            let status = HTTPCacheStatus(headers: response.headers, cacheName: CachingTransport.cacheName)
            return (response, status ?? HTTPCacheStatus(cacheName: "none", isHit: false))
        }
        let first = try await part(["Range": "bytes=0-4"]).1
        #expect(first.forwardReason == "uri-miss" && first.forwardStatus == 206 && first.stored)
        let (whole, completed) = try await part([:])
        #expect(whole.status == 200 && String(decoding: whole.body, as: UTF8.self) == "0123456789")
        #expect(!completed.isHit && completed.forwardReason == "partial" && completed.forwardStatus == 206)
        #expect(completed.stored)
    }
}
