import Foundation

/// Where concrete types meet: register sources in code, each with the default pipeline preset or a per-source
/// override, and get an ``Aggregator`` whose sources run through their own pipelines, a secured transport for
/// the sources to use, a telemetry recorder, a health report and one honest user-facing message.
///
/// - Pipelines come from a ``PipelineRegistry`` keyed by source id: the factory builds
///   ``CompositionRootConfiguration/preset``; a registration with a preset or a customisation pins an
///   override for that source only.
/// - Failures are classified by ``CompositionRootConfiguration/classifiers`` composed through
///   ``CompositeErrorClassifier`` (``TransportErrorClassifier/standard`` by default).
/// - ``transport`` is the injected (or URLSession) transport, optionally wrapped by a per-host
///   ``ResilientTransport``, wrapped by ``SecureTransport`` so blocked plaintext requests never leave, nor
///   plaintext redirect hops to hosts the policy does not allow (the policy is in effect while the transports
///   under it follow redirects).
/// - Events go to ``recorder`` (and to the extra sink given at creation); ``health()`` evaluates the rules.
///
/// ```swift
/// var root = CompositionRoot<Job>(.interactive, clock: clock)
/// root.register(greenhouse)                                             // the default preset
/// root.register(lever) { $0.retry = CategoryRetryPolicy.standard }      // swap one source's retry policy
/// root.register(workable) { $0.breaker = .rateLimit(.strict) }          // or its breaker
/// print(root.configurationDescription)
/// let result = try await root.makeAggregator().fetch(SourceQuery(text: "swift"))
/// let message = root.present(result)    // "Showing jobs from 4 of 6 sources. …"
/// ```
///
/// A value type built once at start-up. Copies share the registry, recorder, cache and transport, so build
/// the aggregator once (its pipelines keep breaker and budget state between fetches).
public struct CompositionRoot<Item: Sendable>: Sendable {
    /// The settings every source starts from.
    public let configuration: CompositionRootConfiguration
    /// The source of time for pipelines, deadlines, the cache and the recorder.
    public let clock: ResilienceClock
    /// The random source for jitter, breakers and limiters (seed it for reproducible schedules).
    public let random: SharedRandomSource
    /// The pipelines, one per source id.
    public let pipelines: PipelineRegistry
    /// Classifies every failure: the configured classifiers, then Core's universal rules.
    public let classifier: CompositeErrorClassifier
    /// Records every event for statistics and health.
    public let recorder: TelemetryRecorder
    /// Where events go: the recorder and the extra sink given at creation, if any.
    public let telemetry: any TelemetrySink
    /// The transport sources should send through: secured, and per-host resilient if configured.
    public let transport: any HTTPTransport
    /// The cache of last good results, if configured.
    public let cache: SourceCache<Item>?
    /// A key for de-duplicating merged items, if any.
    public var deduplicationKey: (@Sendable (Item) -> String)?
    private var entries: [Entry] = []
    /// Overrides of sources not registered yet, applied when they are (see ``register(_:timeout:usesCache:preset:customize:)``).
    private var earlyOverrides: [SourceID: EarlyOverride] = [:]

    /// An override made before its source was registered: its label and the settings its pipeline was built
    /// from (`nil` for a hand-built pipeline).
    private struct EarlyOverride: Sendable {
        var label: String
        var settings: PipelinePreset?
    }

    private struct Entry: Sendable {
        var registration: SourceRegistration<Item>
        var override: String?
        /// The settings its pipeline was built from (its registration's preset and customisation, then each
        /// ``CompositionRoot/override(_:_:)``); `nil` after a hand-built pipeline replaced it.
        var settings: PipelinePreset?
    }

