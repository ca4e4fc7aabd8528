import Foundation
import ResilienceKit

/// Where the six boards live: the base URL of the boards served over HTTPS (in the demos, loopback http on
/// 127.0.0.1, which the policy allows as loopback) and the base URL of the host that serves its feed only in
/// plaintext.
struct JobBoardUpstreams: Sendable {
    var boards: URL
    var plaintextFeeds: URL
}

/// The job board's composition root: six sources on the ``JobBoardUpstreams``, one pipeline preset each.
struct JobBoardScenario {
    let root: CompositionRoot<Job>
    let aggregator: Aggregator<Job>
    /// The device's network path, which `--offline-at` takes away for a while.
    let network = SimulatedNetwork()
    /// The pipelines' waits for the network.
    let connectivityWaits = ConnectivityWaitCounter()
    /// The feed warnings the Hooli source reported (an undeclared entity costs its text, not the feed).
    let hooliWarnings = LockedState<Set<String>>(initialState: [])

    /// What the sources do with plaintext `http`: loopback (the library's `SecureTransportPolicy.standard` hosts:
    /// `localhost`, `127.0.0.1` and `::1`; in the demos, 127.0.0.1 stands for the HTTPS boards) may be reached
    /// over it; a request to any other plaintext host is blocked before a byte is sent.
    static let secureTransport = SecureTransportPolicy(
        action: .block, allowedInsecureHosts: SecureTransportPolicy.standard.allowedInsecureHosts)

    /// Registers the six sources against `upstreams`.
    /// `baseTransport` replaces the URLSession transport (the Hummingbird example passes AsyncHTTPClient's);
    /// `telemetry` receives every event besides the root's recorder; `seed` seeds the pipelines' jitter;
    /// `presenter` words the message for where it is shown (the Hummingbird example's web page has no pull to
    /// refresh).
    init(
        upstreams: JobBoardUpstreams, seed: UInt64, baseTransport: (any HTTPTransport)? = nil,
        telemetry: (any TelemetrySink)? = nil, presenter: (any ErrorPresenter)? = nil
    ) {
        var configuration = CompositionRootConfiguration.interactive
        if let presenter { configuration.presenter = presenter }
        configuration.aggregator.itemNoun = "jobs"
        configuration.aggregator.sourceTimeout = .seconds(6)
        // Loopback http:// is allowed: 127.0.0.1 stands for the HTTPS boards. A host that serves only
        // plaintext (in the demos, a name that is not loopback) is blocked before a byte is sent.
        configuration.secureTransport = Self.secureTransport
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
            configuration, random: SharedRandomSource(seed: seed),
            baseTransport: network.transport(wrapping: base), telemetry: MultiplexingSink(sinks),
            deduplicationKey: { $0.url })
        let transport = root.transport
        let baseURL = Self.trimmingSlash(upstreams.boards)
        let plaintextBase = Self.trimmingSlash(upstreams.plaintextFeeds)

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
    }

    /// `url` as a string without a trailing slash, so that paths can be appended.
    private static func trimmingSlash(_ url: URL) -> String {
        var text = url.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
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
