/// The pipelines of a process, one per key (a ``SourceID`` raw value or a host): a default factory plus
/// per-key overrides set in code, bounded, with idle keys evicted.
///
/// Each key gets its own pipeline instance, so stateful stages (retry budget, breakers, limiters) are per
/// key. Overrides and the pipelines of pinned keys (``pin(_:)``: the composition root pins every registered
/// source) are never evicted, so a registered source keeps one breaker and one budget however long it is
/// idle; other pipelines built by the factory are evicted when unused for ``Configuration/idleTimeout``
/// or, when ``Configuration/maximumKeys`` is reached, least recently used first. Safe to share across tasks: a small lock, and the factory is never called while holding it.
///
/// ```swift
/// let registry = PipelineRegistry(clock: clock) { key in
///     Pipeline { RetryStrategy(policy: .standard, budget: RetryBudget(clock: clock)) }
/// }
/// registry.setOverride(for: "indeed", Pipeline { RetryStrategy(policy: StandardRetryPolicy.background) })
/// let pipeline = registry.pipeline(for: "indeed")
/// ```
///
/// With a `telemetry` sink, every pipeline the registry builds or installs is announced to it
/// (``ResiliencePipeline/announceCreation(key:to:clock:)``), so metrics show each key's breaker state from the
/// pipeline's creation.
public final class PipelineRegistry: Sendable {
    /// Bounds and eviction.
    public struct Configuration: Sendable, Hashable {
        /// The most factory-built pipelines kept at once (default 1,000).
        public var maximumKeys: Int = 1_000
        /// How long an unused factory-built pipeline is kept (default 10 minutes).
        public var idleTimeout: Duration = .seconds(600)

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - maximumKeys: The most factory-built pipelines of unpinned keys kept at once.
        ///   - idleTimeout: How long an unused factory-built pipeline of an unpinned key is kept.
        public init(maximumKeys: Int = 1_000, idleTimeout: Duration = .seconds(600)) {
            self.maximumKeys = maximumKeys
            self.idleTimeout = idleTimeout
        }

        /// 1,000 keys, 10 minutes idle.
        public static let standard = Configuration()
    }

    private struct Entry: Sendable {
        var pipeline: any ResiliencePipeline
        var lastUsed: ResilienceInstant
    }

    private struct State {
        /// The factory-built pipelines of unpinned keys, least recently used first: eviction takes the oldest.
        var entries = RecencyTable<String, Entry>()
        /// The factory-built pipelines of pinned keys, never evicted.
        var pinnedEntries: [String: Entry] = [:]
        var overrides: [String: any ResiliencePipeline] = [:]
        var pinned: Set<String> = []
        var evictions = 0

        /// The factory-built pipeline of `key`, marked used at `now`, or `nil` when there is none.
        mutating func use(_ key: String, now: ResilienceInstant) -> (any ResiliencePipeline)? {
            if pinnedEntries[key] != nil {
                pinnedEntries[key]?.lastUsed = now
                return pinnedEntries[key]?.pipeline
            }
            guard var entry = entries[key] else { return nil }
            entry.lastUsed = now
            entries.setNewest(entry, for: key)
            return entry.pipeline
        }

        /// Removes the unpinned pipelines unused for `idleTimeout`, then the least recently used ones until
        /// `room` more fit within `limit`: each step takes the oldest, so the cost is what is removed.
        mutating func evict(now: ResilienceInstant, idleTimeout: Duration, making room: Int, limit: Int) {
            while let oldest = entries.oldest, oldest.value.lastUsed.duration(to: now) >= idleTimeout {
                entries.removeOldest()
                evictions += 1
            }
            while room > 0, entries.count + room > limit, entries.removeOldest() != nil {
                evictions += 1
            }
        }
    }

    /// The bounds.
    public let configuration: Configuration
    private let clock: ResilienceClock
    private let factory: @Sendable (String) -> any ResiliencePipeline
    private let state = LockedState(initialState: State())
    /// Where each new pipeline is announced, if anywhere.
    public let telemetry: (any TelemetrySink)?