    /// Creates a root. `baseTransport` replaces the URLSession transport (a scripted one in tests); it is
    /// still wrapped by the host pipeline (if configured) and the secure-transport policy. `telemetry`
    /// receives every event besides ``recorder``.
    ///
    /// - Parameters:
    ///   - configuration: The defaults every source starts from.
    ///   - clock: The source of time for pipelines, deadlines, the cache and the recorder.
    ///   - random: The random source for jitter, breakers and limiters.
    ///   - baseTransport: Replaces the URLSession transport; `nil` for URLSession.
    ///   - telemetry: An extra sink besides ``recorder``.
    ///   - deduplicationKey: A key for de-duplicating merged items.
    public init(
        _ configuration: CompositionRootConfiguration = .standard,
        clock: ResilienceClock = .continuous,
        random: SharedRandomSource = SharedRandomSource(),
        baseTransport: (any HTTPTransport)? = nil,
        telemetry: (any TelemetrySink)? = nil,
        deduplicationKey: (@Sendable (Item) -> String)? = nil
    ) {
        self.configuration = configuration
        self.clock = clock
        self.random = random
        self.deduplicationKey = deduplicationKey
        let preset = configuration.preset
        classifier = CompositeErrorClassifier(configuration.classifiers)
        let recorder = TelemetryRecorder(configuration: configuration.recorder, clock: clock)
        self.recorder = recorder
        let sink: any TelemetrySink = telemetry.map { MultiplexingSink([recorder, $0]) } ?? recorder
        self.telemetry = sink
        pipelines = PipelineRegistry(configuration.registry, clock: clock, telemetry: sink) { _ in
            Pipeline.preset(preset, clock: clock, random: random)
        }
        cache = configuration.cache.map { SourceCache<Item>(configuration: $0, clock: clock) }
        var stack: any HTTPTransport = baseTransport ?? URLSessionTransport(configuration: configuration.session)
        if let hostPreset = configuration.hostPipeline {
            let hosts = PipelineRegistry(configuration.registry, clock: clock, telemetry: sink) { _ in
                Pipeline.preset(hostPreset, clock: clock, random: random)
            }
            stack = ResilientTransport(wrapping: stack, classifier: classifier) { hosts.pipeline(for: $0) }
        }
        if let store = configuration.httpCacheStore {
            stack = CachingTransport(wrapping: stack, store: store, policy: configuration.httpCachePolicy)
        }
        transport = SecureTransport(wrapping: stack, policy: configuration.secureTransport)
    }

    /// Registers `source` with the default preset, or with `preset` and/or `customize` applied to it as an
    /// override for this source only. Registering the same id again replaces the earlier registration.
    ///
    /// An ``override(_:_:)`` or ``override(_:pipeline:)`` made before the source's first registration holds
    /// when it is registered without a `preset` or `customize`, whichever order the set-up code runs in; a
    /// registration with either starts from what it is given, as a re-registration does.
    ///
    /// A `preset` without a ``PipelinePreset/connectivity`` monitor gets the configured preset's, so the root's
    /// one monitor covers this source too (with the preset's own ``PipelinePreset/connectivityWait``; set that
    /// to `nil` in `customize` for a source that never waits).
    ///
    /// ```swift
    /// root.register(feed, timeout: .seconds(5)) { $0.breaker = .failureRatio(.standard) }
    /// ```
    public mutating func register(
        _ source: some Source<Item>, timeout: Duration? = nil, usesCache: Bool = true,
        preset: PipelinePreset? = nil, customize: ((inout PipelinePreset) -> Void)? = nil
    ) {
        let key = source.id.rawValue
        pipelines.pin(key)
        let early = earlyOverrides.removeValue(forKey: source.id)
        var settings = preset ?? configuration.preset
        // One monitor on the root covers every pipeline: a preset of the source's own (`.background`) names none.
        if settings.connectivity == nil { settings.connectivity = configuration.preset.connectivity }
        var entry = Entry(
            registration: SourceRegistration(source, timeout: timeout, usesCache: usesCache), override: nil,
            settings: settings)
        if preset != nil || customize != nil {
            customize?(&settings)
            pipelines.setOverride(for: key, Pipeline.preset(settings, clock: clock, random: random))
            entry.override = preset == nil ? "customized" : "preset"
            entry.settings = settings
        } else if let early {
            // Overridden before it was registered: the registry holds that pipeline already.
            entry.override = early.label
            entry.settings = early.settings
        } else {
            pipelines.removeOverride(for: key)
        }
        upsert(entry)
    }

    /// Swaps the pipeline of one source for its current settings adjusted by `customize`: the preset and
    /// customisation it was registered with, and every earlier override of it, stay (the configured preset for a
    /// source whose pipeline was hand-built, or that is not registered yet). Other sources keep theirs. A source
    /// not registered yet keeps the override when it is registered without a preset or customisation of its own.
    ///
    /// ```swift
    /// root.override("lever-globex") { $0.retry = StandardRetryPolicy.background }
    /// ```
    public mutating func override(_ id: SourceID, _ customize: (inout PipelinePreset) -> Void) {
        let index = entries.firstIndex { $0.registration.id == id }
        let current = index.map { entries[$0].settings } ?? earlyOverrides[id]?.settings
        var settings = current ?? configuration.preset
        customize(&settings)
        record(id, pipeline: Pipeline.preset(settings, clock: clock, random: random), label: "customized", settings)
    }

