/// One key's circuit breaker: admits or rejects calls and learns from their outcomes.
///
/// ## Contract
/// - **Synchronous and lock-protected.** `admit` and `record` are called on every call's hot path; they
///   take `now` and return at once, never suspending, never allocating on the success path.
/// - **Every admitted call is recorded exactly once**, with the permit it got, including cancelled calls
///   (``BreakerOutcome/cancelled`` releases a half-open probe without counting). Outcomes carrying a permit
///   from an older generation must not be counted; a breaker may act on what such an outcome says about the
///   dependency now, and documents it (the built-in breakers open or stay open for a late failure's
///   `Retry-After`; a failure-ratio breaker that a hung dependency opened closes on a late success).
/// - **Half-open cannot get stuck**: a probe's permit is released by any outcome.
/// - **State changes are returned**, not performed: the caller emits telemetry after the lock is released.
///
/// These three requirements are the whole seam. What else a breaker can do is a separate protocol it may
/// adopt: ``ResettableBreaker`` (close it by hand), ``IsolatableBreaker`` (force it open),
/// ``PersistableBreaker`` (export and restore its state) and ``MeasurableBreaker`` (report its counters).
/// Every built-in breaker adopts all four. ResiliencePolicies' `BreakerStateMachine` is the reusable
/// closed → open → half-open cycle: a new breaker only says when to open and how long to stay open.
///
/// ResilienceTesting's `BreakerPolicyConformance` checks these rules (and those of every optional protocol
/// the breaker adopts) against your implementation.
public protocol BreakerPolicy: AnyObject, Sendable {
    /// Asks to run one call at `now`.
    func admit(now: ResilienceInstant) -> BreakerAdmission

    /// Records the outcome of a call admitted with `permit`; returns the state change it caused, if any.
    @discardableResult
    func record(_ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant) -> BreakerTransition?

    /// A short description of the breaker and its settings.
    var policyDescription: String { get }
}

/// A breaker that can be closed by hand: an operator's "retry now", a sync engine's manual reset.
public protocol ResettableBreaker: BreakerPolicy {
    /// Closes the breaker and clears its counters (and any growing open time); ends an isolation.
    @discardableResult
    func reset(now: ResilienceInstant) -> BreakerTransition?
}

/// A breaker that can be forced open by hand (a kill switch) until ``ResettableBreaker/reset(now:)``.
public protocol IsolatableBreaker: ResettableBreaker {
    /// Forces the breaker open: every call is rejected until ``ResettableBreaker/reset(now:)``.
    @discardableResult
    func isolate(now: ResilienceInstant) -> BreakerTransition?
}

/// A breaker whose state survives a restart: ``exportState(now:)`` and ``restoreState(_:now:)`` round-trip
/// it, so an app can persist a rate-limit cooldown across launches.
public protocol PersistableBreaker: BreakerPolicy {
    /// The breaker's state as a portable snapshot (times relative to `now`).
    func exportState(now: ResilienceInstant) -> BreakerSnapshot

    /// Restores a snapshot taken by ``exportState(now:)`` (possibly in an earlier process).
    @discardableResult
    func restoreState(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition?
}

/// A breaker that reports its counters, for dashboards, health rules and status screens.
public protocol MeasurableBreaker: BreakerPolicy {
    /// The breaker's counters at `now`.
    func metrics(now: ResilienceInstant) -> BreakerMetrics
}

/// A breaker's answer to "may this call run?".
public enum BreakerAdmission: Hashable, Sendable {
    /// Run the call, then record its outcome with the permit.
    case admitted(BreakerPermit, transition: BreakerTransition?)
    /// Do not run the call; the breaker expects to admit calls again after `retryAfter`.
    case rejected(retryAfter: Duration, state: BreakerState)
}

/// Proof that a breaker admitted a call; hand it back to ``BreakerPolicy/record(_:for:now:)``.
///
/// The generation lets a breaker ignore outcomes of calls admitted before a state change (a late success
/// from before a trip must not close the breaker). A probe permit must always be returned, even when the
/// call is cancelled or times out, so half-open can never get stuck.
public struct BreakerPermit: Hashable, Sendable {
    /// The breaker's state generation when the call was admitted.
    public var generation: UInt64
    /// True when the call is a half-open probe.
    public var isProbe: Bool
    /// When the call was admitted (for slow-call detection).
    public var admittedAt: ResilienceInstant

    /// Creates a permit.
    ///
    /// - Parameters:
    ///   - generation: The breaker's state generation when the call was admitted.
    ///   - isProbe: True when the call is a half-open probe.
    ///   - admittedAt: When the call was admitted (for slow-call detection).
    public init(generation: UInt64, isProbe: Bool, admittedAt: ResilienceInstant) {
        self.generation = generation
        self.isProbe = isProbe
        self.admittedAt = admittedAt
    }
}

/// What happened to an admitted call.
public enum BreakerOutcome: Hashable, Sendable {
    /// It succeeded.
    case success
    /// It failed; the breaker's own predicate decides whether this failure counts.
    case failure(FailureClassification)
    /// It was cancelled (or otherwise abandoned): release the permit without counting anything.
    case cancelled
}

/// A change of a breaker's state, returned by the breaker so the caller can emit telemetry outside the lock.
public struct BreakerTransition: Hashable, Sendable, CustomStringConvertible {
    /// The state before.
    public var from: BreakerState
    /// The state after.
    public var to: BreakerState
    /// How long the breaker will stay open, when `to` is ``BreakerState/open``.
    public var openFor: Duration?
    /// Where this transition stands among its breaker's changes: larger for every later one, assigned under the
    /// breaker's lock, or `nil` when the breaker does not number them.
    ///
    /// Transitions are emitted after the breaker's lock is released, so two made one after the other on two
    /// threads can reach a sink in the other order; a sink that keeps a breaker's current state (a gauge, a
    /// dashboard) keeps the one with the larger sequence. The built-in breakers number their transitions; the
    /// `closed → closed` transition of ``ResilienceEventKind/pipelineCreated`` has sequence 0.
    public var sequence: UInt64?

