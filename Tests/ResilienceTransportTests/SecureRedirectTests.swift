import Foundation
import ResilienceTesting
import Testing

@testable import ResilienceTransport

/// A redirect hop is held to the ``SecureTransportPolicy`` of the ``SecureTransport`` the request was sent
/// through, like the first request: over real loopback sockets, where `127.0.0.1` is the host the policy allows
/// in plaintext and `localhost` (the same address, another host name) one it does not.
@Suite("Secure transport policy on redirect hops (URLSessionTransport over FaultServer)")
struct SecureRedirectTests {
    /// Plaintext allowed to 127.0.0.1 only.
    static func policy(_ action: SecureTransportPolicy.Action) -> SecureTransportPolicy {
        SecureTransportPolicy(action: action, allowedInsecureHosts: ["127.0.0.1"])
    }

    /// `http://localhost:<port><path>` on `server`: the same socket, a host the policy does not allow.
    static func otherHost(_ server: FaultServer, _ path: String) -> String {
        "http://localhost:\(server.port)\(path)"
    }

    @Test("Blocked: an allowed plaintext request redirected to plaintext on another host fails before that host")
    func blockedHop() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/from", .redirect(to: Self.otherHost(other, "/landing?token=s3cret")))
        other.script("/landing", .ok("plaintext"))
        let sink = RecordingTelemetrySink()
        let transport = SecureTransport(wrapping: URLSessionTransport(), policy: Self.policy(.block))
        let error = await #expect(throws: (any Error).self) {
            try await transport.send(HTTPRequest(url: server.url("/from")), context: realContext(telemetry: sink))
        }
        #expect(classify(error)?.code == .insecureTransportBlocked, "\(String(describing: error))")
        #expect(classify(error)?.message?.contains("localhost") == true)
        // The first request reached the server, which answered with the redirect: the failure came after it.
        #expect(classify(error)?.requestWasNotSent == false, "\(String(describing: error))")
        #expect(server.requestCount(for: "/from") == 1)
        #expect(other.requestCount == 0, "the hop reached the host in plaintext")
        let blocked = try #require(sink.events.first { $0.kind == .insecureTransportBlocked })
        #expect(blocked.detail == Self.otherHost(other, "/landing"))
    }

    @Test("Upgrade: a plaintext hop to another host is sent over https, as the first request would be")
    func upgradedHop() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/from", .redirect(to: Self.otherHost(other, "/landing")))
        other.script("/landing", .ok("plaintext"))
        let transport = SecureTransport(wrapping: URLSessionTransport(), policy: Self.policy(.upgrade))
        let error = await #expect(throws: (any Error).self) {
            try await transport.send(HTTPRequest(url: server.url("/from")), context: realContext())
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
        let transport = SecureTransport(wrapping: URLSessionTransport(), policy: Self.policy(.block))
        let response = try await transport.send(
            HTTPRequest(url: server.url("/from"), headers: ["Authorization": "Bearer secret"]),
            context: realContext())
        #expect(String(decoding: response.body, as: UTF8.self) == "there")
        #expect(other.requests(to: "/landing").first?.headers["Authorization"] == nil)
    }
}
