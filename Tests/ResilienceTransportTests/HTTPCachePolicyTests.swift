import Foundation
import ResilienceCore
import ResilienceTransport
import Testing

@Suite("HTTP cache policy")
struct HTTPCachePolicyTests {
    static let url = URL(string: "https://api.example/jobs?page=1#top")!
    static let now = Date(timeIntervalSince1970: 1_795_000_000)
    let policy = HTTPCachePolicy()

    static func date(_ offset: Double) -> String { HTTPDate.format(now.addingTimeInterval(offset)) }

    func entry(
        _ headers: HTTPHeaders, status: Int = 200, request: HTTPRequest = HTTPRequest(url: url)
    ) throws
        -> HTTPCacheEntry
    {
        try #require(
            policy.entry(
                for: HTTPResponse(status: status, headers: headers, body: Data("body".utf8)), to: request,
                requestTime: Self.now, responseTime: Self.now))
    }

    @Test("Cache-Control parsing: quoted arguments, first occurrence wins, junk skipped, bounded")
    func cacheControlParsing() throws {
        let directives = try CacheControl(parsing: #"Max-Age="60", max-age=5, no-cache="Set-Cookie, X", @@, private"#)
        #expect(directives.maxAge == 60)
        #expect(directives.directive("no-cache")?.argument == "Set-Cookie, X")
        #expect(directives.isPrivate)
        #expect(try CacheControl(parsing: "max-age=-1").maxAge == 0)
        #expect(try CacheControl(parsing: "max-age=99999999999999999999").maxAge == 2_147_483_648)
        #expect(try CacheControl(parsing: "max-stale").maxStale == 2_147_483_648)
        #expect(throws: CacheControlError(.fieldTooLong)) {
            try CacheControl(parsing: "max-age=1, " + String(repeating: "x", count: 1 << 20))
        }
        #expect(throws: CacheControlError(.tooManyDirectives)) {
            try CacheControl(parsing: (0..<100).map { "d\($0)" }.joined(separator: ","))
        }
    }

    @Test("Cache-Control parsing: whitespace around = makes a member that is not the directive, and it is skipped")
    func cacheControlWhitespaceAroundEquals() throws {
        for value in ["max-age =60, private", "max-age= 60, private", "max-age = 60, private", "max-age\t=60, private"]
        {
            let directives = try CacheControl(parsing: value)
            #expect(directives.directive("max-age") == nil, "\(value)")
            #expect(directives.isPrivate, "\(value)")
        }
        #expect(try CacheControl(parsing: " max-age=60 ,private ").maxAge == 60)
        #expect(try entry(["Cache-Control": "max-age =3600"]).freshnessLifetime == 0)
    }

    @Test("Freshness lifetime: max-age, then Expires − Date, then 10 % of the Last-Modified age; s-maxage ignored")
    func freshnessLifetime() throws {
        #expect(try entry(["Cache-Control": "max-age=60, s-maxage=600"]).freshnessLifetime == 60)
        #expect(try entry(["Date": Self.date(0), "Expires": Self.date(120)]).freshnessLifetime == 120)
        #expect(try entry(["Date": Self.date(0), "Expires": "0"]).freshnessLifetime == 0)
        #expect(try entry(["Date": Self.date(0), "Last-Modified": Self.date(-36_000)]).freshnessLifetime == 3_600)
        #expect(
            policy.entry(
                for: HTTPResponse(status: 302, headers: ["Last-Modified": Self.date(-36_000)]),
                to: HTTPRequest(url: Self.url), requestTime: Self.now, responseTime: Self.now) == nil)
        #expect(try entry(["Cache-Control": "max-age=60"], status: 302).freshnessLifetime == 60)
    }

    @Test("Age: the Age field plus the response delay, or the apparent age from Date")
    func age() throws {
        let aged = try #require(
            policy.entry(
                for: HTTPResponse(status: 200, headers: ["Cache-Control": "max-age=600", "Age": "100"]),
                to: HTTPRequest(url: Self.url), requestTime: Self.now, responseTime: Self.now.addingTimeInterval(2)))
        #expect(aged.initialAge == 102)
        #expect(aged.age(at: Self.now.addingTimeInterval(12)) == 112)
        let dated = try entry(["Cache-Control": "max-age=600", "Date": Self.date(-30)])
        #expect(dated.initialAge == 30)
        #expect(try entry(["Cache-Control": "max-age=600", "Age": "-5"]).initialAge == 0)
    }

    @Test("Storing: no-store never, private yes (a private cache), 206 and POST never, the key drops the fragment")
    func storing() throws {
        let request = HTTPRequest(url: Self.url)
        func storable(_ headers: HTTPHeaders, status: Int = 200, request: HTTPRequest = request) -> Bool {
            policy.isStorable(HTTPResponse(status: status, headers: headers), for: request)
        }
        #expect(!storable(["Cache-Control": "no-store, max-age=60"]))
        #expect(storable(["Cache-Control": "private, max-age=60"]))
        #expect(!storable(["Cache-Control": "max-age=60"], status: 206))
        #expect(!storable(["Cache-Control": "max-age=60"], request: HTTPRequest(method: .post, url: Self.url)))
        #expect(
            !storable(
                ["Cache-Control": "max-age=60"],
                request: HTTPRequest(url: Self.url, headers: ["Cache-Control": "no-store"])))
        #expect(!storable(["Cache-Control": "max-age=60", "Vary": "*"]))
        #expect(!storable([:], status: 500))
        #expect(storable(["Cache-Control": "max-age=60, must-understand"]))
        #expect(!storable(["Cache-Control": "max-age=60, must-understand"], status: 299))
        #expect(try entry(["Cache-Control": "max-age=60"]).key == "https://api.example/jobs?page=1")
    }

    @Test("Hostile input is ignored with bounded work: a 1 MB Cache-Control, 100,000 Vary names")
    func hostileInput() {
        let request = HTTPRequest(url: Self.url)
        let hugeDirective = HTTPResponse(
            status: 200, headers: ["Cache-Control": "max-age=60, " + String(repeating: "a", count: 1 << 20)])
        #expect(!policy.isStorable(hugeDirective, for: request))
        let manyVary = (0..<100_000).map { "h\($0)" }.joined(separator: ", ")
        let varied = HTTPResponse(status: 200, headers: ["Cache-Control": "max-age=60", "Vary": manyVary])
        #expect(!policy.isStorable(varied, for: request))
        #expect(policy.variantKey(for: request, varyingOn: varied.headers) == nil)
    }

    @Test("Vary selects by the named request headers, normalising whitespace")
    func vary() {
        let headers: HTTPHeaders = ["Vary": "Accept-Language, Accept"]
        let english = HTTPRequest(url: Self.url, headers: ["Accept-Language": "en,  fr", "Accept": "*/*"])
        let same = HTTPRequest(url: Self.url, headers: ["accept": "*/*", "accept-language": "en, fr"])
        let german = HTTPRequest(url: Self.url, headers: ["Accept-Language": "de", "Accept": "*/*"])
        #expect(policy.variantKey(for: english, varyingOn: headers) == policy.variantKey(for: same, varyingOn: headers))
        #expect(
            policy.variantKey(for: english, varyingOn: headers) != policy.variantKey(for: german, varyingOn: headers))
        #expect(policy.variantKey(for: english, varyingOn: [:]) == "")
    }

    @Test("Reuse: fresh, request max-age / min-fresh / no-cache, max-stale, must-revalidate, stale-while-revalidate")
    func reuse() throws {
        let fresh = try entry(["Cache-Control": "max-age=100"])
        let at50 = Self.now.addingTimeInterval(50)
        #expect(policy.reuse(fresh, requestDirectives: CacheControl(), now: at50) == .fresh)
        #expect(policy.reuse(fresh, requestDirectives: try CacheControl(parsing: "max-age=10"), now: at50) == .validate)
        #expect(
            policy.reuse(fresh, requestDirectives: try CacheControl(parsing: "min-fresh=60"), now: at50) == .validate)
        #expect(policy.reuse(fresh, requestDirectives: try CacheControl(parsing: "no-cache"), now: at50) == .validate)
        let at150 = Self.now.addingTimeInterval(150)
        #expect(policy.reuse(fresh, requestDirectives: CacheControl(), now: at150) == .validate)
        #expect(
            policy.reuse(fresh, requestDirectives: try CacheControl(parsing: "max-stale=60"), now: at150)
                == .staleAllowedByRequest)
        #expect(
            policy.reuse(fresh, requestDirectives: try CacheControl(parsing: "max-stale=10"), now: at150) == .validate)
        let strict = try entry(["Cache-Control": "max-age=100, must-revalidate"])
        #expect(
            policy.reuse(strict, requestDirectives: try CacheControl(parsing: "max-stale"), now: at150) == .validate)
        let noCache = try entry(["Cache-Control": "max-age=100, no-cache"])
        #expect(policy.reuse(noCache, requestDirectives: CacheControl(), now: at50) == .validate)
        let lenient = try entry(["Cache-Control": "max-age=100, stale-while-revalidate=60"])
        #expect(policy.reuse(lenient, requestDirectives: CacheControl(), now: at150) == .staleWhileRevalidate)
        #expect(
            policy.reuse(lenient, requestDirectives: CacheControl(), now: Self.now.addingTimeInterval(161)) == .validate
        )
    }

    @Test("stale-if-error: within the window only, never past must-revalidate or no-cache")
    func staleIfError() throws {
        let lenient = try entry(["Cache-Control": "max-age=100, stale-if-error=60"])
        #expect(
            policy.allowsStaleIfError(lenient, requestDirectives: CacheControl(), now: Self.now.addingTimeInterval(150))
        )
        #expect(
            !policy.allowsStaleIfError(
                lenient, requestDirectives: CacheControl(), now: Self.now.addingTimeInterval(161)))
        let plain = try entry(["Cache-Control": "max-age=100"])
        #expect(
            !policy.allowsStaleIfError(plain, requestDirectives: CacheControl(), now: Self.now.addingTimeInterval(150)))
        #expect(
            policy.allowsStaleIfError(
                plain, requestDirectives: try CacheControl(parsing: "stale-if-error=100"),
                now: Self.now.addingTimeInterval(150)))
        let strict = try entry(["Cache-Control": "max-age=100, must-revalidate, stale-if-error=60"])
        #expect(
            !policy.allowsStaleIfError(strict, requestDirectives: CacheControl(), now: Self.now.addingTimeInterval(150))
        )
    }

    @Test("A 304 replaces stored fields of the same name, but not framing fields")
    func freshening() throws {
        let stored = try entry(["Cache-Control": "max-age=10", "ETag": "\"a\"", "X-Kept": "1", "Content-Length": "4"])
        let updated = policy.freshened(
            stored,
            with: HTTPResponse(
                status: 304, headers: ["Cache-Control": "max-age=300", "X-New": "2", "Content-Length": "0"]),
            requestTime: Self.now.addingTimeInterval(60), responseTime: Self.now.addingTimeInterval(60))
        #expect(updated.response.headers["Cache-Control"] == "max-age=300")
        #expect(updated.response.headers["X-Kept"] == "1")
        #expect(updated.response.headers["X-New"] == "2")
        #expect(updated.response.headers["Content-Length"] == "4")
        #expect(updated.freshnessLifetime == 300)
        #expect(updated.response.body == stored.response.body)
    }

    @Test("Unsafe methods invalidate the target and same-origin Location / Content-Location")
    func invalidation() {
        let post = HTTPRequest(method: .post, url: URL(string: "https://api.example/jobs")!)
        let keys = policy.invalidatedKeys(
            by: post,
            response: HTTPResponse(
                status: 201, headers: ["Location": "/jobs/7", "Content-Location": "https://other.example/jobs/7"]))
        #expect(keys == ["https://api.example/jobs", "https://api.example/jobs/7"])
        #expect(policy.invalidatedKeys(by: post, response: HTTPResponse(status: 500)).isEmpty)
        #expect(policy.invalidatedKeys(by: HTTPRequest(url: Self.url), response: HTTPResponse(status: 200)).isEmpty)
    }

    @Test("The key is the URI as RFC 9110 compares it: scheme and host in any case, default port or none, same key")
    func keyNormalisation() {
        func key(_ text: String) -> String { HTTPCachePolicy.key(for: URL(string: text)!) }
        let expected = "https://api.example/jobs?page=2"
        for spelling in [
            "https://api.example/jobs?page=2", "HTTPS://API.Example/jobs?page=2", "https://api.example:443/jobs?page=2",
            "https://api.example/jobs?page=2#top",
        ] {
            #expect(key(spelling) == expected, "\(spelling)")
        }
        #expect(key("http://api.example:80/") == "http://api.example/")
        #expect(key("http://api.example") == "http://api.example/")
        // Path and query keep their case, and other ports stay distinct.
        #expect(key("https://api.example/Jobs") != key("https://api.example/jobs"))
        #expect(key("https://api.example/jobs?Page=2") != key("https://api.example/jobs?page=2"))
        #expect(key("https://api.example:8443/jobs") == "https://api.example:8443/jobs")
        #expect(key("http://api.example:443/jobs") == "http://api.example:443/jobs")

        // A Location naming the target's origin another way still invalidates what the GET stored.
        let post = HTTPRequest(method: .post, url: URL(string: "https://api.example/jobs")!)
        let keys = policy.invalidatedKeys(
            by: post,
            response: HTTPResponse(
                status: 201,
                headers: [
                    "Location": "https://api.example:443/jobs/7", "Content-Location": "HTTPS://API.EXAMPLE/jobs/8",
                ]
            ))
        #expect(keys == ["https://api.example/jobs", "https://api.example/jobs/7", "https://api.example/jobs/8"])
        let otherPort = policy.invalidatedKeys(
            by: post, response: HTTPResponse(status: 201, headers: ["Location": "https://api.example:8443/jobs/7"]))
        #expect(otherPort == ["https://api.example/jobs"])
    }
}
