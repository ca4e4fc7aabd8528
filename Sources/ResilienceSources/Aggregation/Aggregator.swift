import ResilienceCore

/// Fetches from many sources at once and returns one honest answer: the merged items and what happened to
/// each source.
///
/// - Fans out concurrently, at most ``AggregatorConfiguration/maximumConcurrentSources`` at a time.
/// - Runs each source through its own ``ResiliencePipeline`` (retry, breaker, … built elsewhere) whose
///   outermost stage is the source's deadline (``SourceRegistration/pipeline(defaultTimeout:)``); a source
///   that overruns it is cancelled and reported as timed out.
/// - Reports every source (``SourceReport``): succeeded, failed with its classification, skipped because its
///   breaker is open, served from cache (stale results marked with their age), served by a fallback.
/// - Applies a ``CompletionPolicy``; when it can no longer be met, cancels the rest and throws
///   ``AggregationError``. Cancelling the calling task cancels every source promptly and throws
///   `CancellationError`; a fetch whose task is already cancelled calls no source.
/// - Merges in registration order and de-duplicates with an optional key.
/// - Emits `source-failed`, `partial-results` and `fetch-completed` events.
///
/// ```swift
/// var jobs = Aggregator<Job>(configuration: .interactive, clock: clock, telemetry: recorder, cache: cache)
/// jobs.register(greenhouse, pipeline: standardPipeline)
/// jobs.register(leverFeed, pipeline: feedPipeline, timeout: .seconds(5))
/// let result = try await jobs.fetch(SourceQuery(text: "swift"))
/// ```
public struct Aggregator<Item: Sendable>: Sendable {
    /// How it fans out and when it is done.
    public var configuration: AggregatorConfiguration
    /// The source of time for deadlines, durations and the cache.
    public var clock: ResilienceClock
    /// Classifies source failures (cancellation and ``ClassifiedError`` are always recognised). By default
    /// Core's ``HTTPStatusTable``, so a source's rejected response (``HTTPStatusError``) reads the same here as
    /// through the transport's classifier.
    public var classifier: any ErrorClassifier
    /// Where events go.
    public var telemetry: (any TelemetrySink)?
    /// Last good results: stored on success, served (marked with their age) when a source fails.
    public var cache: SourceCache<Item>?
    /// A key for de-duplication: of items with equal keys, the first in merge order is kept.
    public var deduplicationKey: (@Sendable (Item) -> String)?
    /// Where the network path comes from; `nil` for none. With one, a fetch started while the device is
    /// offline first waits for the path (at most a source's timeout, ``AggregatorConfiguration/sourceTimeout``,
    /// or 15 s), unless every source's pipeline waits for it itself (``ResiliencePipeline/waitsForConnectivity``,
    /// within the source's deadline: the fetch then adds no second wait); and a fetch that ends offline says so
    /// (``AggregateReport/wasOffline``, so the presenter tells the person they are offline instead of blaming
    /// each source).
    public var connectivity: (any ConnectivityMonitor)?
    /// The registered sources, in registration (and merge) order.
    public private(set) var registrations: [SourceRegistration<Item>] = []
    private var indexByID: [SourceID: Int] = [:]

    /// Creates an aggregator with no sources.
    ///
    /// - Parameters:
    ///   - configuration: How it fans out, each source's deadline, and when it is done.
    ///   - clock: The source of time for deadlines, durations and the cache.
    ///   - classifier: Classifies source failures. Default: Core's ``HTTPStatusTable`` for rejected responses.
    ///   - telemetry: Where events go; `nil` for nowhere.
    ///   - cache: Last good results, served when a source fails; `nil` for none.
    ///   - deduplicationKey: A key for de-duplicating merged items; `nil` to keep all.
    public init(
        configuration: AggregatorConfiguration = .standard,
        clock: ResilienceClock = .continuous,
        classifier: any ErrorClassifier = CompositeErrorClassifier([HTTPStatusTable()]),
        telemetry: (any TelemetrySink)? = nil,
        cache: SourceCache<Item>? = nil,
        deduplicationKey: (@Sendable (Item) -> String)? = nil
    ) {
        self.configuration = configuration
        self.clock = clock
        self.classifier = classifier
        self.telemetry = telemetry
        self.cache = cache
        self.deduplicationKey = deduplicationKey
    }

    /// Registers `source`, run through `pipeline`, with an optional deadline overriding the configuration's.
    /// A source registered again under the same id replaces the earlier registration in place.
    public mutating func register(
        _ source: some Source<Item>, pipeline: any ResiliencePipeline = PassthroughPipeline(),
        timeout: Duration? = nil, usesCache: Bool = true
    ) {
        register(SourceRegistration(source, pipeline: pipeline, timeout: timeout, usesCache: usesCache))
    }

