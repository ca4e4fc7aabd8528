import Foundation
import ResilienceKit
import ResilienceTesting

/// The six job boards as the demos play them: one loopback `FaultServer`, each path scripted to fail in its
/// own realistic way. It stands in for the real upstreams; the composition root (``JobBoardScenario``) only
/// sees the ``upstreams`` URLs.
struct DemoBoards: Sendable {
    /// What one source stands for and what the server does to it.
    struct Role: Sendable {
        var id: SourceID
        var simulates: String
    }

    /// The loopback server.
    let server: FaultServer
    /// What the server does to each source, in registration order.
    let roles: [Role]

    /// Starts the server on 127.0.0.1 (throws ``FaultServerError`` when it cannot bind) and scripts the boards.
    ///
    /// - Parameters:
    ///   - seed: The seed of the server's chaos.
    ///   - chaos: The probability of a TCP reset or a 503 on the two healthy boards (0 = calm).
    ///   - lifetime: How long the server serves.
    ///   - maximumRequests: How many requests it serves (each one recorded) before it stops.
    ///   - startsOverAtBounds: Whether it starts over (its log emptied, its scripts replayed) instead of stopping
    ///     at `lifetime` or `maximumRequests`.
    ///   - port: The port; 0 picks a free one.
    init(
        seed: UInt64, chaos: Double, lifetime: Duration,
        maximumRequests: Int = FaultServerConfiguration.standard.maximumRequests, startsOverAtBounds: Bool = false,
        port: UInt16 = 0
    ) throws {
        var configuration = FaultServerConfiguration()
        configuration.seed = seed
        configuration.lifetime = lifetime
        configuration.maximumRequests = maximumRequests
        configuration.startsOverAtBounds = startsOverAtBounds
        configuration.port = port
        server = try FaultServer(configuration: configuration)
        Self.script(server, chaos: chaos)
        let chaosNote = chaos > 0 ? "; seeded chaos: resets and 503s on \(Int(chaos * 100)) % of requests" : ""
        roles = [
            Role(id: "greenhouse-acme", simulates: "Greenhouse-style JSON board" + chaosNote),
            Role(id: "lever-globex", simulates: "Lever-style JSON board" + chaosNote),
            Role(
                id: "hooli-atom",
                simulates: "Atom feed with an ETag (later rounds: 304 Not Modified) and an undeclared entity"),
            Role(
                id: "initech-rss",
                simulates:
                    "RSS feed on a plaintext-only host (simulated: \"\(Self.plaintextHost)\"; the policy allows only loopback)"
            ),
            Role(id: "umbrella-rss", simulates: "RSS feed truncated mid-item (HTTP 200)"),
            Role(id: "workable-soylent", simulates: "JSON board: answers once, then 429 with Retry-After: 30"),
        ]
    }

    /// The host that plays a board serving only plaintext: not loopback (which the policy lets through), and
    /// under `.invalid` (RFC 2606), so it names no real host; the policy blocks it before it is looked up.
    static let plaintextHost = "plaintext-feeds.invalid"

    /// Where the sources find the boards: 127.0.0.1 plays the HTTPS boards, ``plaintextHost`` a host that serves
    /// only plaintext.
    var upstreams: JobBoardUpstreams {
        JobBoardUpstreams(boards: server.baseURL, plaintextFeeds: URL(string: "http://\(Self.plaintextHost)")!)
    }

    /// What the feed sources did beyond delivering jobs: conditional requests answered 304, and what an
    /// undeclared entity cost (`warnings`, the scenario's ``JobBoardScenario/hooliWarnings``).
    func feedNotes(warnings: Set<String>) -> [String] {
        let requests = server.requests(to: "/careers/hooli.atom")
        let conditional = requests.filter { $0.headers["If-None-Match"] != nil }.count
        var notes = [
            "hooli-atom: \(requests.count) requests, \(conditional) conditional (If-None-Match); each 304 Not Modified "
                + "served the remembered jobs as fresh"
        ]
        notes += warnings.sorted().map { "hooli-atom warning (job still delivered): \($0)" }
        return notes
    }

    private static func script(_ server: FaultServer, chaos: Double) {
        func board(_ body: String, contentType: String) -> Fault {
            guard chaos > 0 else { return .ok(body, headers: ["Content-Type": contentType]) }
            var profile = ChaosProfile()
            profile.reset = chaos / 2
            profile.serviceUnavailable = chaos / 2
            profile.successBody = body
            return .chaos(profile)
        }
        server.script("/v1/boards/acme/jobs", board(Fixtures.greenhouse, contentType: "application/json"))
        server.script("/v0/postings/globex", board(Fixtures.lever, contentType: "application/json"))
        // A feed server as feed readers meet it (no chaos here): an ETag on the full answer, 304 to a matching
        // If-None-Match.
        let hooli = Fault.ok(
            Fixtures.hooliAtom,
            headers: ["Content-Type": "application/atom+xml", "ETag": "\"hooli-1\"", "Cache-Control": "max-age=60"])
        server.script(
            "/careers/hooli.atom", hooli,
            .requireHeader("If-None-Match", oneOf: ["\"hooli-1\""], then: .status(304), otherwise: hooli))
        server.script("/feeds/initech.rss", .ok(Fixtures.initechRSS, headers: ["Content-Type": "application/rss+xml"]))
        server.script(
            "/feeds/umbrella.rss", .ok(Fixtures.umbrellaTruncatedRSS, headers: ["Content-Type": "application/rss+xml"]))
        server.script("/spi/v3/soylent/jobs", .json(Fixtures.workable), .rateLimited(retryAfter: "30"))
    }
}
