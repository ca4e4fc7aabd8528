/// A limiter that paces calls by the quota the server advertises on any response (success included):
/// `RateLimit: "default";r=0;t=10`, `RateLimit-Remaining` / `RateLimit-Reset`, or `X-RateLimit-Remaining: 0`
/// with `X-RateLimit-Reset` (see ``ServerQuota``).
///
/// After the server says "0 left, resets in 10 s", the next call waits until the reset (or, when that wait
/// exceeds the context's deadline or ``Configuration/maximumWait``, is refused locally with `RES_002` and
/// the time left as its retry hint) instead of being sent and rejected. While the quota has calls left, they
/// are admitted (optionally spread evenly over the window); once the window has reset, calls pass freely
/// until the next response advertises a quota. Create one per key.
///
/// What a response says is left does not count the calls still in flight beside it (admitted, not yet
/// released): the server may receive them after it answered. They come off the calls left, so five calls
/// sent at once against "5 left" and a first answer of "4 left" admit no sixth call until more answers (or
/// the reset) say there is room. Calls are counted in flight from the first response that advertises a
/// quota, so a limiter whose server never advertises one keeps no count (its release takes no lock).
///
/// ``waitForPermit(context:)`` waits without polling: while spreading, a caller books the next evenly spread
/// slot (first come, first served) and sleeps once until it; a caller waiting for the window to reset sleeps
/// once until the reset, when every such caller passes, or until a new quota with calls left (or an earlier
/// reset) wakes it to ask again at once: the zero it waited on may have been the calls then in flight. Only a new quota advertised while callers sleep makes them ask again (their bookings were
/// made against the old one). A caller whose turn would come after
/// `context.deadline` is refused at once with the wait as its retry hint; a caller cancelled while it waits
/// gives its booked slot back.
///
/// It learns the quota as a ``ServerQuotaObserver``: wrap calls in ``ServerQuotaStrategy``, which puts the
/// limiter in the context's ``ResilienceContext/quotaObserver``; the transport (``HTTPTransport``
/// implementations call ``ResilienceContext/reportQuota(from:responseDate:)`` for every response, and
/// `ResilientTransport` does for whatever transport it wraps) reports each response's quota there. A
/// rate-limit answer with a wait (`429` with `Retry-After`) that comes back through the stage spends the
/// quota until then too, so the callers already waiting for a reset, and every later call, wait for the
/// server's time rather than only the retry of the call that got it. A spent quota is never shortened by a
/// response that names an earlier reset.
///
/// ```swift
/// let quota = ServerQuotaLimiter()
/// let pipeline = Pipeline {
///     RetryStrategy(policy: .standard)
///     ServerQuotaStrategy(limiter: quota)
/// }
/// ```
public final class ServerQuotaLimiter: RateLimiter, ServerQuotaObserver {
    /// Settings of a ``ServerQuotaLimiter``.
    public struct Configuration: Sendable, Hashable {
        /// The longest wait offered; a longer one is refused at once with the time left (`nil`: any wait,
        /// the stage still honours the deadline). Default 60 s.
        public var maximumWait: Duration? = .seconds(60)
        /// Whether the calls left in a window are spread evenly over it instead of admitted at once.
        public var spreadsEvenly = false

        /// The defaults: waits of up to 60 s, no spreading.
        public init() {}

        /// Creates a configuration.
        /// - Parameters:
        ///   - maximumWait: the longest wait offered before refusing locally.
        ///   - spreadsEvenly: whether calls left in a window are spread evenly over it.
        public init(maximumWait: Duration?, spreadsEvenly: Bool = false) {
            self.maximumWait = maximumWait
            self.spreadsEvenly = spreadsEvenly
        }

        /// Waits of up to 60 s, no spreading.
        public static var standard: Configuration { Configuration() }
    }

    /// The settings it was created with.
    public let configuration: Configuration
    private let machine: LockedState<ServerQuotaMachine>

    /// Creates a limiter that knows no quota yet (every call passes until a response advertises one).
    /// - Parameter configuration: the longest wait and whether to spread calls.
    public init(_ configuration: Configuration = .standard) {
        self.configuration = configuration
        machine = LockedState(initialState: ServerQuotaMachine(configuration: configuration))
    }

