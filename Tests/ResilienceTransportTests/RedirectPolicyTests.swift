import Foundation
import ResilienceTesting
import Testing

@testable import ResilienceTransport

/// The redirect rules as a pure value (the FaultServer suite checks the same rules end to end over http;
/// https→http needs TLS, which the loopback server does not speak, so the downgrade rule is checked here).
@Suite("Redirect policy")
struct RedirectPolicyTests {
    let origin = URL(string: "https://api.example.com/jobs")!

    func policy(limit: Int = 10, downgrade: Bool = false) -> RedirectPolicy {
        RedirectPolicy(originalURL: origin, maximumRedirects: limit, allowsDowngrade: downgrade)
    }

    @Test("A redirect loop's message names the URL without its query or user:password@, which may hold secrets")
    func redirectLoopMessageHidesSecrets() {
        let url = URL(string: "https://ada:pa55word@api.example.com/jobs?api_key=s3cret")!
        let message = TransportError.redirectLoop(url: url).classification.message ?? ""
        #expect(message.contains("api.example.com/jobs"), "\(message)")
        #expect(!message.contains("s3cret"), "\(message)")
        #expect(!message.contains("pa55word"), "\(message)")
    }

    @Test("Same origin keeps credentials; leaving the origin strips them for the rest of the chain")
    func credentials() {
        var rules = policy()
        let same = URL(string: "https://api.example.com:443/v2/jobs")!
        let cdn = URL(string: "https://cdn.example.net/jobs")!
        let back = URL(string: "https://api.example.com/final")!
        #expect(rules.evaluate(from: origin, to: same) == .follow(to: same, stripCredentials: false))
        #expect(rules.evaluate(from: same, to: cdn) == .follow(to: cdn, stripCredentials: true))
        #expect(rules.evaluate(from: cdn, to: back) == .follow(to: back, stripCredentials: true))
        var portChange = policy()
        let otherPort = URL(string: "https://api.example.com:8443/x")!
        #expect(portChange.evaluate(from: origin, to: otherPort) == .follow(to: otherPort, stripCredentials: true))
    }