    /// Gives one source a hand-built pipeline. A source not registered yet keeps it when it is registered without
    /// a preset or customisation of its own.
    public mutating func override(_ id: SourceID, pipeline: any ResiliencePipeline) {
        record(id, pipeline: pipeline, label: "custom", nil)
    }

    /// Pins `pipeline` for `id` and notes the override on its entry, or keeps it for the registration to come.
    private mutating func record(
        _ id: SourceID, pipeline: any ResiliencePipeline, label: String, _ settings: PipelinePreset?
    ) {
        pipelines.setOverride(for: id.rawValue, pipeline)
        if let index = entries.firstIndex(where: { $0.registration.id == id }) {
            entries[index].override = label
            entries[index].settings = settings
        } else {
            earlyOverrides[id] = EarlyOverride(label: label, settings: settings)
        }
    }

    /// The registered sources' ids, in registration order.
    public var sourceIDs: [SourceID] { entries.map(\.registration.id) }

    /// The pipeline source `id` runs through (built on first use).
    public func pipeline(for id: SourceID) -> any ResiliencePipeline {
        pipelines.pipeline(for: id)
    }

    /// The aggregator over every registered source, each with its own pipeline from the registry. Build it
    /// once and reuse it: the pipelines keep their state between fetches. It follows the preset's
    /// ``PipelinePreset/connectivity`` monitor, if any: a fetch started offline waits for the network, and one
    /// that ends offline says so.
    public func makeAggregator() -> Aggregator<Item> {
        var aggregator = Aggregator<Item>(
            configuration: configuration.aggregator, clock: clock, classifier: classifier, telemetry: telemetry,
            cache: cache, deduplicationKey: deduplicationKey)
        aggregator.connectivity = configuration.preset.connectivity
        for entry in entries {
            var registration = entry.registration
            registration.pipeline = pipelines.pipeline(for: registration.id)
            aggregator.register(registration)
        }
        return aggregator
    }

    /// The message to show for `result`, or `nil` when every source delivered live items; the configured
    /// presenter decides from the whole report.
    public func present(_ result: AggregateResult<Item>) -> UserFacingError? {
        configuration.presenter.present(result.presentationContext)
    }

    /// Statistics of the recorded events (the recorder's whole window by default).
    public func statistics(window: Duration? = nil) -> TelemetryStatistics {
        recorder.statistics(window: window)
    }

    /// Evaluates the configured health rules against the recorded events now.
    public func health() -> HealthReport {
        HealthMonitor(recorder: recorder, rules: configuration.healthRules).evaluate()
    }

    /// One line describing source `id`: kind, deadline, whether it is overridden, and its pipeline's stages.
    public func sourceDescription(_ id: SourceID) -> String? {
        guard let entry = entries.first(where: { $0.registration.id == id }) else { return nil }
        var registration = entry.registration
        registration.pipeline = pipelines.pipeline(for: registration.id)
        let pipeline = registration.pipeline(defaultTimeout: configuration.aggregator.sourceTimeout)
        return "\(registration.id) [\(registration.kind)] \"\(registration.displayName)\" "
            + "cache: \(registration.usesCache && cache != nil ? "yes" : "no"), "
            + "pipeline (\(entry.override.map { "override: \($0)" } ?? "default")): "
            + pipeline.pipelineDescription
    }

    /// The whole configuration for debugging: transport, classifier, presenter, aggregator, then one line
    /// per source with its kind, settings and pipeline stages.
    public var configurationDescription: String {
        let aggregator = configuration.aggregator
        let policy = configuration.secureTransport
        let allowed = policy.allowedInsecureHosts.sorted().joined(separator: ", ")
        var lines = [
            "composition root: \(entries.count) sources",
            "  transport: secure(plaintext: \(policy.action.rawValue), allowed: [\(allowed)])"
                + (configuration.httpCacheStore == nil ? "" : " → http cache")
                + (configuration.hostPipeline == nil ? "" : " → per-host pipeline") + " → \(baseTransportName)",
            "  classifier: composite(\(classifier.classifiers.map { "\(type(of: $0))" }.joined(separator: ", ")))",
            "  presenter: \(type(of: configuration.presenter))",
            "  aggregator: maxConcurrent \(aggregator.maximumConcurrentSources), timeout "
                + "\(aggregator.sourceTimeout.map { "\($0)" } ?? "none"), completion \(aggregator.completion), "
                + "cache: \(configuration.cache == nil ? "off" : "on")",
            "  sources:",
        ]
        lines += entries.compactMap { sourceDescription($0.registration.id).map { "    " + $0 } }
        return lines.joined(separator: "\n")
    }