    /// Admits a call, or says how long until the advertised window resets.
    public func tryAcquire(now: ResilienceInstant) -> RateLimitDecision {
        machine.withLock { $0.admit(now: now) }
    }

    /// Waits for the next slot in turn, sleeping once on `context.clock` until it is due (see the type's
    /// documentation).
    ///
    /// Throws ``ResilienceError`` (`rateLimited`, with the wait as its retry hint) at once when the slot would
    /// come after `context.deadline` or beyond ``Configuration/maximumWait``; `CancellationError` when the
    /// task is cancelled, in which case a booked slot is given back.
    public func waitForPermit(context: ResilienceContext) async throws -> RateLimitPermit {
        while true {
            try Task.checkCancellation()
            let now = context.clock.now()
            let booking = machine.withLock { $0.book(now: now, deadline: context.deadline) }
            switch booking {
            case .admitted(let permit):
                return permit
            case .rejected(let code, let retryAfter):
                throw ResilienceError(code, key: context.key, retryAfter: retryAfter)
            case .slot(let due, let quota):
                do {
                    try await context.clock.sleep(until: due)
                    try Task.checkCancellation()
                } catch {
                    machine.withLock { $0.giveBack(quota: quota) }
                    throw error
                }
                if machine.withLock({ $0.takeSlot(bookedAgainst: quota) }) {
                    return RateLimitPermit(token: ServerQuotaMachine.countedInFlight, admittedAt: due)
                }
            case .reset(let due, let quota):
                try await waitForReset(at: due, bookedAgainst: quota, clock: context.clock)
            }
        }
    }

    /// Sleeps until the window resets at `due`, or until a quota advertised meanwhile may have made room (the
    /// calls in flight that held the last ones back have been answered): the caller then asks again. Throws
    /// `CancellationError` when the task is cancelled.
    private func waitForReset(
        at due: ResilienceInstant, bookedAgainst quota: UInt64, clock: ResilienceClock
    ) async throws {
        do {
            try await raceAgainstDeadline(until: due, clock: clock) { try await waitForNewQuota(after: quota) }
        } catch is DeadlineExceededError {
            // The reset came: ask again.
        }
    }

    /// Waits until a quota after number `quota` is advertised; throws `CancellationError` when cancelled (by the
    /// caller, or by the reset's timer), leaving no waiter behind.
    private func waitForNewQuota(after quota: UInt64) async throws {
        let place = machine.withLock { $0.claimResetWaiter() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                switch machine.withLock({ $0.queueResetWaiter(place, continuation, bookedAgainst: quota) }) {
                case .queued: break
                case .newQuota: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            machine.withLock { $0.cancelResetWaiter(place) }?.resume(throwing: CancellationError())
        }
    }

    /// Counts the call out of flight. Nothing is given back to the window: the server's quota counts calls,
    /// and a call that ended was sent (or may have been). A permit admitted before any response advertised a
    /// quota was never counted, and its release costs nothing.
    public func release(_ permit: RateLimitPermit, outcome: RateLimitOutcome, now: ResilienceInstant) {
        guard permit.token == ServerQuotaMachine.countedInFlight else { return }
        machine.withLock { $0.release() }
    }

    /// Records the quota a response advertised; the calls in flight beside the one it answered come off the
    /// calls left (see the type's documentation).
    public func observe(_ quota: ServerQuota, now: ResilienceInstant) {
        let woken = machine.withLock { $0.observe(quota, now: now) }
        for waiter in woken { waiter.resume() }
    }

    /// Calls left in the advertised window at `now`, or nil when no quota is in force.
    public func remaining(now: ResilienceInstant) -> Int? {
        machine.withLock { state in
            guard let resetAt = state.resetAt, now < resetAt else { return nil }
            return state.remaining
        }
    }

    /// `server-quota(max-wait: 60 seconds, spread: false)`.
    public var policyDescription: String {
        "server-quota(max-wait: \(configuration.maximumWait.map { "\($0)" } ?? "none"), spread: \(configuration.spreadsEvenly))"
    }
}

/// The state machine behind ``ServerQuotaLimiter``: the last quota the server advertised, counted down by
/// the calls admitted since, until its window resets.
struct ServerQuotaMachine {
    let configuration: ServerQuotaLimiter.Configuration
    /// Calls left in the advertised window.
    private(set) var remaining = 0
    /// When the advertised window resets; nil while no usable quota is known.
    private(set) var resetAt: ResilienceInstant?
    /// The earliest next admission while spreading calls evenly over the window.
    private var nextAdmission: ResilienceInstant?
    /// Until when the server said no call may be sent (a spent quota's reset, a rate-limit answer's wait);
    /// only a later time replaces it.
    private var spentUntil: ResilienceInstant?
    /// How many quotas have been observed: identifies the one a booking was made against.
    private(set) var quota: UInt64 = 0
    /// Calls admitted and not yet released, counted from the first quota a response advertised: a server
    /// that never advertises one costs its calls no count.
    private(set) var inFlight = 0
    /// Whether a response has advertised a quota, so admitted calls are counted in flight.
    private var countsCallsInFlight = false
    /// Callers sleeping until the window resets, woken early by a quota that makes room.
    private var resetWaiters = WaiterQueue<ResetWaiter>()

