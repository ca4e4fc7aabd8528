import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL
import ResiliencePolicies
import ResilienceTesting
import ResilienceTransport
import Testing

@testable import ResilienceAsyncHTTPClient

/// Runs `body` with a transport on a client of its own that trusts the test certificate authority (unless
/// `trustsTestAuthority` is false) and speaks at most `maximumTLSVersion`; the client is shut down afterwards.
func withTLSTransport<T>(
    _ configuration: AsyncHTTPClientTransportConfiguration = .standard, trustsTestAuthority: Bool = true,
    maximumTLSVersion: TLSVersion? = nil, _ body: (AsyncHTTPClientTransport) async throws -> T
) async throws -> T {
    var clientConfiguration = AsyncHTTPClientTransport.clientConfiguration(for: configuration)
    var tls = TLSConfiguration.makeClientConfiguration()
    let authority = try TestCertificates.shared.get().authority
    if trustsTestAuthority { tls.trustRoots = .certificates([authority]) }
    if let maximumTLSVersion { tls.maximumTLSVersion = maximumTLSVersion }
    clientConfiguration.tlsConfiguration = tls
    let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)
    let transport = AsyncHTTPClientTransport(client: client, configuration: configuration)
    do {
        let result = try await body(transport)
        try await client.shutdown()
        return result
    } catch {
        try await client.shutdown()
        throw error
    }
}

/// The error `operation` throws (nil when it returns).
func failure(of operation: () async throws -> Void) async -> (any Error)? {
    do {
        try await operation()
        return nil
    } catch {
        return error
    }
}

/// A pipeline that retries every transient failure at once, up to three attempts.
func quickRetries() -> any ResiliencePipeline {
    Pipeline {
        RetryStrategy(policy: StandardRetryPolicy(maxAttempts: 3, backoff: .constant(.milliseconds(10)), jitter: .none))
    }
}

