import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

/// AuthenticatingTransport against FaultServer's protected routes over real sockets.
@Suite("AuthenticatingTransport over FaultServer")
struct AuthenticatingTransportTests {
    @Test("20 concurrent 401s cause exactly one refresh, and all 20 replay with the new credential")
    func singleFlight() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/me", .requireHeader(oneOf: ["Bearer token-1"], then: .json(#"{"name":"Ada"}"#)))
        let provider = CountingCredentialProvider(initial: .bearer("stale"), refreshDelay: .milliseconds(200))
        let sink = RecordingTelemetrySink()
        let transport = AuthenticatingTransport(wrapping: sharedTransport, provider: provider)
        let url = server.url("/me")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    try await transport.send(HTTPRequest(url: url), context: realContext(telemetry: sink)).status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 20))
        #expect(provider.refreshCount.value == 1)
        #expect(server.requestCount == 40)
        #expect(server.requests.filter { $0.headers["Authorization"] == "Bearer stale" }.count == 20)
        #expect(sink.events.filter { $0.kind == .credentialRefreshed }.map(\.detail) == ["succeeded"])
    }

    @Test("A failed refresh fails every waiting request as authentication / session expired")
    func refreshFailure() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/me", .requireHeader(oneOf: ["Bearer never"]))
        let provider = CountingCredentialProvider(initial: .bearer("stale"), failRefresh: true)
        let transport = AuthenticatingTransport(wrapping: sharedTransport, provider: provider)
        let url = server.url("/me")
        let classifications = await withTaskGroup(of: FailureClassification?.self) { group in
            for _ in 0..<5 {
                group.addTask {
                    classify(
                        await #expect(throws: (any Error).self) {
                            try await transport.send(HTTPRequest(url: url), context: realContext())
                        })
                }
            }
            return await group.reduce(into: [FailureClassification?]()) { $0.append($1) }
        }
        #expect(provider.refreshCount.value == 1)
        for classification in classifications {
            #expect(classification?.category == .authentication)
            #expect(classification?.code == .sessionExpired)
        }
        #expect(server.requestCount == 5)
    }

    @Test("A replay that is rejected again is returned, not refreshed again")
    func replayOnce() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/me", .requireHeader(oneOf: []))
        let provider = CountingCredentialProvider(initial: .bearer("stale"), refreshDelay: .zero)
        let transport = AuthenticatingTransport(wrapping: sharedTransport, provider: provider)
        let response = try await transport.send(HTTPRequest(url: server.url("/me")), context: realContext())
        #expect(response.status == 401)
        #expect(server.requestCount == 2)
        #expect(provider.refreshCount.value == 1)
    }

    @Test("At most 5 refreshes in 30 s on the injected clock, then refreshLimitReached")
    func refreshLimit() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/me", .requireHeader(oneOf: []))
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let provider = CountingCredentialProvider(initial: .bearer("stale"), refreshDelay: .zero)
        let transport = AuthenticatingTransport(wrapping: sharedTransport, provider: provider)
        func context() -> ResilienceContext {
            ResilienceContext(key: "auth", deadline: clock.now().advanced(by: .seconds(3_600)), clock: clock)
        }
        for _ in 0..<5 {
            #expect(try await transport.send(HTTPRequest(url: server.url("/me")), context: context()).status == 401)
            manual.advance(by: .seconds(1))
        }
        let limited = classify(
            await #expect(throws: (any Error).self) {
                try await transport.send(HTTPRequest(url: server.url("/me")), context: context())
            })
        #expect(limited?.code == .refreshLimitReached)
        #expect(limited?.category == .authentication)
        #expect(provider.refreshCount.value == 5)
        manual.advance(by: .seconds(30))
        #expect(try await transport.send(HTTPRequest(url: server.url("/me")), context: context()).status == 401)
        #expect(provider.refreshCount.value == 6)
    }

    @Test("A credential about to expire is refreshed before sending; the refresh request is never intercepted")
    func proactiveRefreshAndBypass() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/me", .requireHeader(oneOf: ["Bearer token-1"]))
        server.script("/oauth/token", .json(#"{"access_token":"x"}"#))
        let manual = ManualClock()
        let clock = ResilienceClock.manual(manual)
        let provider = CountingCredentialProvider(
            initial: .bearer("old", expiresAt: clock.now().advanced(by: .seconds(10))), refreshDelay: .zero,
            expiry: clock.now().advanced(by: .seconds(3_600)))
        let transport = AuthenticatingTransport(wrapping: sharedTransport, provider: provider)
        let context = ResilienceContext(key: "auth", deadline: clock.now().advanced(by: .seconds(60)), clock: clock)
        #expect(try await transport.send(HTTPRequest(url: server.url("/me")), context: context).status == 200)
        #expect(provider.refreshCount.value == 1)
        #expect(server.requestCount(for: "/me") == 1)
        let refresh = try await transport.send(
            HTTPRequest(method: .post, url: server.url("/oauth/token")), context: context)
        #expect(refresh.status == 200)
        #expect(server.requests(to: "/oauth/token").first?.headers["Authorization"] == nil)
    }

    @Test("A credential in a header of its own is not sent to another origin when the server redirects there")
    func ownCredentialHeaderStaysWithItsOrigin() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/me", .redirect(to: other.url("/landing").absoluteString))
        other.script("/landing", .ok("there"))
        let provider = CountingCredentialProvider(
            initial: Credential(headerName: "X-Auth-Token", headerValue: "s3cret"))
        let transport = AuthenticatingTransport(wrapping: sharedTransport, provider: provider)
        let response = try await transport.send(HTTPRequest(url: server.url("/me")), context: realContext())
        #expect(String(decoding: response.body, as: UTF8.self) == "there")
        #expect(server.requests(to: "/me").first?.headers["X-Auth-Token"] == "s3cret")
        #expect(other.requests(to: "/landing").first?.headers["X-Auth-Token"] == nil, "the credential left its origin")
    }
}