    /// Creates a registry that builds a key's pipeline with `factory` the first time the key is used.
    ///
    /// - Parameters:
    ///   - configuration: Bounds and eviction of factory-built pipelines.
    ///   - clock: The source of time for idle eviction.
    ///   - telemetry: Where each pipeline built or installed is announced (``ResilienceEventKind/pipelineCreated``).
    ///   - factory: Builds the pipeline for a key; called outside the registry's lock.
    public init(
        _ configuration: Configuration = .standard,
        clock: ResilienceClock = .continuous,
        telemetry: (any TelemetrySink)? = nil,
        factory: @escaping @Sendable (String) -> any ResiliencePipeline
    ) {
        self.configuration = configuration
        self.clock = clock
        self.telemetry = telemetry
        self.factory = factory
    }

    /// The pipeline for `key`: its override, its cached pipeline, or a new one from the factory.
    public func pipeline(for key: String) -> any ResiliencePipeline {
        let now = clock.now()
        let existing = state.withLock { state -> (any ResiliencePipeline)? in
            state.overrides[key] ?? state.use(key, now: now)
        }
        if let existing { return existing }
        let built = factory(key)
        let (pipeline, stored) = state.withLock { state -> (any ResiliencePipeline, Bool) in
            if let pinned = state.overrides[key] { return (pinned, false) }
            if let raced = state.use(key, now: now) { return (raced, false) }
            let entry = Entry(pipeline: built, lastUsed: now)
            if state.pinned.contains(key) {
                state.pinnedEntries[key] = entry
            } else {
                evict(&state, now: now, making: 1)
                state.entries.setNewest(entry, for: key)
            }
            return (built, true)
        }
        if stored { built.announceCreation(key: key, to: telemetry, clock: clock) }
        return pipeline
    }

    /// The pipeline for a source (keyed by its raw value).
    public func pipeline(for source: SourceID) -> any ResiliencePipeline {
        pipeline(for: source.rawValue)
    }

    /// Pins `pipeline` for `key`, replacing any cached or previous override.
    public func setOverride(for key: String, _ pipeline: any ResiliencePipeline) {
        state.withLock { state in
            state.overrides[key] = pipeline
            state.entries.removeValue(for: key)
            state.pinnedEntries[key] = nil
        }
        pipeline.announceCreation(key: key, to: telemetry, clock: clock)
    }

    /// Keeps `key`'s pipeline (factory-built or overridden) for as long as the key is pinned: it is never
    /// evicted, so every user of the key shares one pipeline and its state.
    public func pin(_ key: String) {
        state.withLock { state in
            state.pinned.insert(key)
            if let entry = state.entries.removeValue(for: key) { state.pinnedEntries[key] = entry }
        }
    }

    /// Lets `key`'s factory-built pipeline be evicted again when idle, counting its idle time from now: it is
    /// evicted once unused for ``Configuration/idleTimeout`` after this call, or sooner when
    /// ``Configuration/maximumKeys`` needs room.
    public func unpin(_ key: String) {
        let now = clock.now()
        state.withLock { state in
            state.pinned.remove(key)
            guard var entry = state.pinnedEntries.removeValue(forKey: key) else { return }
            entry.lastUsed = now
            state.entries.setNewest(entry, for: key)
        }
    }

    /// The pinned keys, sorted.
    public var pinnedKeys: [String] { state.withLock { $0.pinned.sorted() } }

    /// Removes the override for `key`; the factory applies again.
    public func removeOverride(for key: String) {
        _ = state.withLock { $0.overrides.removeValue(forKey: key) }
    }

    /// Drops idle factory-built pipelines now; returns how many were removed.
    @discardableResult
    public func evictIdle() -> Int {
        let now = clock.now()
        return state.withLock { state in
            let before = state.evictions
            evict(&state, now: now, making: 0)
            return state.evictions - before
        }
    }

    /// The keys with a factory-built pipeline, sorted.
    public var cachedKeys: [String] {
        state.withLock { ($0.entries.keys + $0.pinnedEntries.keys).sorted() }
    }

    /// The keys with an override, sorted.
    public var overriddenKeys: [String] { state.withLock { $0.overrides.keys.sorted() } }

    /// How many pipelines were evicted so far.
    public var evictionCount: Int { state.withLock { $0.evictions } }

    private func evict(_ state: inout State, now: ResilienceInstant, making room: Int) {
        state.evict(
            now: now, idleTimeout: configuration.idleTimeout, making: room, limit: max(configuration.maximumKeys, 1))
    }
}