/// The AsyncHTTPClient transport against loopback HTTPS servers built with SwiftNIO, NIOSSL and NIOHTTP2 and a
/// certificate made at test time: HTTP/2 failures, TLS failures, streaming. Real sockets, generous bounds.
@Suite("AsyncHTTPClientTransport over TLS and HTTP/2")
struct TLSAndHTTP2Tests {
    @Test("A GET over HTTP/2 with TLS returns the response")
    func http2OverTLS() async throws {
        let server = try await TLSTestServer(.http2, script: ["/hello": [.ok("hello over h2")]])
        let response = try await withTLSTransport {
            try await $0.send(HTTPRequest(url: server.url("/hello")), context: realContext())
        }
        await server.stop()
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "hello over h2")
    }

    @Test("A stream reset mid-body is transient and counted as sent: a GET is retried, a POST is not")
    func streamResetMidBody() async throws {
        let server = try await TLSTestServer(
            .http2,
            script: [
                "/get": [.resetMidBody(partial: 10), .ok("second attempt")],
                "/post": [.resetMidBody(partial: 10)],
            ])
        let classification = try await withTLSTransport { transport in
            let error = await failure {
                _ = try await transport.send(
                    HTTPRequest(method: .post, url: server.url("/post"), body: Data("x".utf8)), context: realContext())
            }
            return classify(error)
        }
        #expect(classification?.isTransient == true, "\(String(describing: classification))")
        #expect(classification?.requestWasNotSent == false)
        let (get, postError) = try await withTLSTransport { base in
            let transport = ResilientTransport(wrapping: base) { _ in quickRetries() }
            let get = try await transport.send(HTTPRequest(url: server.url("/get")), context: realContext())
            let postError = await failure {
                _ = try await transport.send(
                    HTTPRequest(method: .post, url: server.url("/post"), body: Data("x".utf8)), context: realContext())
            }
            return (get, postError)
        }
        await server.stop()
        #expect(String(decoding: get.body, as: UTF8.self) == "second attempt")
        #expect(server.requestCount("/get") == 2)
        #expect(postError != nil)
        #expect(server.requestCount("/post") == 2, "one POST above, and one through the pipeline: not retried")
    }

    @Test(
        "A GOAWAY mid-request is transient and counted as sent (NIOHTTP2 reports the dropped stream as CANCEL): a GET is retried, a POST is not"
    )
    func goAwayMidRequest() async throws {
        let server = try await TLSTestServer(
            .http2, script: ["/jobs": [.goAway, .ok("listed")], "/submit": [.goAway]])
        let classification = try await withTLSTransport { transport in
            let error = await failure {
                _ = try await transport.send(
                    HTTPRequest(method: .post, url: server.url("/submit"), body: Data("job".utf8)),
                    context: realContext())
            }
            return classify(error)
        }
        #expect(classification?.isTransient == true, "\(String(describing: classification))")
        #expect(classification?.requestWasNotSent == false)
        #expect(classification?.message?.contains("GOAWAY") == true, "\(String(describing: classification))")
        let (get, postError) = try await withTLSTransport { base in
            let transport = ResilientTransport(wrapping: base) { _ in quickRetries() }
            let get = try await transport.send(HTTPRequest(url: server.url("/jobs")), context: realContext())
            let postError = await failure {
                _ = try await transport.send(
                    HTTPRequest(method: .post, url: server.url("/submit"), body: Data("job".utf8)),
                    context: realContext())
            }
            return (get, postError)
        }
        await server.stop()
        #expect(String(decoding: get.body, as: UTF8.self) == "listed")
        #expect(server.requestCount("/jobs") == 2)
        #expect(postError != nil)
        #expect(server.requestCount("/submit") == 2, "one POST above, and one through the pipeline: not retried")
    }

    @Test("A refused stream (REFUSED_STREAM) is transient and marked not sent")
    func refusedStream() async throws {
        let server = try await TLSTestServer(.http2, script: ["/busy": [.refuseStream]])
        let error = try await withTLSTransport { transport in
            await failure {
                _ = try await transport.send(
                    HTTPRequest(method: .post, url: server.url("/busy"), body: Data("x".utf8)), context: realContext())
            }
        }
        await server.stop()
        let classification = classify(error)
        #expect(classification?.isTransient == true, "\(String(describing: error))")
        #expect(classification?.requestWasNotSent == true, "\(String(describing: error))")
    }

    @Test("A TLS connection cut mid-body without close_notify is a transient truncation")
    func tlsCutMidBody() async throws {
        let server = try await TLSTestServer(.http1, script: ["/cut": [.cutTLS(declared: 1000, partial: 100)]])
        let error = try await withTLSTransport { transport in
            await failure { _ = try await transport.send(HTTPRequest(url: server.url("/cut")), context: realContext()) }
        }
        await server.stop()
        let classification = classify(error)
        #expect(classification?.code == .truncatedResponse, "\(String(describing: error))")
        #expect(classification?.isTransient == true)
    }

    @Test("An untrusted certificate fails the handshake: not transient, NET_005, says why")
    func untrustedCertificate() async throws {
        let server = try await TLSTestServer(.http2, script: ["/hello": [.ok("unreachable")]])
        let error = try await withTLSTransport(trustsTestAuthority: false) { transport in
            await failure {
                _ = try await transport.send(HTTPRequest(url: server.url("/hello")), context: realContext())
            }
        }
        await server.stop()
        let classification = classify(error)
        #expect(classification?.code == .certificateInvalid, "\(String(describing: error))")
        #expect(classification?.isTransient == false)
        #expect(
            classification?.message?.contains("TLS handshake failed") == true, "\(String(describing: classification))")
        #expect(server.requestCount("/hello") == 0)
    }

    @Test("A handshake with no common TLS version fails: not transient, NET_005, says why")
    func handshakeFailure() async throws {
        let server = try await TLSTestServer(
            .http2, script: ["/hello": [.ok("unreachable")]], minimumTLSVersion: .tlsv13)
        let error = try await withTLSTransport(maximumTLSVersion: .tlsv12) { transport in
            await failure {
                _ = try await transport.send(HTTPRequest(url: server.url("/hello")), context: realContext())
            }
        }
        await server.stop()
        let classification = classify(error)
        #expect(classification?.code == .certificateInvalid, "\(String(describing: error))")
        #expect(classification?.isTransient == false)
        #expect(
            classification?.message?.contains("TLS handshake failed") == true, "\(String(describing: classification))")
    }

    @Test("Server-sent events arrive one by one while the stream is open")
    func serverSentEvents() async throws {
        let events = [
            ": comment\nevent: job\ndata: {\"id\": 1}\nid: 1\n\n",
            "data: line one\r\ndata: line two\r\n\r\n",
            "retry: 2500\ndata: last\n\n",
        ]
        let server = try await TLSTestServer(.http2, script: ["/events": [.events(events, gap: .milliseconds(30))]])
        let received = try await withTLSTransport { transport in
            let response = try await transport.stream(
                HTTPRequest(url: server.url("/events"), headers: ["Accept": "text/event-stream"]),
                context: realContext())
            #expect(response.headers["Content-Type"] == "text/event-stream")
            var received: [ServerSentEvent] = []
            for try await event in ServerSentEvents(response.body) { received.append(event) }
            return received
        }
        await server.stop()
        #expect(
            received == [
                ServerSentEvent(type: "job", data: "{\"id\": 1}", lastEventID: "1"),
                ServerSentEvent(data: "line one\nline two", lastEventID: "1"),
                ServerSentEvent(data: "last", lastEventID: "1", retry: .milliseconds(2500)),
            ])
    }

    @Test("A streamed response body is not capped in total: ten 400-byte chunks pass a 1000-byte cap")
    func streamedBodyUncapped() async throws {
        let server = try await TLSTestServer(
            .http2,
            script: [
                "/events": [
                    .events(Array(repeating: String(repeating: "z", count: 400), count: 10), gap: .milliseconds(1))
                ]
            ])
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.maximumResponseSize = 1000
        let (bytes, error) = try await withTLSTransport(configuration) { transport in
            let response = try await transport.stream(HTTPRequest(url: server.url("/events")), context: realContext())
            var bytes = 0
            let error = await failure {
                for try await chunk in response.body { bytes += chunk.count }
            }
            return (bytes, error)
        }
        await server.stop()
        #expect(error == nil, "\(String(describing: error))")
        #expect(bytes == 4000)
    }

    @Test("An event over the cap fails once and the events end there: asking again reads nothing past it")
    func eventCapIsFinal() async throws {
        let events = ["data: small\n\n", "data: " + String(repeating: "z", count: 1500) + "\n\n", "data: after\n\n"]
        let server = try await TLSTestServer(.http2, script: ["/events": [.events(events, gap: .milliseconds(1))]])
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.maximumResponseSize = 1000
        let (received, errors) = try await withTLSTransport(configuration) { transport in
            let response = try await transport.stream(HTTPRequest(url: server.url("/events")), context: realContext())
            var iterator = ServerSentEvents(response.body).makeAsyncIterator()
            var received: [String] = []
            var errors: [FailureCode] = []
            // A consumer that logs a failure and asks again, as a loop skipping bad events does.
            for _ in 0..<5 {
                do {
                    guard let event = try await iterator.next() else { break }
                    received.append(event.data)
                } catch {
                    errors.append(classify(error)?.code ?? .unknown)
                    #expect((error as? TransportError)?.url == server.url("/events"))
                }
            }
            return (received, errors)
        }
        await server.stop()
        #expect(received == ["small"])
        #expect(errors == [.responseTooLarge])
    }

    @Test("A request body streamed chunk by chunk arrives whole")
    func streamedUpload() async throws {
        let server = try await TLSTestServer(.http2, script: ["/upload": [.echoLength]])
        let chunks = AsyncStream<Data> { continuation in
            for _ in 0..<5 { continuation.yield(Data(repeating: 0x41, count: 1000)) }
            continuation.finish()
        }
        let body = try await withTLSTransport { transport in
            let response = try await transport.stream(
                HTTPRequest(method: .post, url: server.url("/upload")), uploading: chunks, length: nil,
                context: realContext())
            var body = Data()
            for try await chunk in response.body { body.append(chunk) }
            return String(decoding: body, as: UTF8.self)
        }
        await server.stop()
        #expect(body.hasPrefix("5000 bytes"), "\(body)")
    }
}
