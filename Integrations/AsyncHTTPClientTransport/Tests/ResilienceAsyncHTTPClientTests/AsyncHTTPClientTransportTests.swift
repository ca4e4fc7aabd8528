import AsyncHTTPClient
import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

@testable import ResilienceAsyncHTTPClient

/// AsyncHTTPClientTransport against the loopback FaultServer over real sockets (generous real-time bounds):
/// what it does beyond the HTTPTransport kit (`ConformanceTests.swift`), which both transports pass.
@Suite("AsyncHTTPClientTransport over FaultServer")
struct AsyncHTTPClientTransportTests {
    func send(
        _ url: URL, with transport: AsyncHTTPClientTransport, method: HTTPMethod = .get, headers: HTTPHeaders = [:],
        body: Data? = nil, timeout: Duration = .seconds(10)
    ) async throws -> HTTPResponse {
        try await transport.send(
            HTTPRequest(method: method, url: url, headers: headers, body: body), context: realContext(timeout: timeout))
    }

    @Test("Sub-second deadlines are honoured, not fired at once")
    func subSecondDeadline() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/slow", .delayed(by: .milliseconds(150), then: .ok("late but in time")))
        let response = try await withTransport {
            try await send(server.url("/slow"), with: $0, timeout: .milliseconds(900))
        }
        #expect(String(decoding: response.body, as: UTF8.self) == "late but in time")
    }

    @Test("A HEAD and a 304 are answered whatever their Content-Length: it announces no body to wait for")
    func responsesWithoutBody() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/small", .ok("hello"), .ok("hello"))
        server.script("/large", .respond(status: 200, body: Data(count: 200_000)))
        let notModified = "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: 100\r\n\r\n"
        server.script("/cached", .garbage(Data(notModified.utf8)))
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.maximumResponseSize = 100_000
        try await withTransport(configuration) { transport in
            let small = try await send(server.url("/small"), with: transport, method: .head)
            #expect(small.status == 200)
            #expect(small.body.isEmpty)
            let large = try await send(server.url("/large"), with: transport, method: .head)
            #expect(large.status == 200, "a HEAD of a body over the cap is not refused")
            #expect(large.headers["Content-Length"] == "200000")
            let streamed = try await transport.stream(
                HTTPRequest(method: .head, url: server.url("/small")), context: realContext())
            var received = 0
            for try await chunk in streamed.body { received += chunk.count }
            #expect(streamed.status == 200)
            #expect(received == 0)
            // Last: the server closes this connection after the 304, so nothing may reuse it.
            let cached = try await send(server.url("/cached"), with: transport)
            #expect(cached.status == 304)
        }
    }

    @Test("A huge body without a usable Content-Length is cut while streaming, at the cap")
    func capWhileStreaming() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        // The decompressor is off, so the gzip body is counted as it arrives (650 KB on the wire for 100 MB).
        server.script("/bomb", .gzipBomb(decompressedSize: 100 * 1024 * 1024))
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.decompressesResponses = false
        configuration.maximumResponseSize = 100_000
        let error = await #expect(throws: (any Error).self) {
            try await withTransport(configuration) { try await send(server.url("/bomb"), with: $0) }
        }
        #expect(classify(error)?.code == .responseTooLarge, "\(String(describing: error))")
    }

    @Test("Credentials that left their origin in a redirect chain are not restored when it comes back")
    func credentialsStayDroppedAfterLeavingTheOrigin() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/cross-back", .redirect(to: other.url("/back").absoluteString))
        other.script("/back", .redirect(to: server.url("/landing").absoluteString))
        server.script("/landing", .ok("here"))
        let secrets: HTTPHeaders = ["Authorization": "Bearer secret", "Cookie": "session=s3cr3t", "X-API-Key": "k"]
        let response = try await withTransport {
            try await send(server.url("/cross-back"), with: $0, headers: secrets)
        }
        #expect(response.url == server.url("/landing"))
        let back = try #require(other.requests(to: "/back").first)
        #expect(back.headers["X-API-Key"] == nil, "an API key is a credential too")
        let returned = try #require(server.requests(to: "/landing").first)
        #expect(returned.headers["Authorization"] == nil)
        #expect(returned.headers["Cookie"] == nil)
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
        other.script("/landing", .ok("there"))
        let withCredentials = "http://alice:secret@127.0.0.1:\(server.port)"
        try await withTransport { transport in
            for path in ["/scheme-relative", "/with-userinfo"] {
                let response = try await send(URL(string: withCredentials + path)!, with: transport)
                #expect(response.status == 200)
                #expect(response.url?.user == nil, "\(path): \(String(describing: response.url))")
                #expect(response.url?.password == nil, "\(path): \(String(describing: response.url))")
            }
        }
        #expect(other.requests(to: "/landing").count == 2)
        #expect(other.requests(to: "/landing").allSatisfy { $0.headers["Authorization"] == nil })
    }

    @Test("A 303 after a POST becomes a GET without the body; a 307 keeps both")
    func redirectMethods() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/see-other", .redirect(to: "/result", status: 303))
        server.script("/temporary", .redirect(to: "/result", status: 307))
        server.script("/result", .ok())
        let body = Data(#"{"title":"x"}"#.utf8)
        try await withTransport { transport in
            _ = try await send(server.url("/see-other"), with: transport, method: .post, body: body)
            _ = try await send(server.url("/temporary"), with: transport, method: .post, body: body)
        }
        let results = server.requests(to: "/result")
        #expect(results.map(\.method) == ["GET", "POST"])
        #expect(results.map(\.body) == [Data(), body])
    }

    @Test("A POST answered with a 303 to its own URL is followed as a GET there (post/redirect/get), not a loop")
    func postRedirectGetToSameURL() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/form", .redirect(to: "/form", status: 303), .ok("done"), .redirect(to: "/form", status: 303))
        let response = try await withTransport { transport in
            try await send(server.url("/form"), with: transport, method: .post, body: Data("a=1".utf8))
        }
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "done")
        #expect(server.requests(to: "/form").map(\.method) == ["POST", "GET"])
        // A GET sent back to its own URL is a loop.
        let failure = await #expect(throws: TransportError.self) {
            try await withTransport { transport in try await send(server.url("/form"), with: transport) }
        }
        #expect(failure?.code == .tooManyRedirects)
    }

    @Test("An https→http redirect is refused as insecure (decided before any request to the target)")
    func downgradeRefused() {
        let source = URL(string: "https://api.example.com/a")!
        var rules = RedirectPolicy(originalURL: source, maximumRedirects: 5, allowsDowngrade: false)
        guard case .refuse(let failure) = rules.evaluate(from: source, to: URL(string: "http://api.example.com/b")!)
        else {
            Issue.record("an https→http hop must be refused")
            return
        }
        #expect(failure.code == .insecureTransportBlocked)
        // The request that the redirect answered was sent: a retry may not treat the refusal as unsent.
        #expect(!failure.classification.requestWasNotSent)
        var allowing = RedirectPolicy(originalURL: source, maximumRedirects: 5, allowsDowngrade: true)
        let plaintext = URL(string: "http://api.example.com/b")!
        #expect(allowing.evaluate(from: source, to: plaintext) == .follow(to: plaintext, stripCredentials: true))
    }

    @Test("A POST on a reused keep-alive connection that the server resets is never re-sent, with or without body")
    func resetKeepAlivePost() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/events", .status(201), .reset, .status(201))
        let body = Data(#"{"title":"keep-alive"}"#.utf8)
        try await withTransport { transport in
            let first = try await send(server.url("/events"), with: transport, method: .post, body: body)
            #expect(first.status == 201)
            let error = await #expect(throws: (any Error).self) {
                try await send(server.url("/events"), with: transport, method: .post, body: body)
            }
            #expect(classify(error)?.code == .connectionReset, "\(String(describing: error))")
            #expect(classify(error)?.requestWasNotSent == false)
        }
        // The client is shut down and the server records a request before answering it (or resetting), so every
        // POST ever sent is already in the log: a re-send would show as a third entry, with no waiting.
        let posts = server.requests(to: "/events")
        #expect(posts.count == 2, "\(posts)")
        #expect(posts.allSatisfy { $0.body == body }, "every POST the server saw carried its body")
    }

    @Test("A request cut off by the transport's shutdown fails as a TransportError: its task was not cancelled")
    func shutdownUnderRequest() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/slow", .delayed(by: .seconds(3), then: .ok("late")))
        let transport = AsyncHTTPClientTransport(
            configuration: .standard, eventLoopGroup: HTTPClient.defaultEventLoopGroup)
        let request = Task { try await send(server.url("/slow"), with: transport) }
        let started = ContinuousClock.now
        while server.requestCount == 0, ContinuousClock.now - started < .seconds(5) {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await transport.shutdown()
        let error = await #expect(throws: (any Error).self) { try await request.value }
        #expect(!(error is CancellationError), "\(String(describing: error))")
        #expect(classify(error)?.code == .unknown, "\(String(describing: error))")
        #expect(classify(error)?.isTransient == false)
        #expect(classify(error)?.requestWasNotSent == false, "the server may have received it")
        #expect(ContinuousClock.now - started < .seconds(2), "it fails at the shutdown, not when the server answers")
    }

    @Test("An error the upload sequence throws fails the request with that very error, as documented")
    func uploadError() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/upload", .ok())
        let error = await #expect(throws: (any Error).self) {
            try await withTransport { transport in
                try await transport.stream(
                    HTTPRequest(method: .post, url: server.url("/upload")), uploading: FailingUpload(), length: nil,
                    context: realContext())
            }
        }
        #expect(error is FailingUpload.ReadFailure, "\(String(describing: error))")
    }

    @Test(
        "A status code below 100 is an invalid response",
        .disabled(
            "AsyncHTTPClient 1.37.0 stops the process: it drops a head below 200 as informational and traps on what follows"
        ))
    func statusBelow100() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/odd", .garbage(Data("HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n".utf8)))
        let error = await failure {
            _ = try await withTransport { try await send(server.url("/odd"), with: $0) }
        }
        #expect(classify(error)?.code == .invalidResponse, "\(String(describing: error))")
    }

    @Test("A client passed in is used and never shut down by the transport")
    func borrowedClient() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/ok", .ok("borrowed"))
        let client = HTTPClient(
            configuration: AsyncHTTPClientTransport.clientConfiguration(for: .standard))
        let transport = AsyncHTTPClientTransport(client: client)
        let response = try await send(server.url("/ok"), with: transport)
        #expect(String(decoding: response.body, as: UTF8.self) == "borrowed")
        try await transport.shutdown()
        let again = try await send(server.url("/ok"), with: transport)
        #expect(again.status == 200, "the borrowed client is still running")
        try await client.shutdown()
    }

    @Test("A redirect to a URL without a host is the server's invalid response, not the caller's invalid request")
    func hostlessRedirect() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/moved", .redirect(to: "http:///nowhere"))
        let error = await failure {
            _ = try await withTransport { try await send(server.url("/moved"), with: $0) }
        }
        #expect(classify(error)?.code == .invalidResponse, "\(String(describing: error))")
        #expect(classify(error)?.category == .invalidResponse)
    }

    @Test("An unsupported scheme is a client error, never sent, whatever AsyncHTTPClient calls it")
    func unsupportedScheme() async throws {
        let error = await failure {
            _ = try await withTransport { try await send(URL(string: "ftp://127.0.0.1/file")!, with: $0) }
        }
        #expect(classify(error)?.code == .invalidFormat, "\(String(describing: error))")
        #expect(classify(error)?.requestWasNotSent == true)
    }

    @Test(
        "A header field AsyncHTTPClient refuses fails as the caller's invalid request, unsent, unretried, as over URLSession"
    )
    func invalidHeaderField() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/f", .ok())
        let fields = [("X-Note", "a\r\nX-Injected: yes"), ("X-Note", "a\u{0}b"), ("X Note", "a"), ("X-Note:", "a")]
        let overURLSession = URLSessionTransport()
        try await withTransport { transport in
            for (name, value) in fields {
                var headers = HTTPHeaders()
                headers.add(name: name, value: value)
                let request = HTTPRequest(url: server.url("/f"), headers: headers)
                let sent = await failure { _ = try await transport.send(request, context: realContext()) }
                let streamed = await failure { _ = try await transport.stream(request, context: realContext()) }
                let viaURLSession = await failure {
                    _ = try await overURLSession.send(request, context: realContext())
                }
                for error in [sent, streamed] {
                    let classification = classify(error)
                    #expect(classification?.category == .clientError, "\(name): \(String(describing: error))")
                    #expect(classification?.code == .invalidFormat, "\(name): \(String(describing: error))")
                    #expect(classification?.isTransient == false)
                    #expect(classification?.requestWasNotSent == true)
                    #expect(classification == classify(viaURLSession), "\(name): URLSession failed otherwise")
                }
                let counted = CountingTransport(base: transport)
                let resilient = ResilientTransport(wrapping: counted) { _ in quickRetries() }
                _ = await failure { _ = try await resilient.send(request, context: realContext()) }
                #expect(counted.attempts == 1, "\(name): an invalid request was retried")
            }
        }
        #expect(server.requestCount(for: "/f") == 0)
    }

    @Test("AsyncHTTPClient's own refusal of a header field is classified as the caller's invalid request")
    func invalidHeaderFieldFromOwnClient() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/f", .ok())
        for (name, value) in [("X-Note", "secret\r\nX-Injected: yes"), ("X Note", "secret")] {
            var request = HTTPClientRequest(url: server.url("/f").absoluteString)
            request.headers.add(name: name, value: value)
            let error = await failure { _ = try await HTTPClient.shared.execute(request, timeout: .seconds(10)) }
            let classification = try #require(error.flatMap { AsyncHTTPClientErrorClassifier().classify($0) })
            #expect(classification.category == .clientError, "\(String(describing: error))")
            #expect(classification.code == .invalidFormat)
            #expect(classification.isTransient == false)
            #expect(classification.requestWasNotSent == true)
            #expect(classification.message?.contains("secret") == false)
        }
        #expect(server.requestCount(for: "/f") == 0)
    }

    @Test("A hop that cannot connect follows a request that was sent and answered: it is not marked unsent")
    func hopThatCannotConnectFollowsASentRequest() async throws {
        let server = try FaultServer()
        let gone = try FaultServer()
        gone.stop()
        defer { server.stop() }
        let refused = gone.url("/landing").absoluteString
        server.script("/order", .redirect(to: refused, status: 303))
        server.script("/upload", .redirect(to: refused, status: 307))
        // Nothing listens on the hop's port: sent there directly, the request is never sent.
        let direct = await #expect(throws: (any Error).self) {
            try await withTransport { transport in
                try await transport.send(HTTPRequest(url: URL(string: refused)!), context: realContext())
            }
        }
        #expect(classify(direct)?.requestWasNotSent == true, "\(String(describing: direct))")
        for path in ["/order", "/upload"] {
            let error = await #expect(throws: (any Error).self, "\(path)") {
                try await withTransport { transport in
                    try await transport.send(
                        HTTPRequest(method: .post, url: server.url(path), body: Data("item=1".utf8)),
                        context: realContext())
                }
            }
            // The POST reached the server, which answered with the redirect: a retry must not take it as unsent.
            #expect(classify(error)?.requestWasNotSent == false, "\(path): \(String(describing: error))")
            #expect(server.requests(to: path).count == 1, "\(path)")
        }
    }
}

/// Counts the attempts that reach the transport it wraps.
private final class CountingTransport: HTTPTransport {
    let base: any HTTPTransport
    private let count = LockedState(initialState: 0)

    init(base: any HTTPTransport) { self.base = base }

    var attempts: Int { count.withLock { $0 } }

    func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        count.withLock { $0 += 1 }
        return try await base.send(request, context: context)
    }
}

/// An upload that yields one chunk and then fails, as a file read that breaks off would.
private struct FailingUpload: AsyncSequence, Sendable {
    struct ReadFailure: Error {}

    struct AsyncIterator: AsyncIteratorProtocol {
        var yielded = false

        mutating func next() async throws -> Data? {
            guard !yielded else {
                try await Task.sleep(for: .milliseconds(50))
                throw ReadFailure()
            }
            yielded = true
            return Data("first chunk".utf8)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
}
