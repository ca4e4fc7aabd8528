import Foundation
import ResilienceTesting
import ResilienceTransport
import Testing

@testable import ResilienceAsyncHTTPClient

/// A redirect hop the transport follows itself is held to the `SecureTransportPolicy` of the `SecureTransport` the
/// request was sent through, like the first request: over real loopback sockets, where `127.0.0.1` is the host
/// the policy allows in plaintext and `localhost` (the same address, another host name) one it does not.
@Suite("Secure transport policy on redirect hops (AsyncHTTPClientTransport over FaultServer)")
struct SecureRedirectTests {
    /// Plaintext allowed to 127.0.0.1 only.
    static func policy(_ action: SecureTransportPolicy.Action) -> SecureTransportPolicy {
        SecureTransportPolicy(action: action, allowedInsecureHosts: ["127.0.0.1"])
    }

    @Test("Blocked: an allowed plaintext request redirected to plaintext on another host fails before that host")
    func blockedHop() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/from", .redirect(to: "http://localhost:\(other.port)/landing"))
        other.script("/landing", .ok("plaintext"))
        let sink = RecordingTelemetrySink()
        let error = await #expect(throws: (any Error).self) {
            try await withTransport { base in
                try await SecureTransport(wrapping: base, policy: Self.policy(.block))
                    .send(HTTPRequest(url: server.url("/from")), context: realContext(telemetry: sink))
            }
        }
        #expect(classify(error)?.code == .insecureTransportBlocked, "\(String(describing: error))")
        #expect(other.requestCount == 0, "the hop reached the host in plaintext")
        #expect(sink.events.contains { $0.kind == .insecureTransportBlocked })
    }

    @Test("Upgrade: a plaintext hop to another host is sent over https, as the first request would be")
    func upgradedHop() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/from", .redirect(to: "http://localhost:\(other.port)/landing", status: 307))
        other.script("/landing", .ok("plaintext"))
        let error = await #expect(throws: (any Error).self) {
            try await withTransport { base in
                try await SecureTransport(wrapping: base, policy: Self.policy(.upgrade))
                    .send(
                        HTTPRequest(method: .put, url: server.url("/from"), body: Data("x".utf8)),
                        context: realContext())
            }
        }
        // The upgraded hop speaks TLS to a plaintext port: a failed handshake, and no plaintext request there.
        #expect(classify(error)?.code == .certificateInvalid, "\(String(describing: error))")
        #expect(other.requestCount == 0, "the hop reached the host in plaintext")
    }

    @Test("A hop to a host the policy allows in plaintext is followed, credentials stripped as ever")
    func allowedHop() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/from", .redirect(to: other.url("/landing").absoluteString))
        other.script("/landing", .ok("there"))
        let response = try await withTransport { base in
            try await SecureTransport(wrapping: base, policy: Self.policy(.block))
                .send(
                    HTTPRequest(url: server.url("/from"), headers: ["Authorization": "Bearer secret"]),
                    context: realContext())
        }
        #expect(String(decoding: response.body, as: UTF8.self) == "there")
        #expect(other.requests(to: "/landing").first?.headers["Authorization"] == nil)
    }
}

/// A streamed request is not sent through `SecureTransport` (which wraps `send`), so the transport's own
/// `plaintextPolicy` holds it and its redirect hops to the same rule: over real loopback sockets, `127.0.0.1` allowed
/// in plaintext and `localhost` not.
@Suite("Secure transport policy on streamed requests (AsyncHTTPClientTransport over FaultServer)")
struct SecureStreamTests {
    static func configuration(_ action: SecureTransportPolicy.Action) -> AsyncHTTPClientTransportConfiguration {
        var configuration = AsyncHTTPClientTransportConfiguration()
        configuration.plaintextPolicy = SecureRedirectTests.policy(action)
        return configuration
    }

    static func localhost(_ server: FaultServer, _ path: String) -> URL {
        URL(string: "http://localhost:\(server.port)\(path)")!
    }

    @Test("Blocked: a plaintext stream to a host the policy does not allow fails with NET_010 before it is sent")
    func blockedStream() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/events", .respond(status: 200, headers: ["Content-Type": "text/event-stream"]))
        let sink = RecordingTelemetrySink()
        let error = await #expect(throws: (any Error).self) {
            try await withTransport(Self.configuration(.block)) { transport in
                _ = try await transport.stream(
                    HTTPRequest(url: Self.localhost(server, "/events")), context: realContext(telemetry: sink))
            }
        }
        #expect(classify(error)?.code == .insecureTransportBlocked, "\(String(describing: error))")
        #expect(server.requestCount == 0, "the stream reached the host in plaintext")
        #expect(sink.events.contains { $0.kind == .insecureTransportBlocked })
    }

    @Test("Upgrade: a plaintext stream to a host the policy does not allow is sent over https")
    func upgradedStream() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/events", .respond(status: 200, headers: ["Content-Type": "text/event-stream"]))
        let error = await #expect(throws: (any Error).self) {
            try await withTransport(Self.configuration(.upgrade)) { transport in
                _ = try await transport.stream(
                    HTTPRequest(url: Self.localhost(server, "/events")), context: realContext())
            }
        }
        // The upgraded request speaks TLS to a plaintext port: a failed handshake, and no plaintext request there.
        #expect(classify(error)?.code == .certificateInvalid, "\(String(describing: error))")
        #expect(server.requestCount == 0, "the stream reached the host in plaintext")
    }

    @Test("A streamed request redirected to plaintext on a host the policy does not allow is refused at the hop")
    func blockedStreamHop() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/from", .redirect(to: Self.localhost(other, "/events").absoluteString))
        other.script("/events", .respond(status: 200, headers: ["Content-Type": "text/event-stream"]))
        let sink = RecordingTelemetrySink()
        let error = await #expect(throws: (any Error).self) {
            try await withTransport(Self.configuration(.block)) { transport in
                _ = try await transport.stream(
                    HTTPRequest(url: server.url("/from")), context: realContext(telemetry: sink))
            }
        }
        #expect(classify(error)?.code == .insecureTransportBlocked, "\(String(describing: error))")
        #expect(server.requestCount == 1)
        #expect(other.requestCount == 0, "the hop reached the host in plaintext")
        #expect(sink.events.contains { $0.kind == .insecureTransportBlocked })
    }

    @Test("Under a SecureTransport the transport's policy applies as well, and the refusal is reported once")
    func nestedUnderSecureTransport() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/from", .redirect(to: Self.localhost(other, "/landing").absoluteString))
        other.script("/landing", .ok("plaintext"))
        let sink = RecordingTelemetrySink()
        let allowAll = SecureTransportPolicy(action: .allow)
        let error = await #expect(throws: (any Error).self) {
            try await withTransport(Self.configuration(.block)) { transport in
                try await SecureTransport(wrapping: transport, policy: allowAll)
                    .send(HTTPRequest(url: server.url("/from")), context: realContext(telemetry: sink))
            }
        }
        #expect(classify(error)?.code == .insecureTransportBlocked, "\(String(describing: error))")
        #expect(other.requestCount == 0, "the hop reached the host in plaintext")
        #expect(sink.events.filter { $0.kind == .insecureTransportBlocked }.count == 1)
    }
}
