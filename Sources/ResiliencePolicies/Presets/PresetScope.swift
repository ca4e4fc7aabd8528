/// The retry budget, circuit breaker and server-quota pacing that several pipelines built from one preset
/// share: one scope per host (or per any group of keys the caller names), so that many quiet keys of one
/// server are judged together.
///
/// A pipeline built without a scope owns its budget and breaker, so each key is judged by its own traffic.
/// A key of an app that sends a request every minute never sees the 10–40 calls a breaker needs to trip, and
/// its budget cannot tell a first failure from an outage. The keys of one host usually fail together (one
/// server, one load balancer, one network path), so pooling their evidence is what Finagle's and gRPC's
/// per-client budgets and Envoy's per-host outlier detection do: build one scope per host and pass it to the
/// pipeline of every key of that host.
///
/// ```swift
/// let scope = PresetScope("api.example.com", preset: .interactive, clock: clock)
/// let jobs = Pipeline.preset(.interactive, clock: clock, scope: scope)
/// let profile = Pipeline.preset(.interactive, clock: clock, scope: scope)   // same budget, same breaker
/// ```
///
/// A quota the server advertises (`RateLimit`, `Retry-After` on a 200) is shared too: servers count quotas per
/// client, not per endpoint, so a spent quota learnt on one key holds back the others. The other stages
/// (deadlines, retry policy, client-side limiter) stay per pipeline. ``PresetScopes`` hands out one scope per
/// name.
public final class PresetScope: Sendable, CustomStringConvertible {
    /// The scope's name (a host, or the name the caller chose).
    public let name: String
    /// The retry budget every pipeline of the scope draws from; `nil` when the preset has none.
    public let budget: RetryBudget?
    /// The circuit breaker every pipeline of the scope goes through; `nil` when the preset has none.
    public let breaker: (any BreakerPolicy)?
    /// The server-quota pacing every pipeline of the scope follows; `nil` when the preset has none.
    public let serverQuota: ServerQuotaLimiter?

    /// Creates a scope holding a new budget, breaker and server-quota limiter built from `preset`'s settings.
    ///
    /// - Parameters:
    ///   - name: The scope's name (a host, or a name of the caller's choosing), for descriptions.
    ///   - preset: Whose ``PipelinePreset/retryBudget``, ``PipelinePreset/breaker`` and
    ///     ``PipelinePreset/serverQuota`` the scope builds; the pipelines that use the scope take their other
    ///     stages from their own preset.
    ///   - clock: The clock of the retry budget's window. Default: `.continuous`.
    ///   - random: Jitter for the breaker's open time; seed it for reproducible schedules. Default: a new
    ///     system-seeded source.
    public init(
        _ name: String, preset: PipelinePreset, clock: ResilienceClock = .continuous,
        random: SharedRandomSource = SharedRandomSource()
    ) {
        self.name = name
        budget = preset.retryBudget.map { RetryBudget($0, clock: clock) }
        breaker = preset.breaker?.makeBreaker(random: random)
        serverQuota = preset.serverQuota.map { ServerQuotaLimiter($0) }
    }

    /// `scope(api.example.com)`.
    public var description: String { "scope(\(name))" }
}

/// The ``PresetScope``s of a process, one per name, each built on first use from one preset: hand
/// ``scope(named:)`` a request's host and every key of that host shares a budget and a breaker.
///
/// Thread-safe (a small lock; a scope is built outside it and the first one stored wins). The directory holds
/// its scopes weakly: a scope lives while a pipeline (or anything else) holds it, so when a
/// `PipelineRegistry` evicts the idle pipelines of a host, its scope goes with them, and memory follows the
/// hosts in use rather than every host the process ever called. The next request to that host builds a fresh
/// scope. Names whose scopes have gone are dropped as the directory grows (amortised O(1) per new name).
///
/// ```swift
/// let scopes = PresetScopes(.standard, clock: clock)
/// let registry = PipelineRegistry(clock: clock) { key in
///     Pipeline.preset(.standard, clock: clock, scope: scopes.scope(named: host(of: key)))
/// }
/// ```
public final class PresetScopes: Sendable {
    /// The preset whose budget and breaker every scope builds.
    public let preset: PipelinePreset
    private let clock: ResilienceClock
    private let random: SharedRandomSource
    private let directory = LockedState(initialState: Directory())

    /// The scopes by name, held weakly, and the size at which the names of scopes that have gone are dropped.
    private struct Directory {
        var entries: [String: WeakScope] = [:]
        var purgeAt = 64

        /// Drops the names whose scopes have gone once the table has doubled since the last time.
        mutating func purgeIfGrown() {
            guard entries.count >= purgeAt else { return }
            entries = entries.filter { $0.value.scope != nil }
            purgeAt = max(64, entries.count * 2)
        }
    }

    /// A scope the directory does not keep alive.
    private struct WeakScope {
        weak var scope: PresetScope?
    }

    /// Creates an empty directory of scopes.
    ///
    /// - Parameters:
    ///   - preset: Whose ``PipelinePreset/retryBudget``, ``PipelinePreset/breaker`` and
    ///     ``PipelinePreset/serverQuota`` each scope builds.
    ///   - clock: The clock of every scope's retry budget. Default: `.continuous`.
    ///   - random: Jitter for every scope's breaker. Default: a new system-seeded source.
    public init(
        _ preset: PipelinePreset, clock: ResilienceClock = .continuous,
        random: SharedRandomSource = SharedRandomSource()
    ) {
        self.preset = preset
        self.clock = clock
        self.random = random
    }

    /// The scope called `name`: the one pipelines of that name hold, or a new one built from the preset.
    ///
    /// - Parameter name: A host, or any name the caller groups keys under.
    public func scope(named name: String) -> PresetScope {
        if let existing = directory.withLock({ $0.entries[name]?.scope }) { return existing }
        let built = PresetScope(name, preset: preset, clock: clock, random: random)
        return directory.withLock { directory in
            if let raced = directory.entries[name]?.scope { return raced }
            directory.entries[name] = WeakScope(scope: built)
            directory.purgeIfGrown()
            return built
        }
    }

    /// How many names the directory holds, alive or not (for tests of its bound).
    var storedNameCount: Int { directory.withLock { $0.entries.count } }

    /// The names of the scopes alive now (held by some pipeline), sorted.
    public var names: [String] {
        directory.withLock { directory in directory.entries.filter { $0.value.scope != nil }.keys.sorted() }
    }
}