    /// A caller waiting for the window to reset.
    enum ResetWaiter: Sendable {
        /// Claimed its place but has not queued yet; `cancelled` once its wait was cancelled meanwhile.
        case arriving(cancelled: Bool)
        /// Queued, suspended until a new quota or the end of its wait.
        case waiting(CheckedContinuation<Void, any Error>)
    }

    /// What became of a caller that asked to wait for a new quota.
    enum ResetWaiterQueueing {
        /// It waits.
        case queued
        /// A new quota came after its booking: it asks again at once.
        case newQuota
        /// Its wait was cancelled before it queued.
        case cancelled
    }
    /// The token of a permit counted in flight, which its release counts out again.
    static let countedInFlight: UInt64 = 1

    /// A waiting caller's turn.
    enum Booking: Equatable {
        /// Run now.
        case admitted(RateLimitPermit)
        /// Refused at once (beyond the deadline or the maximum wait).
        case rejected(ResilienceError.Code, retryAfter: Duration?)
        /// A spread slot booked at `due` against quota number `quota`.
        case slot(due: ResilienceInstant, quota: UInt64)
        /// Nothing left in the window: wait until it resets at `due` (or quota number `quota` is replaced), then
        /// ask again.
        case reset(due: ResilienceInstant, quota: UInt64)
    }

    init(configuration: ServerQuotaLimiter.Configuration) {
        self.configuration = configuration
    }

    /// Replaces the known quota with `quota`, advertised at `now`, less the calls in flight beside the one it
    /// answered (the server may receive them after it counted; a quota reported by a caller that holds no
    /// permit is taken as one that does). A quota without a reset time says nothing about when calls may
    /// resume, so it is ignored. While a spent quota is in force, only a later reset
    /// replaces it: a response that names an earlier one (it left the server before the one that spent the
    /// quota, or speaks for a laxer policy) never lets a call through before the time already known, and the
    /// same quota reported twice (by the transport and by `ResilientTransport`) changes nothing.
    ///
    /// Returns the callers waiting for the reset to wake (they ask again) when the new quota has calls left or
    /// resets earlier: the zero they wait on may have been the calls in flight, since answered.
    mutating func observe(_ quota: ServerQuota, now: ResilienceInstant) -> [CheckedContinuation<Void, any Error>] {
        countsCallsInFlight = true
        guard let resetAfter = quota.resetAfter else { return [] }
        let reset = now.advanced(by: resetAfter)
        if let spentUntil, now < spentUntil, quota.remaining > 0 || reset <= spentUntil { return [] }
        if quota.remaining == 0 { spentUntil = reset }
        let previousReset = resetAt
        remaining = max(0, quota.remaining - max(0, inFlight - 1))
        resetAt = reset
        nextAdmission = nil
        self.quota &+= 1
        guard !resetWaiters.isEmpty, remaining > 0 || previousReset.map({ reset < $0 }) ?? true else { return [] }
        var woken: [CheckedContinuation<Void, any Error>] = []
        while let waiter = resetWaiters.popFirst() {
            if case .waiting(let continuation) = waiter.element { woken.append(continuation) }
        }
        return woken
    }

    /// Claims a place for a caller about to wait for a new quota.
    mutating func claimResetWaiter() -> WaiterQueue<ResetWaiter>.Handle {
        resetWaiters.claim(.arriving(cancelled: false))
    }

