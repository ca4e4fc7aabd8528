import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

/// Conditional GET against a real loopback FaultServer through the composition root's transport (its HTTP
/// cache over URLSession): a `no-cache` feed is revalidated on every fetch. Real time, generous bounds.
@Suite("Feed conditional GET (FaultServer)")
struct FeedConditionalGetLoopbackTests {
    static let rss = """
        <?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Initech</title>
        <item><title>TPS Report Engineer</title><link>/jobs/42</link></item></channel></rss>
        """

    @Test("A 304 answers the second fetch and the remembered items are served")
    func notModified() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script(
            "/initech.rss",
            .ok(
                Self.rss,
                headers: ["ETag": "\"v1\"", "Content-Type": "application/rss+xml", "Cache-Control": "no-cache"]),
            .requireHeader("If-None-Match", oneOf: ["\"v1\""], then: .status(304), otherwise: .status(500)))
        var configuration = CompositionRootConfiguration.interactive
        configuration.secureTransport = SecureTransportPolicy(action: .block, allowedInsecureHosts: ["127.0.0.1"])
        let root = CompositionRoot<String>(configuration, random: SharedRandomSource(seed: 1))
        let url = server.baseURL.appendingPathComponent("initech.rss")
        let feed = FeedSource(id: "initech", url: url, transport: root.transport)
        let context = ResilienceContext(key: "initech")
        let first = try await feed.fetchResult(SourceQuery(), context: context)
        let second = try await feed.fetchResult(SourceQuery(), context: context)
        #expect(first.items.map(\.title) == ["TPS Report Engineer"])
        #expect(first.items.first?.link == server.baseURL.appendingPathComponent("jobs/42"))
        #expect(second.items == first.items)
        let requests = server.requests(to: "/initech.rss")
        #expect(requests.count == 2)
        #expect(requests.last?.headers["If-None-Match"] == "\"v1\"")
    }

    @Test("The root's transport holds a redirect hop to its plaintext policy: no plaintext to a host it does not allow")
    func redirectHopObeysThePlaintextPolicy() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/initech.rss", .redirect(to: "http://localhost:\(other.port)/initech.rss"))
        other.script("/initech.rss", .ok(Self.rss))
        var configuration = CompositionRootConfiguration.interactive
        configuration.secureTransport = SecureTransportPolicy(action: .block, allowedInsecureHosts: ["127.0.0.1"])
        let root = CompositionRoot<String>(configuration, random: SharedRandomSource(seed: 1))
        let error = await #expect(throws: (any Error).self) {
            try await root.transport.send(
                HTTPRequest(url: server.url("/initech.rss")),
                context: ResilienceContext(key: "initech", telemetry: root.telemetry))
        }
        #expect(error.map { root.classifier.classification(of: $0).code } == .insecureTransportBlocked)
        #expect(other.requestCount == 0)
        #expect(root.statistics().insecureTransportBlocks == 1)
    }
}