    @Test("A target's user:password@ is dropped once the chain leaves the origin, and kept within it")
    func urlCredentials() {
        var rules = RedirectPolicy(
            originalURL: URL(string: "https://alice:secret@api.example.com/jobs")!, maximumRedirects: 10,
            allowsDowngrade: false)
        let same = URL(string: "https://alice:secret@api.example.com/v2")!
        #expect(rules.evaluate(from: origin, to: same) == .follow(to: same, stripCredentials: false))
        #expect(
            rules.evaluate(from: same, to: URL(string: "https://alice:secret@api.example.com:8443/x?q=1")!)
                == .follow(to: URL(string: "https://api.example.com:8443/x?q=1")!, stripCredentials: true))
        // Back at the origin, credentials stay stripped for the rest of the chain, in the URL as in the headers.
        #expect(
            rules.evaluate(from: same, to: URL(string: "https://mallory:pw@api.example.com/back")!)
                == .follow(to: URL(string: "https://api.example.com/back")!, stripCredentials: true))
    }

    @Test("https→http is refused unless allowed; loops and long chains are refused")
    func refusals() {
        var rules = policy()
        let plaintext = URL(string: "http://api.example.com/jobs")!
        guard case .refuse(let downgrade) = rules.evaluate(from: origin, to: plaintext) else {
            Issue.record("downgrade followed")
            return
        }
        #expect(downgrade.classification.category == .insecureTransport)
        var lenient = policy(downgrade: true)
        #expect(lenient.evaluate(from: origin, to: plaintext) == .follow(to: plaintext, stripCredentials: true))
        var looping = policy()
        let other = URL(string: "https://api.example.com/other")!
        #expect(looping.evaluate(from: origin, to: other) == .follow(to: other, stripCredentials: false))
        #expect(looping.evaluate(from: other, to: origin) == .refuse(.redirectLoop(url: origin)))
        var short = policy(limit: 1)
        #expect(short.evaluate(from: origin, to: other) == .follow(to: other, stripCredentials: false))
        #expect(
            short.evaluate(from: other, to: URL(string: "https://api.example.com/third")!)
                == .refuse(.tooManyRedirects(limit: 1, url: URL(string: "https://api.example.com/third")!)))
    }

    @Test("A loop is the same method sent to the same URL again: a POST's 303 back to its URL is followed as a GET")
    func loopsCountTheMethod() {
        var rules = RedirectPolicy(originalURL: origin, method: .post, maximumRedirects: 10, allowsDowngrade: false)
        #expect(RedirectPolicy.nextMethod(after: .post, status: 303) == .get)
        #expect(rules.evaluate(from: origin, to: origin, method: .get) == .follow(to: origin, stripCredentials: false))
        #expect(rules.evaluate(from: origin, to: origin, method: .get) == .refuse(.redirectLoop(url: origin)))
        #expect(RedirectPolicy.nextMethod(after: .post, status: 307) == .post)
        #expect(RedirectPolicy.nextMethod(after: .put, status: 302) == .put)
        #expect(RedirectPolicy.nextMethod(after: .head, status: 303) == .head)
        #expect(RedirectPolicy.nextMethod(after: .delete, status: 303) == .get)
    }

    @Test("A plaintext hop is held to the secure-transport policies like a first request: upgraded, or refused")
    func plaintextHopsFollowTheSecureTransportPolicy() throws {
        let cdn = URL(string: "http://cdn.example.net:80/jobs?page=2")!
        let upgradedCDN = URL(string: "https://cdn.example.net/jobs?page=2")!
        var upgrading = RedirectPolicy(
            originalURL: origin, maximumRedirects: 10, allowsDowngrade: true, secureTransport: [.upgrade])
        #expect(upgrading.evaluate(from: origin, to: cdn) == .follow(to: upgradedCDN, stripCredentials: true))
        // Upgraded back to the original URL: the same method to the same URL is a loop.
        #expect(
            upgrading.evaluate(from: upgradedCDN, to: URL(string: "http://api.example.com/jobs")!)
                == .refuse(.redirectLoop(url: origin)))
        // An upgraded hop to the original origin keeps the credentials, as a same-origin https hop does.
        var sameOrigin = RedirectPolicy(
            originalURL: origin, maximumRedirects: 10, allowsDowngrade: false, secureTransport: [.upgrade])
        #expect(
            sameOrigin.evaluate(from: origin, to: URL(string: "http://api.example.com/v2")!)
                == .follow(to: URL(string: "https://api.example.com/v2")!, stripCredentials: false))

        let local = URL(string: "http://127.0.0.1:8080/feed")!
        var blocking = RedirectPolicy(
            originalURL: local, maximumRedirects: 10, allowsDowngrade: false,
            secureTransport: [SecureTransportPolicy(action: .block, allowedInsecureHosts: ["127.0.0.1"])])
        guard
            case .refuse(let blocked) = blocking.evaluate(
                from: local, to: URL(string: "//evil.example/x", relativeTo: local)!.absoluteURL)
        else {
            Issue.record("a scheme-relative plaintext hop to a blocked host was followed")
            return
        }
        #expect(blocked.code == .insecureTransportBlocked)
        #expect(blocked.classification.message?.contains("evil.example") == true)
        #expect(
            blocking.evaluate(from: local, to: URL(string: "http://127.0.0.1:8080/next")!)
                == .follow(to: URL(string: "http://127.0.0.1:8080/next")!, stripCredentials: false))

        // A host allowed in plaintext is still not reached by an https→http hop unless downgrades are allowed.
        let loopback = URL(string: "http://localhost/jobs")!
        var standard = RedirectPolicy(
            originalURL: origin, maximumRedirects: 10, allowsDowngrade: false, secureTransport: [.standard])
        guard case .refuse(let downgrade) = standard.evaluate(from: origin, to: loopback) else {
            Issue.record("an https→http hop to an allowed host was followed without allowsDowngrade")
            return
        }
        #expect(downgrade.classification.message?.contains("from https to http") == true)
    }

    @Test("Nested policies apply outermost first; the default is the policies of the secure transports in effect")
    func policiesInEffect() {
        let target = URL(string: "http://cdn.example.net/x")!
        var allowThenBlock = RedirectPolicy(
            originalURL: origin, maximumRedirects: 10, allowsDowngrade: true,
            secureTransport: [SecureTransportPolicy(action: .allow), .block])
        #expect(allowThenBlock.evaluate(from: origin, to: target).isRefusal)
        var upgradeThenBlock = RedirectPolicy(
            originalURL: origin, maximumRedirects: 10, allowsDowngrade: true, secureTransport: [.upgrade, .block])
        #expect(
            upgradeThenBlock.evaluate(from: origin, to: target)
                == .follow(to: URL(string: "https://cdn.example.net/x")!, stripCredentials: true))
        #expect(policy().secureTransport.isEmpty)
        let inEffect = SecureTransportPolicy.$active.withValue([.block]) { policy().secureTransport }
        #expect(inEffect == [.block])
    }

    @Test("A refused hop is not marked not sent: the request it follows reached the server, which answered it")
    func refusalsFollowASentRequest() {
        let local = URL(string: "http://127.0.0.1:8080/jobs")!
        let blockingPolicy = SecureTransportPolicy(action: .block, allowedInsecureHosts: ["127.0.0.1"])
        var downgrade = policy()
        var blocked = RedirectPolicy(
            originalURL: local, maximumRedirects: 10, allowsDowngrade: false, secureTransport: [blockingPolicy])
        var looping = policy()
        var short = policy(limit: 0)
        var hostless = policy()
        var unsupported = policy()
        let verdicts = [
            ("https→http", downgrade.evaluate(from: origin, to: URL(string: "http://api.example.com/jobs")!)),
            ("plaintext blocked", blocked.evaluate(from: local, to: URL(string: "http://localhost:8080/jobs")!)),
            ("loop", looping.evaluate(from: origin, to: origin)),
            ("too many", short.evaluate(from: origin, to: URL(string: "https://api.example.com/next")!)),
            ("no host", hostless.evaluate(from: origin, to: URL(string: "https:///jobs")!)),
            ("scheme", unsupported.evaluate(from: origin, to: URL(string: "ftp://api.example.com/jobs")!)),
        ]
        for (what, verdict) in verdicts {
            guard case .refuse(let failure) = verdict else {
                Issue.record("\(what): the hop was followed")
                continue
            }
            #expect(!failure.classification.requestWasNotSent, "\(what): \(failure)")
        }
        guard case .refuse(let plaintext) = verdicts[1].1 else { return }
        #expect(plaintext.code == .insecureTransportBlocked)
    }

    @Test("A target without a host is refused as the server's invalid response, not sent as the caller's bad request")
    func hostlessTarget() {
        var rules = policy()
        let hostless = URL(string: "https:///jobs")!
        guard case .refuse(let failure) = rules.evaluate(from: origin, to: hostless) else {
            Issue.record("a redirect to \(hostless) was followed")
            return
        }
        #expect(failure.code == .invalidResponse)
        #expect(failure.classification.category == .invalidResponse)
    }
}

