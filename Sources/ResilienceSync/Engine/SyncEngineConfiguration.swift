import Foundation
import ResilienceCore

extension SyncEngine {
    /// How a ``SyncEngine`` drains its queue.
    public struct Configuration: Sendable {
        /// Failed attempts (network errors, timeouts, other API errors; never 429s) after which a mutation's
        /// entity is marked failed and the mutation moves to the failed list; at least 1 (0 or less gives up after
        /// the first failure). A pending mutation that already has this many attempts (its move to the failed list
        /// was interrupted by a storage failure or a crash) is not sent again: the next pass moves it there.
        public var maxRetries = 5
        /// How many pending mutations a pass reads at a time; at least 1 (0 or less reads pages of 1).
        public var pageSize = 100
        /// The most creates sent in one batch request (when the request builder supports batches).
        public var maximumBatchSize = 50
        /// What a 409 answer means (see ``ConflictRules``): by default only a confirmed duplicate is synced.
        public var conflicts = ConflictRules()
        /// How long ``SyncEngine/run()`` waits after a pass that left work it could not send (failed
        /// attempts, a network found unreachable, a storage error) before it passes again, unless an enqueue,
        /// ``SyncEngine/requestSync()``, a network change or a reset wakes it sooner. Also the wait after a
        /// pipeline rejection that names no time. Default 30 s; at least 1 ms (zero or less waits 1 ms, so failing
        /// passes never follow each other without a pause).
        ///
        /// The interval is fixed: the engine keeps no backoff of its own. A spacing that grows with repeated
        /// failures is a policy of the pipeline, for example a circuit breaker stage that counts network errors
        /// and server errors: while it is open, its rejection names the instant it admits requests again, and
        /// ``SyncEngine/run()`` sleeps until then.
        public var pollInterval: Duration = .seconds(30)
        /// The telemetry key of the engine's events.
        public var telemetryKey = "sync"
        /// The metadata key under which the breaker's state is persisted in the store.
        public var breakerStateKey = "sync.breaker"
        /// The wall clock, used only to age a persisted cooldown across restarts. Defaults to `Date()`, the one
        /// documented place the engine reads the wall clock.
        public var currentDate: @Sendable () -> Date = { Date() }

        /// Creates a configuration with the defaults.
        public init() {}

        /// ``pageSize``, at least 1.
        var appliedPageSize: Int { max(1, pageSize) }

        /// ``maxRetries``, at least 1.
        var appliedMaxRetries: Int { max(1, maxRetries) }

        /// ``pollInterval``, at least 1 ms.
        var appliedPollInterval: Duration { max(pollInterval, .milliseconds(1)) }

        /// Five attempts, pages of 100, batches of 50, only confirmed duplicates synced on a 409.
        public static var standard: Configuration { Configuration() }
    }
}
