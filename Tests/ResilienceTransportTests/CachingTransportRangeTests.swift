import Foundation
import ResilienceCore
import ResilienceTesting
import ResilienceTransport
import Testing

/// Range requests and partial content in ``CachingTransport`` (RFC 9110 §14, RFC 9111 §3.3–3.4).
@Suite("Caching transport: ranges and partial content")
struct CachingTransportRangeTests {
    static let url = "https://api.example/file"
    let context = ResilienceContext(key: "file")

    func get(_ cache: CachingTransport, headers: HTTPHeaders = [:]) async throws -> HTTPResponse {
        try await cache.send(HTTPRequest(url: URL(string: Self.url)!, headers: headers), context: context)
    }

    static func part(_ body: String, range: String, etag: String?) -> ScriptedHTTPTransport.Answer {
        var headers: HTTPHeaders = ["Cache-Control": "max-age=3600", "Content-Range": range]
        if let etag { headers["ETag"] = etag }
        return .status(206, headers: headers, body: body)
    }

    static func text(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    @Test("A stored 200 answers one byte range as a 206 with its Content-Range; other ranges get the whole")
    func rangeFromCompleteResponse() async throws {
        let network = ScriptedHTTPTransport()
        network.script(Self.url, [.status(200, headers: ["Cache-Control": "max-age=3600"], body: "0123456789")])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        _ = try await get(cache)
        let cases: [(range: String, status: Int, body: String, contentRange: String?)] = [
            ("bytes=2-4", 206, "234", "bytes 2-4/10"),
            ("bytes=7-", 206, "789", "bytes 7-9/10"),
            ("bytes=-3", 206, "789", "bytes 7-9/10"),
            ("bytes=8-100", 206, "89", "bytes 8-9/10"),
            ("bytes=0-1,4-5", 200, "0123456789", nil),  // several ranges: the whole, as the RFC allows
            ("bytes=20-", 200, "0123456789", nil),  // not satisfiable: the whole
            ("bytes=5-2", 200, "0123456789", nil),  // invalid: ignored
            ("bytes=99999999999999999999-", 200, "0123456789", nil),  // too many digits: ignored
            ("items=0-1", 200, "0123456789", nil),
        ]
        for entry in cases {
            let response = try await get(cache, headers: ["Range": entry.range])
            #expect(response.status == entry.status, "\(entry.range)")
            #expect(Self.text(response) == entry.body, "\(entry.range)")
            #expect(response.headers["Content-Range"] == entry.contentRange, "\(entry.range)")
        }
        #expect(network.requests.count == 1)
    }

    @Test("If-Range answers a range only when it names the stored strong ETag")
    func ifRange() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url, [.status(200, headers: ["Cache-Control": "max-age=3600", "ETag": "\"v1\""], body: "0123456789")])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        _ = try await get(cache)
        let matching = try await get(cache, headers: ["Range": "bytes=0-1", "If-Range": "\"v1\""])
        #expect(matching.status == 206 && Self.text(matching) == "01")
        let other = try await get(cache, headers: ["Range": "bytes=0-1", "If-Range": "\"v0\""])
        #expect(other.status == 200 && Self.text(other) == "0123456789")
    }

    @Test("A stored part answers ranges inside it, and never a request for the whole representation")
    func partialNeverServedAsWhole() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.part("01234", range: "bytes 0-4/10", etag: nil),
                // The completion request's answer: a part without a validator cannot be combined ...
                Self.part("56789", range: "bytes 5-9/10", etag: nil),
                // ... so the whole is fetched.
                .status(200, headers: ["Cache-Control": "max-age=3600"], body: "0123456789"),
            ])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        let first = try await get(cache, headers: ["Range": "bytes=0-4"])
        #expect(first.status == 206)
        let inside = try await get(cache, headers: ["Range": "bytes=1-3"])
        #expect(inside.status == 206 && Self.text(inside) == "123" && inside.headers["Content-Range"] == "bytes 1-3/10")
        #expect(network.requests.count == 1)
        let whole = try await get(cache)
        #expect(whole.status == 200 && Self.text(whole) == "0123456789")
        #expect(network.requests.count == 3)
        #expect(network.requests[1].headers["Range"] == "bytes=5-")
        #expect(network.requests[2].headers["Range"] == nil)
    }

    @Test("A 416 to the completion request (the representation shrank) makes the cache fetch the whole")
    func completionNotSatisfiable() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.part("01234", range: "bytes 0-4/10", etag: nil),
                .status(416, headers: ["Content-Range": "bytes */4"]),
                .status(200, headers: ["Cache-Control": "max-age=3600"], body: "0123"),
            ])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        _ = try await get(cache, headers: ["Range": "bytes=0-4"])
        let whole = try await get(cache)
        #expect(whole.status == 200 && Self.text(whole) == "0123")
        #expect(network.requests.count == 3 && network.requests[2].headers["Range"] == nil)
    }

    @Test("Two parts with the same strong ETag and length combine into the whole, which is then stored")
    func combining() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.part("56789", range: "bytes 5-9/10", etag: "\"v1\""),
                Self.part("01234", range: "bytes 0-4/10", etag: "\"v1\""),
            ])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        _ = try await get(cache, headers: ["Range": "bytes=-5"])
        let whole = try await get(cache)
        #expect(whole.status == 200 && Self.text(whole) == "0123456789")
        #expect(whole.headers["Content-Range"] == nil)
        #expect(network.requests[1].headers["Range"] == "bytes=0-4")
        #expect(network.requests[1].headers["If-Range"] == "\"v1\"")
        let again = try await get(cache)
        #expect(Self.text(again) == "0123456789")
        #expect(network.requests.count == 2)
    }

    @Test("Parts of different representations (other ETag) are not combined: the whole is fetched")
    func mismatchedValidators() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.part("01234", range: "bytes 0-4/10", etag: "\"v1\""),
                Self.part("FGHIJ", range: "bytes 5-9/10", etag: "\"v2\""),
                .status(200, headers: ["Cache-Control": "max-age=3600", "ETag": "\"v2\""], body: "ABCDEFGHIJ"),
            ])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        _ = try await get(cache, headers: ["Range": "bytes=0-4"])
        let whole = try await get(cache)
        #expect(Self.text(whole) == "ABCDEFGHIJ")
        #expect(network.requests.count == 3)
    }

    @Test("A 206 whose body does not match its Content-Range, or that answers no Range request, is not stored")
    func inconsistentPartsRefused() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                Self.part("01234", range: "bytes 4-9/10", etag: nil),  // 6 bytes named, 5 sent
                Self.part("01234", range: "bytes 4-9/10", etag: nil),
                Self.part("012345", range: "bytes 4-9/10", etag: nil),  // no Range was asked for
                Self.part("012345", range: "bytes 4-9/10", etag: nil),
            ])
        let cache = CachingTransport(wrapping: network, wallClock: TestWallClock().read)
        _ = try await get(cache, headers: ["Range": "bytes=-6"])
        _ = try await get(cache, headers: ["Range": "bytes=-6"])
        #expect(network.requests.count == 2)
        _ = try await get(cache)
        _ = try await get(cache)
        #expect(network.requests.count == 4)
    }

    @Test("A part never replaces the stored whole representation it belongs to")
    func partDoesNotReplaceWhole() async throws {
        let network = ScriptedHTTPTransport()
        network.script(
            Self.url,
            [
                .status(200, headers: ["Cache-Control": "max-age=0", "ETag": "\"v1\""], body: "0123456789"),
                Self.part("01", range: "bytes 0-1/10", etag: "\"v1\""),
            ])
        let clock = TestWallClock()
        let cache = CachingTransport(wrapping: network, wallClock: clock.read)
        _ = try await get(cache)
        clock.advance(by: 5)
        let part = try await get(cache, headers: ["Range": "bytes=0-1"])
        #expect(part.status == 206 && Self.text(part) == "01")
        let stored = try #require(try cache.store.entries(forKey: Self.url).first)
        #expect(stored.response.status == 200 && stored.response.body.count == 10)
    }
}
