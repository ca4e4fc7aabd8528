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
    /// What happens to plaintext `http://` requests (loopback allowed, everything else upgraded by default).
    public var secureTransport: SecureTransportPolicy = .standard
    /// The limits of the URLSession transport the root builds when none is injected.
    public var session: URLSessionTransportConfiguration = .standard
    /// A per-host pipeline run inside the transport (``ResilientTransport``), for limits shared by every source
    /// on one host; `nil` (the default) for none, since each source already runs through its own pipeline and a
    /// second retry stage would multiply retries.
    public var hostPipeline: PipelinePreset? = nil
    /// The cache of last good results per source and query; `nil` for no cache.
    public var cache: SourceCacheConfiguration? = .standard
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