    /// Queues the caller at `place`, unless a quota after number `booked` has come meanwhile or its wait was
    /// cancelled (its place is then freed).
    mutating func queueResetWaiter(
        _ place: WaiterQueue<ResetWaiter>.Handle, _ continuation: CheckedContinuation<Void, any Error>,
        bookedAgainst booked: UInt64
    ) -> ResetWaiterQueueing {
        guard case .arriving(let cancelled) = resetWaiters[place], !cancelled, booked == quota else {
            let cancelled = resetWaiters[place].map { if case .arriving(true) = $0 { true } else { false } } ?? true
            resetWaiters.remove(place)
            return cancelled ? .cancelled : .newQuota
        }
        resetWaiters[place] = .waiting(continuation)
        resetWaiters.enqueue(place)
        return .queued
    }

    /// Ends the wait at `place`: a queued caller leaves the queue and its continuation is returned, to be
    /// resumed with `CancellationError`; one that has not queued yet finds the cancellation when it tries to.
    mutating func cancelResetWaiter(_ place: WaiterQueue<ResetWaiter>.Handle) -> CheckedContinuation<Void, any Error>? {
        switch resetWaiters[place] {
        case .waiting(let continuation):
            resetWaiters.remove(place)
            return continuation
        case .arriving:
            resetWaiters[place] = .arriving(cancelled: true)
            return nil
        case nil:
            return nil
        }
    }

    /// Books a waiting caller's turn at `now`: admits at once when a call is allowed; otherwise books the next
    /// spread slot (counting it against the window) or answers the reset time; refuses, booking nothing, when
    /// that turn is after `deadline` or beyond the maximum wait.
    mutating func book(now: ResilienceInstant, deadline: ResilienceInstant?) -> Booking {
        switch admit(now: now) {
        case .admitted(let permit):
            return .admitted(permit)
        case .rejected(let code, let retryAfter):
            return .rejected(code, retryAfter: retryAfter)
        case .delayed(let wait):
            let due = now.advanced(by: wait)
            if let deadline, due > deadline { return .rejected(.rateLimited, retryAfter: wait) }
            guard remaining > 0, let resetAt, due < resetAt else { return .reset(due: due, quota: quota) }
            nextAdmission = due.advanced(by: due.duration(to: resetAt) / remaining)
            remaining -= 1
            return .slot(due: due, quota: quota)
        }
    }

    /// Admits the call of a spread slot that came due, if the quota it was booked against still holds.
    mutating func takeSlot(bookedAgainst booked: UInt64) -> Bool {
        guard booked == quota else { return false }
        inFlight += 1
        return true
    }

    /// Counts an admitted call out of flight.
    mutating func release() {
        inFlight = max(0, inFlight - 1)
    }

    /// `acquire(now:)`, counting an admitted call in flight once a response has advertised a quota (its
    /// permit then carries ``countedInFlight``).
    mutating func admit(now: ResilienceInstant) -> RateLimitDecision {
        let decision = acquire(now: now)
        guard countsCallsInFlight, case .admitted(var permit) = decision else { return decision }
        inFlight += 1
        permit.token = Self.countedInFlight
        return .admitted(permit)
    }

    /// Returns a spread slot whose caller stopped waiting, if the quota it was booked against still holds.
    mutating func giveBack(quota booked: UInt64) {
        if booked == quota { remaining += 1 }
    }

    /// Admits a call, or says how long until the window resets (or the next evenly spread slot).
    mutating func acquire(now: ResilienceInstant) -> RateLimitDecision {
        guard let resetAt, now < resetAt else {
            self.resetAt = nil
            return .admitted(RateLimitPermit(admittedAt: now))
        }
        if remaining > 0 {
            if configuration.spreadsEvenly {
                if let nextAdmission, now < nextAdmission { return refusal(wait: now.duration(to: nextAdmission)) }
                nextAdmission = now.advanced(by: now.duration(to: resetAt) / remaining)
            }
            remaining -= 1
            return .admitted(RateLimitPermit(admittedAt: now))
        }
        return refusal(wait: now.duration(to: resetAt))
    }

    private func refusal(wait: Duration) -> RateLimitDecision {
        if let maximumWait = configuration.maximumWait, wait > maximumWait {
            return .rejected(.rateLimited, retryAfter: wait)
        }
        return .delayed(retryAfter: wait)
    }
}
