import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

/// The job-board scenario at small scale against a real loopback FaultServer through the real URLSession
/// transport built by the composition root. Real time, generous bounds.
@Suite("Job board end to end (FaultServer)")
struct JobBoardEndToEndTests {
    struct Posting: Decodable, Sendable {
        var title: String
    }

    struct Envelope: Decodable, Sendable {
        var jobs: [Posting]
    }

    static let board = #"{"jobs":[{"title":"iOS Engineer"},{"title":"SRE"}]}"#
    static let lever = #"[{"title":"Server-side Swift"}]"#
    static let atom = """
        <?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom"><title>Hooli</title>
        <id>urn:hooli</id><updated>2026-11-20T09:00:00Z</updated><entry><title>Principal Engineer</title>
        <id>urn:hooli:1</id><updated>2026-11-20T09:00:00Z</updated></entry></feed>
        """
    static let truncatedRSS = """
        <?xml version="1.0"?><rss version="2.0"><channel><title>Umbrella</title><item><title>Research
        """

    @Test("Six sources: typed failures, insecure-transport, the retry hint, and \"Showing jobs from 3 of 6 sources\"")
    func sixSources() async throws {
        let server = try FaultServer()
        defer { server.stop() }
        server.script("/greenhouse", .json(Self.board))
        server.script("/lever", .json(Self.lever))
        server.script("/hooli.atom", .ok(Self.atom, headers: ["Content-Type": "application/atom+xml"]))
        server.script("/initech.rss", .ok(Self.atom))
        server.script("/umbrella.rss", .ok(Self.truncatedRSS, headers: ["Content-Type": "application/rss+xml"]))
        server.script("/workable", .rateLimited(retryAfter: "120"))

        var configuration = CompositionRootConfiguration.interactive
        configuration.aggregator.itemNoun = "jobs"
        configuration.aggregator.sourceTimeout = .seconds(20)
        configuration.secureTransport = SecureTransportPolicy(action: .block, allowedInsecureHosts: ["127.0.0.1"])
        var root = CompositionRoot<String>(configuration, random: SharedRandomSource(seed: 7))
        let transport = root.transport
        let base = server.baseURL.absoluteString
        let plaintext = "http://localhost:\(server.port)"

        root.register(
            JSONAPISource<Posting>(
                id: "greenhouse", transport: transport, envelope: Envelope.self, items: \.jobs
            ) { _, _ in HTTPRequest(url: URL(string: base + "/greenhouse")!) }.mapItems(\.title))
        root.register(
            JSONAPISource<Posting>(id: "lever", transport: transport) { _, _ in
                HTTPRequest(url: URL(string: base + "/lever")!)
            }.mapItems(\.title))
        root.register(
            FeedSource(id: "hooli", url: URL(string: base + "/hooli.atom")!, transport: transport) { $0.title })
        root.register(
            FeedSource(id: "initech", url: URL(string: plaintext + "/initech.rss")!, transport: transport) { $0.title })
        root.register(
            FeedSource(id: "umbrella", url: URL(string: base + "/umbrella.rss")!, transport: transport) { $0.title })
        root.register(
            JSONAPISource<Posting>(
                id: "workable", transport: transport, envelope: Envelope.self, items: \.jobs
            ) { _, _ in HTTPRequest(url: URL(string: base + "/workable")!) }.mapItems(\.title)
        ) { $0.breaker = .rateLimit(.strict) }

        let started = ContinuousClock.now
        let result = try await root.makeAggregator().fetch()
        #expect(started.duration(to: .now) < .seconds(20))
        let report = result.report

        for healthy in ["greenhouse", "lever", "hooli"] {
            #expect(report.report(for: SourceID(healthy))?.status == .succeeded, "\(report)")
        }
        #expect(Set(result.items) == ["iOS Engineer", "SRE", "Server-side Swift", "Principal Engineer"])

        let umbrella = try #require(report.report(for: "umbrella"))
        #expect(umbrella.status == .failed)
        #expect(umbrella.itemCount == 0)
        #expect(umbrella.classification?.category == .invalidResponse)

        let initech = try #require(report.report(for: "initech"))
        #expect(initech.status == .failed)
        #expect(initech.classification?.category == .insecureTransport)
        #expect(server.requestCount(for: "/initech.rss") == 0)

        let workable = try #require(report.report(for: "workable"))
        #expect(workable.status == .failed)
        #expect(workable.classification?.category == .rateLimited)
        #expect(workable.classification?.retryAfter == .seconds(120))

        let message = try #require(root.present(result))
        #expect(message.message.contains("Showing jobs from 3 of 6 sources"), "\(message)")
        #expect(root.statistics().insecureTransportBlocks == 1)
        #expect(root.health().alert("insecure-transport-blocked") != nil)
    }
}