@Suite("Redirect policy: the next hop's request")
struct RedirectNextRequestTests {
    let origin = URL(string: "https://api.example.com/jobs")!
    let target = URL(string: "https://api.example.com/jobs/42")!

    func post() -> HTTPRequest {
        HTTPRequest(
            method: .post, url: origin,
            headers: [
                "Content-Type": "application/json", "Content-Encoding": "gzip", "Content-Language": "en",
                "Content-Location": "/drafts/1", "Content-Length": "4", "Digest": "sha-256=abc",
                "Content-Digest": "sha-256=:abc=:", "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT",
                "Accept": "application/json", "Idempotency-Key": "k-1",
            ],
            body: Data("gzip".utf8))
    }

    @Test("A POST turned into a GET (303, 301, 302) loses its body and every field describing it (RFC 9110 §15.4)")
    func contentFieldsDropped() {
        for status in [301, 302, 303] {
            let next = RedirectPolicy.nextRequest(
                after: post(), status: status, target: target, stripCredentials: false, credentialHeaders: [])
            #expect(next.method == .get)
            #expect(next.body == nil)
            for name in [
                "Content-Type", "Content-Encoding", "Content-Language", "Content-Location", "Content-Length", "Digest",
                "Content-Digest", "Last-Modified",
            ] {
                #expect(!next.headers.contains(name), "\(status) kept \(name)")
            }
            #expect(next.headers["Accept"] == "application/json")
            #expect(next.headers["Idempotency-Key"] == "k-1")
        }
    }