    private var baseTransportName: String {
        guard let secure = transport as? SecureTransport else { return "\(type(of: transport))" }
        var inner = secure.base
        if let cache = inner as? CachingTransport { inner = cache.wrapped }
        if let resilient = inner as? ResilientTransport { return "\(type(of: resilient.base))" }
        return "\(type(of: inner))"
    }

    private mutating func upsert(_ entry: Entry) {
        if let index = entries.firstIndex(where: { $0.registration.id == entry.registration.id }) {
            entries[index] = entry
        } else {
            entries.append(entry)
        }
    }

}

/// The settings of a ``CompositionRoot``: one place for the defaults every registered source starts from.
///
/// Start from ``standard``, ``interactive`` or ``background`` and change the `var`s you need:
///
/// ```swift
/// var configuration = CompositionRootConfiguration.interactive
/// configuration.secureTransport = .block
/// configuration.aggregator.itemNoun = "jobs"
/// ```
public struct CompositionRootConfiguration: Sendable {
    /// The pipeline every source gets unless its registration overrides it.
    public var preset: PipelinePreset = .standard
    /// How the aggregator fans out and when a fetch is done.
    public var aggregator: AggregatorConfiguration = .standard
    /// Classifiers consulted in order before Core's universal rules (cancellation, ``ClassifiedError``);
    /// composed through ``CompositeErrorClassifier``. Put your own in front of the transport's.
    public var classifiers: [any ErrorClassifier] = [TransportErrorClassifier.standard]
    /// Turns a failure and a multi-source report into one honest message.
    public var presenter: any ErrorPresenter = DefaultErrorPresenter()
    /// What happens to plaintext `http://` requests and redirect hops (loopback allowed, everything else upgraded
    /// by default).
    public var secureTransport: SecureTransportPolicy = .standard
    /// The limits of the URLSession transport the root builds when none is injected.
    public var session: URLSessionTransportConfiguration = .standard
    /// A per-host pipeline run inside the transport (``ResilientTransport``), for limits shared by every source
    /// on one host; `nil` (the default) for none, since each source already runs through its own pipeline and a
    /// second retry stage would multiply retries.
    public var hostPipeline: PipelinePreset? = nil
    /// The cache of last good results per source and query; `nil` for no cache.
    public var cache: SourceCacheConfiguration? = .standard
    /// Where the root's private HTTP cache (``CachingTransport``, RFC 9111) keeps responses: it answers fresh
    /// responses, revalidates stale ones with `ETag` / `Last-Modified`, and answers within `stale-if-error`
    /// when the transport fails. An in-memory store of 16 MiB by default (a ``SQLiteHTTPCacheStore`` to keep
    /// responses across launches); `nil` for no HTTP cache.
    public var httpCacheStore: (any HTTPCacheStore)? = InMemoryHTTPCacheStore()
    /// The rules of the root's HTTP cache.
    public var httpCachePolicy = HTTPCachePolicy()
    /// How much the telemetry recorder keeps.
    public var recorder: TelemetryRecorder.Configuration = .standard
    /// Bounds of the per-source pipeline registry.
    public var registry: PipelineRegistry.Configuration = .standard
    /// The rules the health report evaluates.
    public var healthRules: [HealthRule] = HealthRule.standard()

    /// Creates the standard configuration; adjust the `var`s as needed.
    public init() {}

    /// General use: the standard pipeline preset and aggregator, the standard session, a cache.
    public static var standard: CompositionRootConfiguration { CompositionRootConfiguration() }

    /// A person waiting at the screen: interactive preset, aggregator and session.
    public static var interactive: CompositionRootConfiguration {
        var configuration = CompositionRootConfiguration()
        configuration.preset = .interactive
        configuration.aggregator = .interactive
        configuration.session = .interactive
        return configuration
    }

    /// Background refresh: background preset, aggregator and session.
    public static var background: CompositionRootConfiguration {
        var configuration = CompositionRootConfiguration()
        configuration.preset = .background
        configuration.aggregator = .background
        configuration.session = .background
        return configuration
    }
}
