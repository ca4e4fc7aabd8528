/// What an event reports. An open set: modules and third parties add kinds without breaking anyone.
public struct ResilienceEventKind: OpenVocabulary {
    /// The kind's identifier (`"retry-scheduled"`).
    public let rawValue: String
    /// Creates a kind.
    ///
    /// - Parameter rawValue: The kind's identifier, in kebab-case like the predefined kinds (`"retry-scheduled"`).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// An attempt started.
    public static let attemptStarted: Self = "attempt-started"
    /// An attempt succeeded; `duration` is its latency.
    public static let attemptSucceeded: Self = "attempt-succeeded"
    /// An attempt failed; `classification` says how, `duration` is its latency.
    public static let attemptFailed: Self = "attempt-failed"
    /// An attempt ended because the call was cancelled (never a failure); `duration` is how long it ran.
    public static let attemptCancelled: Self = "attempt-cancelled"
    /// A retry was scheduled; `duration` is the delay, `detail` the reason.
    public static let retryScheduled: Self = "retry-scheduled"
    /// A breaker changed state; `transition` says how.
    public static let breakerTransition: Self = "breaker-transition"
    /// A pipeline was created for the key (see ``ResiliencePipeline/announceCreation(key:to:clock:)``); `detail`
    /// describes its stages and, when it has a circuit breaker, `transition.to` is the state the breaker starts
    /// in, so metrics show the breaker before its first transition.
    public static let pipelineCreated: Self = "pipeline-created"
    /// A breaker rejected a call; `duration` is the time left.
    public static let breakerRejected: Self = "breaker-rejected"
    /// A limiter delayed or rejected a call; `duration` is the wait or hint. `detail` is
    /// ``ResilienceEvent/limiterWaiting`` or ``ResilienceEvent/limiterQueued`` when the call waits for a permit
    /// (and is sent if it gets one), else the reason it was rejected (see ``MetricSchema/isRejection(_:)``).
    public static let rateLimited: Self = "rate-limited"
    /// An adaptive limiter learned a new concurrency limit; `count` is the new limit, `total` the old one,
    /// `duration` the round trip that moved it.
    public static let limitChanged: Self = "limit-changed"
    /// The retry budget refused a retry.
    public static let budgetExhausted: Self = "budget-exhausted"
    /// A fallback alternative was used; `detail` names it.
    public static let fallbackUsed: Self = "fallback-used"
    /// A hedged attempt was launched; `duration` is the hedging delay.
    public static let hedgeLaunched: Self = "hedge-launched"
    /// A hedge was due but the hedging stage's extra-load allowance was spent, so it was not launched; `duration`
    /// is the hedging delay.
    public static let hedgeWithheld: Self = "hedge-withheld"
    /// An attempt or the whole operation timed out; `duration` is the limit.
    public static let timedOut: Self = "timed-out"
    /// Credentials were refreshed; `detail` is `"succeeded"` or `"failed"`.
    public static let credentialRefreshed: Self = "credential-refreshed"
    /// A plaintext request was blocked; `detail` is the (redacted) URL.
    public static let insecureTransportBlocked: Self = "insecure-transport-blocked"
    /// A source failed; `classification` says how.
    public static let sourceFailed: Self = "source-failed"
    /// A fetch finished with partial results; `count` sources succeeded of `total`.
    public static let partialResults: Self = "partial-results"
    /// A fetch over all sources finished; `count` succeeded of `total`.
    public static let fetchCompleted: Self = "fetch-completed"
    /// The sync engine changed state; `detail` is `from → to`, `count` the pending mutations.
    public static let syncStateChanged: Self = "sync-state-changed"
    /// The sync engine could not save or read its own state in the mutation store and goes on without it (a
    /// full metadata table, a full disk); `detail` is what it was doing and the error, `classification` the
    /// error's. It tries again on its next pass.
    public static let syncStoreFailed: Self = "sync-store-failed"
    /// An HTTP cache's store threw, and the request went on as a cache miss; `detail` is the call (`read`,
    /// `store` or `remove`), the store error's reason and its message (`store disk-full: …`).
    public static let cacheStoreFailed: Self = "cache-store-failed"
    /// A call waited for the network path instead of failing or retrying; `duration` is how long,
    /// `detail` the path it waited for (`satisfied`) or `gave-up` when the deadline came first.
    public static let connectivityWait: Self = "connectivity-wait"
    /// A call joined an identical call already in flight and got its result instead of making its own
    /// request; `detail` names the stage or decorator that coalesced it.
    public static let requestCoalesced: Self = "request-coalesced"
    /// A chaos stage injected a fault, an outcome, latency or a behaviour; `detail` says which, `duration`
    /// is the latency injected.
    public static let chaosInjected: Self = "chaos-injected"

    /// Every kind ResilienceKit itself emits, so a sink or a test kit can make room for each of them before
    /// the kinds of third-party stages arrive.
    public static let predefined: [Self] = [
        .attemptStarted, .attemptSucceeded, .attemptFailed, .attemptCancelled, .retryScheduled, .breakerTransition,
        .pipelineCreated, .breakerRejected, .rateLimited, .limitChanged, .budgetExhausted, .fallbackUsed,
        .hedgeLaunched, .hedgeWithheld, .timedOut, .credentialRefreshed, .insecureTransportBlocked, .sourceFailed,
        .partialResults, .fetchCompleted, .syncStateChanged, .syncStoreFailed, .cacheStoreFailed,
        .connectivityWait, .requestCoalesced, .chaosInjected, .coordinationStoreFailed, .coordinationStoreRecovered,
        .sharedBreakerSynced, .sharedTokensLeased,
    ]
}