    /// Creates a transition.
    ///
    /// - Parameters:
    ///   - from: The state before.
    ///   - to: The state after.
    ///   - openFor: How long the breaker will stay open, when `to` is ``BreakerState/open``.
    ///   - sequence: Where the transition stands among its breaker's changes (larger for later ones), or `nil`.
    public init(from: BreakerState, to: BreakerState, openFor: Duration? = nil, sequence: UInt64? = nil) {
        self.from = from
        self.to = to
        self.openFor = openFor
        self.sequence = sequence
    }

    /// Whether two transitions change the same states with the same open period; their sequences, which only
    /// order them, are not compared.
    public static func == (lhs: BreakerTransition, rhs: BreakerTransition) -> Bool {
        lhs.from == rhs.from && lhs.to == rhs.to && lhs.openFor == rhs.openFor
    }

    /// Hashes the states and the open period (what ``==(_:_:)`` compares).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(from)
        hasher.combine(to)
        hasher.combine(openFor)
    }

    /// Whether a sink holding `other` as a breaker's latest transition should take this one (of the same breaker)
    /// instead: its sequence is not smaller, or either is not numbered (then the one received later is kept).
    public func supersedes(_ other: BreakerTransition) -> Bool {
        guard let sequence, let otherSequence = other.sequence else { return true }
        return sequence >= otherSequence
    }

    /// `closed → open (30 s)`.
    public var description: String {
        var text = "\(from) → \(to)"
        if let openFor { text += " (\(openFor))" }
        return text
    }
}

/// The three states of a circuit breaker, plus the manually forced ones.
public enum BreakerState: String, Hashable, Sendable, Codable, CaseIterable, CustomStringConvertible {
    /// Calls flow; failures are counted.
    case closed
    /// Calls are rejected until the open period ends.
    case open
    /// A limited number of probe calls test whether the dependency recovered.
    case halfOpen = "half-open"
    /// Manually isolated: every call is rejected until ``ResettableBreaker/reset(now:)``.
    case isolated

    /// The state's name.
    public var description: String { rawValue }
}

/// A snapshot of a breaker's counters, for dashboards and health rules.
public struct BreakerMetrics: Hashable, Sendable, Codable {
    /// The current state.
    public var state: BreakerState
    /// Failures counted since the last success (or the failure count in the current window).
    public var consecutiveFailures: Int
    /// Successes since the last failure.
    public var consecutiveSuccesses: Int
    /// How many times the breaker has opened.
    public var totalOpens: Int
    /// How long the breaker has been open now (zero when not open).
    public var currentOpenDuration: Duration
    /// Time left until the breaker admits a probe (zero when not open).
    public var remainingOpenDuration: Duration

    /// Creates a snapshot.
    ///
    /// - Parameters:
    ///   - state: The current state.
    ///   - consecutiveFailures: Failures counted since the last success (or the failure count in the current window).
    ///     Default: `0`.
    ///   - consecutiveSuccesses: Successes since the last failure. Default: `0`.
    ///   - totalOpens: How many times the breaker has opened. Default: `0`.
    ///   - currentOpenDuration: How long the breaker has been open now (zero when not open). Default: `.zero`.
    ///   - remainingOpenDuration: Time left until the breaker admits a probe (zero when not open). Default: `.zero`.
    public init(
        state: BreakerState,
        consecutiveFailures: Int = 0,
        consecutiveSuccesses: Int = 0,
        totalOpens: Int = 0,
        currentOpenDuration: Duration = .zero,
        remainingOpenDuration: Duration = .zero
    ) {
        self.state = state
        self.consecutiveFailures = consecutiveFailures
        self.consecutiveSuccesses = consecutiveSuccesses
        self.totalOpens = totalOpens
        self.currentOpenDuration = currentOpenDuration
        self.remainingOpenDuration = remainingOpenDuration
    }
}

/// A breaker's persistable state, with times expressed relative to the moment it was taken.
///
/// Relative times survive a restart on a monotonic clock: "open for 42 more seconds" means the same thing
/// in the next process. Policies put anything else they need (a cooldown multiplier, window counts) in
/// ``values``.
public struct BreakerSnapshot: Hashable, Sendable, Codable {
    /// The state.
    public var state: BreakerState
    /// Time left in the open state (zero unless open).
    public var remainingOpen: Duration
    /// Policy-specific numbers (e.g. `"multiplier": 4`, `"consecutiveFailures": 2`).
    public var values: [String: Double]

    /// Creates a snapshot.
    ///
    /// - Parameters:
    ///   - state: The state.
    ///   - remainingOpen: Time left in the open state (zero unless open). Default: `.zero`.
    ///   - values: Policy-specific numbers (e.g. `"multiplier": 4`, `"consecutiveFailures": 2`). Default: `[:]`.
    public init(state: BreakerState, remainingOpen: Duration = .zero, values: [String: Double] = [:]) {
        self.state = state
        self.remainingOpen = remainingOpen
        self.values = values
    }
}
