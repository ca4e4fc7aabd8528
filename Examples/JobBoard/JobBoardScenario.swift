import Foundation
import ResilienceKit
import ResilienceTesting

/// The demo's world: an embedded FaultServer playing six job boards, and the composition root wired to it.
struct JobBoardScenario {
    /// What one source stands for and what the server does to it.
    struct Role: Sendable {
        var id: SourceID
        var simulates: String
    }

    let server: FaultServer
    let root: CompositionRoot<Job>
    let aggregator: Aggregator<Job>
    let roles: [Role]
    /// The device's network path, which `--offline-at` takes away for a while.
    let network = SimulatedNetwork()
    /// The pipelines' waits for the network.
    let connectivityWaits = ConnectivityWaitCounter()
    /// The feed warnings the Hooli source reported (an undeclared entity costs its text, not the feed).
    let hooliWarnings = LockedState<Set<String>>(initialState: [])

    /// Starts the server (throws ``FaultServerError`` when it cannot bind) and registers the six sources.
    /// `baseTransport` replaces the URLSession transport (the Hummingbird example passes AsyncHTTPClient's);
    /// `telemetry` receives every event besides the root's recorder.
    init(
        options: DemoOptions, baseTransport: (any HTTPTransport)? = nil, telemetry: (any TelemetrySink)? = nil
    ) throws {
        var serverConfiguration = FaultServerConfiguration()
        serverConfiguration.seed = options.seed
        serverConfiguration.lifetime = options.serverLifetime
        let server = try FaultServer(configuration: serverConfiguration)
        self.server = server
        Self.script(server, chaos: options.chaos)

        var configuration = CompositionRootConfiguration.interactive
        configuration.aggregator.itemNoun = "jobs"
        configuration.aggregator.sourceTimeout = .seconds(6)
        // Everything here is loopback http://. 127.0.0.1 stands for the HTTPS boards; "localhost" plays a
        // host that serves only plaintext, which the policy blocks before a byte is sent.
        configuration.secureTransport = SecureTransportPolicy(action: .block, allowedInsecureHosts: ["127.0.0.1"])
        // Loopback-sized waits so the demo takes seconds: 3 attempts, 100 ms ×2, hints honoured up to 2 s.
        configuration.preset.retry = StandardRetryPolicy(
            maxAttempts: 3, backoff: .exponential(base: .milliseconds(100), multiplier: 2, cap: .seconds(1)),
            jitter: .equal, retryAfter: RetryAfterRule(maximum: .seconds(2)))
        configuration.preset.attemptTimeout = .seconds(2)
        configuration.preset.totalDeadline = .seconds(5)
        configuration.session.defaultAttemptTimeout = .seconds(2)
        // The device's network path: an offline spell is waited out (within the 5 s deadline) instead of
        // spending retries, and the aggregator waits for it before starting a fetch.
        configuration.preset.connectivity = network.monitor
        let base = baseTransport ?? URLSessionTransport(configuration: configuration.session)
        let sinks: [any TelemetrySink] = [connectivityWaits] + (telemetry.map { [$0] } ?? [])

        var root = CompositionRoot<Job>(
            configuration, random: SharedRandomSource(seed: options.seed),
            baseTransport: network.transport(wrapping: base), telemetry: MultiplexingSink(sinks),
            deduplicationKey: { $0.url })
        let transport = root.transport
        let baseURL = server.baseURL.absoluteString
        let plaintextBase = "http://localhost:\(server.port)"

        root.register(
            JSONAPISource<GreenhouseBoard.Posting>(
                id: "greenhouse-acme", displayName: "Acme (Greenhouse)", transport: transport,
                envelope: GreenhouseBoard.self, items: \.jobs
            ) { _, _ in HTTPRequest(url: URL(string: baseURL + "/v1/boards/acme/jobs")!) }
            .mapItems {
                Job(
                    title: $0.title, company: "Acme", location: $0.location.name, url: $0.absoluteURL,
                    source: "greenhouse-acme")
            }
        )
        root.register(
            JSONAPISource<LeverPosting>(id: "lever-globex", displayName: "Globex (Lever)", transport: transport) {
                _, _ in HTTPRequest(url: URL(string: baseURL + "/v0/postings/globex")!)
            }
            .mapItems {
                Job(
                    title: $0.text, company: "Globex", location: $0.categories.location, url: $0.hostedUrl,
                    source: "lever-globex")
            }
        )
        root.register(
            FeedSource(
                id: "hooli-atom", displayName: "Hooli (Atom)", url: URL(string: baseURL + "/careers/hooli.atom")!,
                transport: transport
            ) { [hooliWarnings] item in
                hooliWarnings.withLock { $0.formUnion(item.warnings.map { "\(item.title): \($0)" }) }
                return Job(feedItem: item, company: "Hooli")
            }
        )
        root.register(
            FeedSource(
                id: "initech-rss", displayName: "Initech (RSS, plaintext)",
                url: URL(string: plaintextBase + "/feeds/initech.rss")!, transport: transport
            ) { Job(feedItem: $0, company: "Initech") }
        )
        root.register(
            FeedSource(
                id: "umbrella-rss", displayName: "Umbrella (RSS)", url: URL(string: baseURL + "/feeds/umbrella.rss")!,
                transport: transport
            ) { Job(feedItem: $0, company: "Umbrella") }
        )
        // The one-line per-source override: this board enforces a quota, so its breaker is a rate-limit
        // breaker that opens on the first 429 and keeps later rounds from asking again.
        root.register(
            JSONAPISource<WorkableBoard.Result>(
                id: "workable-soylent", displayName: "Soylent (Workable)", transport: transport,
                envelope: WorkableBoard.self, items: \.results
            ) { _, _ in HTTPRequest(url: URL(string: baseURL + "/spi/v3/soylent/jobs")!) }
            .mapItems {
                Job(title: $0.title, company: "Soylent", location: $0.city, url: $0.url, source: "workable-soylent")
            }
        ) { $0.breaker = .rateLimit(.strict) }

        self.root = root
        aggregator = root.makeAggregator()
        let chaos =
            options.chaos > 0 ? "; seeded chaos: resets and 503s on \(Int(options.chaos * 100)) % of requests" : ""
        roles = [
            Role(id: "greenhouse-acme", simulates: "Greenhouse-style JSON board" + chaos),
            Role(id: "lever-globex", simulates: "Lever-style JSON board" + chaos),
            Role(
                id: "hooli-atom",
                simulates: "Atom feed with an ETag (later rounds: 304 Not Modified) and an undeclared entity"),
            Role(
                id: "initech-rss",
                simulates:
                    "RSS feed on a plaintext-only host (simulated: \"localhost\"; the policy allows only 127.0.0.1)"),
            Role(id: "umbrella-rss", simulates: "RSS feed truncated mid-item (HTTP 200)"),
            Role(id: "workable-soylent", simulates: "JSON board: answers once, then 429 with Retry-After: 30"),
        ]
    }

    /// What the feed sources did beyond delivering jobs: conditional requests answered 304, and what an
    /// undeclared entity cost.
    func feedNotes() -> [String] {
        let requests = server.requests(to: "/careers/hooli.atom")
        let conditional = requests.filter { $0.headers["If-None-Match"] != nil }.count
        var notes = [
            "hooli-atom: \(requests.count) requests, \(conditional) conditional (If-None-Match); each 304 Not Modified "
                + "served the remembered jobs as fresh"
        ]
        notes += hooliWarnings.withLock { $0 }.sorted().map { "hooli-atom warning (job still delivered): \($0)" }
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

extension Job {
    init(feedItem: FeedItem, company: String) {
        self.init(
            title: feedItem.title, company: company,
            location: feedItem.summary.components(separatedBy: ".").first ?? "",
            url: feedItem.link?.absoluteString ?? feedItem.id, source: feedItem.source.rawValue)
    }
}
