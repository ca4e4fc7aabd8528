/// The adaptive concurrency stage: admits a call while the ``AdaptiveConcurrencyLimiter``'s learned limit
/// (for the call's ``ResilienceContext/priority``) allows, runs it, and teaches the limiter its round trip
/// and how it ended.
///
/// A call that finds no slot is rejected at once with ``ResilienceError`` (`bulkheadFull`, `retryAfter` =
/// the limiter's hint), or, when `waits` is true, waits through
/// ``AdaptiveConcurrencyLimiter/waitForPermit(context:)`` (within the deadline, if the limiter's queue has
/// room). Every rejection or wait is a `rateLimited` event (a wait that ends in a refusal, a second one with
/// the refusal's code); every change of the learned limit is a
/// `limitChanged` event (`count` the new limit, `total` the old one, `duration` the round trip that moved
/// it). The slot is released exactly once, whatever happens to the call. Share one limiter per backend.
public struct AdaptiveConcurrencyStage: ResilienceStrategy {
    /// The limiter.
    public let limiter: AdaptiveConcurrencyLimiter
    /// Whether a call that finds no slot waits (within the deadline) instead of being rejected at once.
    public let waits: Bool
    /// The breaker outside this stage that learns of the calls it holds while they wait for a slot (see
    /// ``CallHoldObserver``); `nil` tells no one.
    public let holdObserver: (any CallHoldObserver)?

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - limiter: The limiter (share one per backend).
    ///   - waits: Whether a call that finds no slot waits, within the deadline and the limiter's queue, instead
    ///     of being rejected at once. Default: `false`.
    ///   - holdObserver: The breaker this stage runs inside, told of each call held while it waits for a slot,
    ///     so its silence rule does not count that wait as the dependency's. Default: `nil`.
    public init(
        limiter: AdaptiveConcurrencyLimiter, waits: Bool = false,
        reportsHoldsTo holdObserver: (any CallHoldObserver)? = nil
    ) {
        self.limiter = limiter
        self.waits = waits
        self.holdObserver = holdObserver
    }

    /// `adaptive-concurrency(policy: adaptive-concurrency(gradient2(…), …), waits: false)`.
    public var stageDescription: StageDescription {
        StageDescription(
            name: "adaptive-concurrency",
            settings: [.init("policy", limiter.policyDescription), .init("waits", String(waits))])
    }

    /// Releases `permit` with `outcome` at `now` and reports a change of the limit.
    @inlinable @inline(__always)
    func complete(
        _ permit: RateLimitPermit, _ outcome: RateLimitOutcome, now: ResilienceInstant,
        _ context: ResilienceContext
    ) {
        guard let change = limiter.complete(permit, outcome: outcome, now: now) else { return }
        Self.emitLimitChanged(change, roundTrip: permit.admittedAt.duration(to: now), at: now, context)
    }

    @usableFromInline
    static func emitLimitChanged(
        _ change: (from: Int, to: Int), roundTrip: Duration, at now: ResilienceInstant, _ context: ResilienceContext
    ) {
        context.emit(.limitChanged, at: now) { event in
            event.count = change.to
            event.total = change.from
            event.duration = roundTrip
        }
    }

    /// The slow path after the limiter found no slot: waits when allowed, or throws the rejection. Emits
    /// `rateLimited` either way.
    @usableFromInline
    func waitForPermit(
        after decision: RateLimitDecision, _ context: ResilienceContext
    ) async throws
        -> RateLimitPermit
    {
        var retryAfter: Duration?
        if case .rejected(_, let hint) = decision { retryAfter = hint }
        RateLimiterStrategy.emitLimited(context, retryAfter, waits ? ResilienceEvent.limiterQueued : "rejected")
        guard waits else { throw ResilienceError(.bulkheadFull, key: context.key, retryAfter: retryAfter) }
        return try await RateLimiterStrategy.waitReportingRefusal(context, holdObserver: holdObserver) {
            try await limiter.waitForPermit(context: context)
        }
    }
}

// The stage's steps (`StageDriver.swift`): `enter` takes a slot for the call's priority or stops; the slot's
// release in `exit`, `recover` and `resume` is `PermitStage`'s, with the round trip and how the call ended.
extension AdaptiveConcurrencyStage: PermitStage {
    /// Takes a slot at once, or stops to wait or reject.
    @inlinable @inline(__always)
    func enter(_ context: ResilienceContext, _ frame: inout StageFrame, at offset: Int) -> StageStop? {
        let priorityClass = AdaptiveConcurrencyLimiter.priorityClass(context.priority)
        guard let permit = limiter.admit(now: frame.start, priorityClass: priorityClass) else {
            return StageStop(.mustWait(limiter.rejection))
        }
        frame.store(permit, at: offset)
        return nil
    }

    /// Releases the slot as accepted, with the round trip up to now (`admittedAt` is not needed: the permit
    /// carries its admission instant).
    @inlinable @inline(__always)
    func releaseAccepted(
        _ permit: RateLimitPermit, admittedAt: ResilienceInstant?, _ context: ResilienceContext,
        now: @autoclosure () -> ResilienceInstant
    ) {
        complete(permit, .accepted, now: now(), context)
    }

    /// Releases the slot with how the call failed.
    @inlinable @inline(__always)
    func releaseFailed(_ permit: RateLimitPermit, _ failure: inout StageFailure, _ context: ResilienceContext) {
        let outcome = RateLimiterStrategy.outcome(of: failure.classification(in: context))
        complete(permit, outcome, now: context.clock.now(), context)
    }
}

extension ResilienceStrategy where Self == AdaptiveConcurrencyStage {
    /// An adaptive concurrency stage around `limiter`.
    ///
    /// - Parameters:
    ///   - limiter: The limiter (share one per backend).
    ///   - waits: Whether a call that finds no slot waits instead of being rejected at once. Default: `false`.
    ///   - holdObserver: The breaker this stage runs inside, told of each call held while it waits for a slot.
    ///     Default: `nil`.
    public static func adaptiveConcurrency(
        _ limiter: AdaptiveConcurrencyLimiter, waits: Bool = false,
        reportsHoldsTo holdObserver: (any CallHoldObserver)? = nil
    ) -> AdaptiveConcurrencyStage {
        AdaptiveConcurrencyStage(limiter: limiter, waits: waits, reportsHoldsTo: holdObserver)
    }
}