    /// Registers a prepared registration (replacing one with the same id in place).
    public mutating func register(_ registration: SourceRegistration<Item>) {
        if let index = indexByID[registration.id] {
            registrations[index] = registration
        } else {
            indexByID[registration.id] = registrations.count
            registrations.append(registration)
        }
    }

    /// Removes the source with `id`, if registered.
    public mutating func unregister(_ id: SourceID) {
        guard let index = indexByID.removeValue(forKey: id) else { return }
        registrations.remove(at: index)
        for later in index..<registrations.count { indexByID[registrations[later].id] = later }
    }

    /// The registered sources' ids, in order.
    public var sourceIDs: [SourceID] { registrations.map(\.id) }

    /// One line per source: id, kind, deadline, cache use and pipeline stages, for debugging.
    public var configurationDescription: String {
        let header =
            "aggregator(maxConcurrent: \(configuration.maximumConcurrentSources), "
            + "timeout: \(configuration.sourceTimeout.map { "\($0)" } ?? "none"), completion: \(configuration.completion))"
        let lines = registrations.map { registration in
            let pipeline = registration.pipeline(defaultTimeout: configuration.sourceTimeout)
            return "  \(registration.id) [\(registration.kind)] cache: "
                + "\(registration.usesCache && cache != nil ? "yes" : "no"), pipeline: \(pipeline.pipelineDescription)"
        }
        return ([header] + lines).joined(separator: "\n")
    }

    /// Fetches from every source; see the type's documentation for the rules.
    public func fetch(_ query: SourceQuery = SourceQuery()) async throws -> AggregateResult<Item> {
        try await fetch(query) { _, _, _ in }
    }

    /// Fetches from every source, calling `onSourceCompleted` (report, completed, total) as each finishes.
    public func fetch(
        _ query: SourceQuery, onSourceCompleted: @Sendable (SourceReport, Int, Int) -> Void
    ) async throws -> AggregateResult<Item> {
        let run = AggregationRun(aggregator: self, query: query)
        return try await run.execute(onSourceCompleted: onSourceCompleted)
    }

    /// The fetch as an `AsyncSequence`: one element per finished source, then the result. Ending the iteration
    /// early cancels the fetch.
    public func progress(
        for query: SourceQuery = SourceQuery()
    ) -> AsyncThrowingStream<AggregateProgress<Item>, any Error> {
        let (stream, continuation) = AsyncThrowingStream<AggregateProgress<Item>, any Error>.makeStream()
        let task = Task {
            do {
                let result = try await fetch(query) { report, completed, total in
                    continuation.yield(.sourceCompleted(report, completed: completed, total: total))
                }
                continuation.yield(.finished(result))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}

/// How an ``Aggregator`` fans out and when it is done.
public struct AggregatorConfiguration: Hashable, Sendable {
    /// The most sources fetched at the same time; at least 1 (0 or less is clamped to 1, here and in `init`).
    public var maximumConcurrentSources: Int = 6 {
        didSet { maximumConcurrentSources = max(1, maximumConcurrentSources) }
    }
    /// Each source's deadline (from its start), unless its registration overrides it; `nil` for none.
    public var sourceTimeout: Duration? = .seconds(15)
    /// When the fetch counts as a success.
    public var completion: CompletionPolicy = .bestEffort
    /// What the items are called in messages (`"jobs"`).
    public var itemNoun: String = "items"
    /// The operation name in contexts and events.
    public var operation: String = "fetch"

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - maximumConcurrentSources: The most sources fetched at the same time; at least 1. Default: `6`.
    ///   - sourceTimeout: Each source's deadline (from its start), unless its registration overrides it; `nil` for
    ///     none. Default: `.seconds(15)`.
    ///   - completion: When the fetch counts as a success. Default: `.bestEffort`.
    ///   - itemNoun: What the items are called in messages (`"jobs"`). Default: `"items"`.
    ///   - operation: The operation name in contexts and events. Default: `"fetch"`.
    public init(
        maximumConcurrentSources: Int = 6, sourceTimeout: Duration? = .seconds(15),
        completion: CompletionPolicy = .bestEffort, itemNoun: String = "items", operation: String = "fetch"
    ) {
        self.maximumConcurrentSources = max(1, maximumConcurrentSources)
        self.sourceTimeout = sourceTimeout
        self.completion = completion
        self.itemNoun = itemNoun
        self.operation = operation
    }

    /// Six at a time, 15 s per source, best effort.
    public static let standard = AggregatorConfiguration()
    /// For a screen someone is waiting on: eight at a time, 8 s per source, best effort.
    public static let interactive = AggregatorConfiguration(maximumConcurrentSources: 8, sourceTimeout: .seconds(8))
    /// For background refresh: two at a time, 60 s per source, at least half the sources.
    public static let background = AggregatorConfiguration(
        maximumConcurrentSources: 2, sourceTimeout: .seconds(60), completion: .ratio(0.5))
}