    @Test("A 307 and a 308 keep the method, the body and the fields describing it")
    func contentFieldsKept() {
        for status in [307, 308] {
            let next = RedirectPolicy.nextRequest(
                after: post(), status: status, target: target, stripCredentials: false, credentialHeaders: [])
            #expect(next.method == .post)
            #expect(next.body == Data("gzip".utf8))
            #expect(next.headers["Content-Encoding"] == "gzip")
            #expect(next.headers["Content-Type"] == "application/json")
        }
    }

    @Test("Credential header names are matched whatever their case, in the request and in the configured set")
    func credentialNamesCaseInsensitive() {
        let request = HTTPRequest(
            url: origin, headers: ["x-session-token": "secret", "AUTHORIZATION": "Bearer a", "Accept": "*/*"])
        let next = RedirectPolicy.nextRequest(
            after: request, status: 302, target: URL(string: "https://cdn.example.net/x")!, stripCredentials: true,
            credentialHeaders: ["X-Session-Token", "Authorization"])
        #expect(!next.headers.contains("X-Session-Token"))
        #expect(!next.headers.contains("Authorization"))
        #expect(next.headers["Accept"] == "*/*")
    }
}

@Suite("URLSessionTransport redirects over FaultServer")
struct URLSessionRedirectTests {
    @Test("A credential header configured with capitals is not sent to another origin after a redirect")
    func configuredCredentialWithCapitals() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/from", .redirect(to: other.url("/landing").absoluteString))
        other.script("/landing", .ok("there"))
        var configuration = URLSessionTransportConfiguration()
        configuration.credentialHeaders.insert("X-Session-Token")
        let transport = URLSessionTransport(configuration: configuration)
        let response = try await transport.send(
            HTTPRequest(url: server.url("/from"), headers: ["X-Session-Token": "secret", "X-Trace": "t-1"]),
            context: realContext())
        #expect(response.status == 200)
        let landed = other.requests(to: "/landing").first
        #expect(landed != nil)
        #expect(landed?.headers["X-Session-Token"] == nil)
        #expect(landed?.headers["X-Trace"] == "t-1")
    }

    @Test(
        "Credential headers set on the session (httpAdditionalHeaders) are stripped when a redirect leaves the origin")
    func sessionCredentialHeadersStayInTheirOrigin() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/from", .redirect(to: "/here"))
        server.script("/here", .redirect(to: other.url("/landing").absoluteString))
        server.script("/post", .redirect(to: other.url("/posted").absoluteString, status: 307))
        server.script("/own", .redirect(to: other.url("/own").absoluteString))
        other.script("/landing", .ok("there"))
        other.script("/posted", .ok("posted"))
        other.script("/own", .ok("own"))
        var configuration = URLSessionTransportConfiguration()
        configuration.credentialHeaders.insert("X-Session-Token")
        let transport = URLSessionTransport(configuration: configuration) { session in
            session.httpAdditionalHeaders = [
                "Authorization": "Bearer secret", "cookie": "session=1", "Proxy-Authorization": "Basic cHJveHk=",
                "x-session-token": "token", "X-Trace": "t-1",
            ]
        }
        let credentials = ["Authorization", "Cookie", "Proxy-Authorization", "X-Session-Token"]
        // A GET through a same-origin hop, then across origins (a hop FoundationNetworking sends itself).
        let response = try await transport.send(HTTPRequest(url: server.url("/from")), context: realContext())
        #expect(String(decoding: response.body, as: UTF8.self) == "there")
        let first = try #require(server.requests(to: "/from").first)
        let sameOrigin = try #require(server.requests(to: "/here").first)
        #expect(first.headers["Authorization"] == "Bearer secret")
        #expect(sameOrigin.headers["Authorization"] == "Bearer secret", "a same-origin hop lost the credential")
        #expect(sameOrigin.headers["Cookie"] == "session=1")
        let landed = try #require(other.requests(to: "/landing").first)
        for name in credentials {
            #expect(!landed.headers.contains(name), "\(name) crossed to another origin: \(landed.headers)")
        }
        #expect(landed.headers["X-Trace"] == "t-1")
        // A POST's 307 across origins (a hop the transport sends in a task of its own).
        _ = try await transport.send(
            HTTPRequest(method: .post, url: server.url("/post"), body: Data("x".utf8)), context: realContext())
        let posted = try #require(other.requests(to: "/posted").first)
        #expect(posted.method == "POST")
        for name in credentials {
            #expect(!posted.headers.contains(name), "\(name) crossed to another origin: \(posted.headers)")
        }
        // The request's own field wins over the session's, and is stripped across origins as well.
        _ = try await transport.send(
            HTTPRequest(url: server.url("/own"), headers: ["authorization": "Bearer mine"]), context: realContext())
        #expect(server.requests(to: "/own").first?.headers.values(for: "Authorization") == ["Bearer mine"])
        #expect(other.requests(to: "/own").first.map { $0.headers.contains("Authorization") } == false)
    }

    @Test("Credentials in the URL (user:password@) never cross to another origin, however the Location is written")
    func urlCredentialsStayInTheirOrigin() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        // A scheme-relative Location resolves against the request's URL, whose user:password came along with it.
        server.script("/scheme-relative", .redirect(to: "//127.0.0.1:\(other.port)/landing"))
        server.script("/with-userinfo", .redirect(to: "http://mallory:pw@127.0.0.1:\(other.port)/landing"))
        server.script("/same-origin", .redirect(to: "/here"))
        server.script("/here", .ok("here"))
        other.script("/landing", .ok("there"))
        let transport = URLSessionTransport()
        let withCredentials = "http://alice:secret@127.0.0.1:\(server.port)"
        for path in ["/scheme-relative", "/with-userinfo"] {
            let response = try await transport.send(
                HTTPRequest(url: URL(string: withCredentials + path)!), context: realContext())
            #expect(response.status == 200)
            #expect(
                response.url?.user == nil && response.url?.password == nil,
                "\(path): \(String(describing: response.url))")
        }
        #expect(other.requests(to: "/landing").count == 2)
        #expect(other.requests(to: "/landing").allSatisfy { $0.headers["Authorization"] == nil })
        // Within the origin they stay, as the credential headers do.
        _ = try await transport.send(
            HTTPRequest(url: URL(string: withCredentials + "/same-origin")!), context: realContext())
        #expect(server.requests(to: "/here").first?.headers["Authorization"] == "Basic YWxpY2U6c2VjcmV0")
    }

    #if canImport(FoundationNetworking)
    @Test("A Location (or any header) larger than libcurl accepts is the server's invalid response, not unknown")
    func hugeLocation() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        let huge = String(repeating: "a", count: 200_000)
        server.script("/moved", .redirect(to: "/landing?" + huge))
        server.script("/landing", .ok("here"))
        server.script("/header", .ok("x", headers: ["X-Huge": huge]))
        for path in ["/moved", "/header"] {
            let error = await #expect(throws: (any Error).self) {
                try await URLSessionTransport().send(HTTPRequest(url: server.url(path)), context: realContext())
            }
            #expect(classify(error)?.category == .invalidResponse, "\(path): \(String(describing: error))")
            #expect(classify(error)?.code == .invalidResponse, "\(path): \(String(describing: error))")
        }
        #expect(server.requestCount(for: "/landing") == 0)
    }
    #endif

    @Test(
        "A POST's 307 and 308 resend the method and the body; its 301, 302 and 303 become a GET without the content fields"
    )
    func postRedirectedKeepsOrDropsTheBodyAsTheRedirectPolicySays() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        let body = Data(#"{"title":"x"}"#.utf8)
        let headers: HTTPHeaders = [
            "Content-Type": "application/json", "Content-Language": "en", "Digest": "sha-256=abc", "Accept": "*/*",
        ]
        let transport = URLSessionTransport()
        for status in [301, 302, 303, 307, 308] {
            server.script("/r\(status)", .redirect(to: "/t\(status)", status: status))
            server.script("/t\(status)", .ok())
            let request = HTTPRequest(method: .post, url: server.url("/r\(status)"), headers: headers, body: body)
            _ = try await transport.send(request, context: realContext())
            let expected = RedirectPolicy.nextRequest(
                after: request, status: status, target: server.url("/t\(status)"), stripCredentials: false,
                credentialHeaders: [])
            #expect(server.requests(to: "/t\(status)").count == 1, "\(status)")
            let landed = try #require(server.requests(to: "/t\(status)").first)
            #expect(landed.method == expected.method.rawValue, "\(status)")
            #expect(landed.body == (expected.body ?? Data()), "\(status): the body was \(landed.body.count) bytes")
            for name in ["Content-Type", "Content-Language", "Digest", "Accept"] {
                #expect(landed.headers[name] == expected.headers[name], "\(status): \(name)")
            }
        }
        // The rules carry over to the hops the transport sends itself: a 307 back to the POST's own URL is a loop.
        server.script("/again", .redirect(to: "/again", status: 307))
        let loop = await #expect(throws: TransportError.self) {
            try await transport.send(
                HTTPRequest(method: .post, url: server.url("/again"), body: body), context: realContext())
        }
        #expect(loop?.code == .tooManyRedirects)
        #expect(server.requests(to: "/again").count == 1)
    }

    @Test("A POST answered with a 303 to its own URL is followed as a GET there (post/redirect/get), not a loop")
    func postRedirectGetToSameURL() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/form", .redirect(to: "/form", status: 303), .ok("done"))
        let response = try await URLSessionTransport().send(
            HTTPRequest(method: .post, url: server.url("/form"), body: Data("a=1".utf8)), context: realContext())
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "done")
        #expect(server.requests(to: "/form").map(\.method) == ["POST", "GET"])
    }

    @Test("A redirect hop that cannot connect leaves the request sent: a POST answered with a 303 is not sent again")
    func hopThatCannotConnectFollowsASentRequest() async throws {
        let server = try FaultServer()
        let gone = try FaultServer()
        gone.stop()
        defer { server.stop() }
        let refused = gone.url("/landing").absoluteString
        server.script("/order", .redirect(to: refused, status: 303))
        server.script("/upload", .redirect(to: refused, status: 307))
        // Nothing listens on the hop's port: the request that was answered with the redirect is still sent.
        let direct = await #expect(throws: TransportError.self) {
            try await URLSessionTransport().send(HTTPRequest(url: URL(string: refused)!), context: realContext())
        }
        #expect(direct?.code == .connectionRefused)
        #expect(direct?.classification.requestWasNotSent == true)
        for path in ["/order", "/upload"] {
            let pipeline = TestOnlyRetryPipeline()
            let transport = ResilientTransport(wrapping: URLSessionTransport(), pipeline: pipeline)
            let error = await #expect(throws: TransportError.self, "\(path)") {
                try await transport.send(
                    HTTPRequest(method: .post, url: server.url(path), body: Data("item=1".utf8)),
                    context: realContext())
            }
            #expect(error?.code == .connectionRefused, "\(path)")
            #expect(error?.classification.requestWasNotSent == false, "\(path)")
            #expect(server.requests(to: path).count == 1, "\(path): the POST was sent again")
            #expect(pipeline.attempts.value == 1, "\(path)")
        }
    }
}

extension RedirectPolicy.Verdict {
    /// Whether the hop is refused.
    fileprivate var isRefusal: Bool {
        if case .refuse = self { return true }
        return false
    }
}
