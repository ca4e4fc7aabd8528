/// The hedging stage: if the first attempt has not finished after ``delay``, launches another in parallel;
/// the first success wins and the others are cancelled.
///
/// - Hedges only idempotent operations (``Idempotency/isIdempotent``); others run once. A non-idempotent
///   request with an idempotency key is safe to send again after a failure, not to send twice at once: a
///   server answers a concurrent duplicate of a key with 409, or may apply both. The operation must
///   tolerate concurrent calls.
/// - A hedge is also launched at once when an attempt fails with a transient failure and hedges remain; the
///   next hedge then waits ``delay`` from that launch (every hedge waits ``delay`` from the latest launch).
/// - Hedges add at most ``maxExtraLoad`` of the calls (10 % by default): every call earns that share of a hedge
///   and every hedge, launched on its timer or after a failure, spends a whole one, given back when the hedge's
///   request was never sent (``FailureClassification/requestWasNotSent``: a full bulkhead or an open breaker
///   inside refused it, or there was no network), since it added no load; up to `max(1, 100 × maxExtraLoad)` are
///   saved up, and a new stage starts with them. Over any run of N calls the stage sends at most
///   `maxExtraLoad × N + max(1, 100 × maxExtraLoad)` hedges, so a server that slows down until every call
///   would hedge gets at most 1.1 times the calls, not `1 + maxHedges` times: the overload that slowed it is not
///   doubled. Calls fund the allowance, not seconds, so a client calling once a minute hedges as large a share of
///   its calls as a busy one (Finagle's backup requests bound their extra load the same way, over a time window).
///   Copies of one stage share its allowance.
/// - Emits `hedgeLaunched` with the delay; hedged attempts get the next attempt numbers. A hedge due when the
///   allowance is spent is not launched, and emits `hedgeWithheld` with the delay.
/// - No attempt is launched once the caller has cancelled or the context's deadline has passed.
/// - When every attempt fails, the first failure that is not transient is rethrown (a 404 is what every copy of
///   the request gets, and the retry stage outside must see it, not a hedge's later timeout); when every failure
///   is transient, the last. A failure whose request was never sent (``FailureClassification/requestWasNotSent``:
///   a hedge that a full bulkhead or an open breaker inside refused) says nothing of the answer, and is rethrown
///   only when no attempt's request was sent: a slow attempt's timeout is not turned into the hedge's refusal,
///   which the retry stage outside would not retry. Cancellation of the caller is rethrown.
public struct HedgingStrategy: ResilienceStrategy {
    /// How long to wait for an attempt before launching the next.
    public var delay: Duration
    /// How many extra attempts may run (default 1).
    public var maxHedges: Int
    /// The most hedges the stage launches, as a share of its calls (see the type's description); `.infinity`
    /// bounds nothing.
    public let maxExtraLoad: Double
    private let allowance: HedgeAllowance?

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - delay: How long to wait for an attempt before launching the next one.
    ///   - maxHedges: How many extra attempts may run beside the first.
    ///   - maxExtraLoad: The most hedges the stage launches, as a share of its calls: 0.1 lets one call in ten
    ///     hedge once a slow spell has spent the ten saved up, 0 never hedges, `.infinity` bounds nothing.
    ///     Default: 0.1, five times the 2 % of calls that a delay at the healthy 98th percentile hedges ("The Tail
    ///     at Scale"), so a healthy server's tail is hedged whole and a slow one gets at most 10 % more calls.
    public init(delay: Duration, maxHedges: Int = 1, maxExtraLoad: Double = 0.1) {
        self.delay = delay
        self.maxHedges = maxHedges
        self.maxExtraLoad = maxExtraLoad
        allowance = HedgeAllowance(ratio: maxExtraLoad)
    }

    /// Runs `next`, hedging as configured.
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        guard maxHedges > 0, context.idempotency.isIdempotent else { return try await next(context) }
        let allowance = self.allowance
        allowance?.earn()
        let clock = context.clock
        let delay = DurationArithmetic.clamp(self.delay)
        let maxHedges = self.maxHedges
        return try await withoutActuallyEscaping(next) { escapable in
            let operation = UncheckedOperation(run: escapable)
            return try await withThrowingTaskGroup(of: RaceOutcome<Output>.self) { group in
                var launched = 0
                var running = 0
                // The timer of the latest launch is the only one that counts: a launch after a failure makes the
                // previous launch's timer stale, and stale timers (same delay, started earlier) fire first.
                var timerPending = false
                var staleTimers = 0
                func launch() {
                    var hedged = context
                    hedged.attempt += launched
                    let attemptContext = hedged
                    if launched > 0 { attemptContext.emit(.hedgeLaunched) { $0.duration = delay } }
                    let isHedge = launched > 0
                    launched += 1
                    running += 1
                    group.addRacer {
                        do {
                            return try await operation.run(attemptContext)
                        } catch {
                            // A hedge refused before it was sent added no load: its hedge is spent on another.
                            if isHedge, let allowance, attemptContext.classify(error).requestWasNotSent {
                                allowance.refund()
                            }
                            throw error
                        }
                    }
                    if timerPending { staleTimers += 1 }
                    timerPending = launched <= maxHedges
                    if timerPending {
                        group.addTimer { try await clock.sleep(for: delay) }
                    }
                }
                // Another attempt may start while hedges remain, the caller has not cancelled, the context's
                // deadline has not passed and the allowance has a hedge (taken here).
                func mayLaunch() -> Bool {
                    guard launched <= maxHedges, !Task.isCancelled else { return false }
                    if let deadline = context.deadline, clock.now() >= deadline { return false }
                    guard let allowance, !allowance.spend() else { return true }
                    context.emit(.hedgeWithheld) { $0.duration = delay }
                    return false
                }
                launch()
                var lastError: (any Error)?
                // The last failure of an attempt whose request was sent: a refusal before sending says nothing of
                // the answer.
                var lastSentError: (any Error)?
                // The first failure that is not transient of a request that was sent: the answer every copy of the
                // request gets.
                var definitiveError: (any Error)?
                while let event = try await group.nextRaceEvent() {
                    switch event {
                    case .won(let value):
                        return value
                    case .failed(let error):
                        running -= 1
                        lastError = error
                        if Task.isCancelled { break }
                        let failure = context.classify(error)
                        let transient = failure.isTransient
                        if !failure.requestWasNotSent {
                            lastSentError = error
                            if !transient && definitiveError == nil { definitiveError = error }
                        }
                        if transient && mayLaunch() {
                            launch()
                        } else if running == 0 {
                            group.cancelAll()
                            throw definitiveError ?? lastSentError ?? error
                        }
                    case .timerFired:
                        if staleTimers > 0 {
                            staleTimers -= 1
                            continue
                        }
                        timerPending = false
                        // A timer that fired just before the caller cancelled launches nothing.
                        if running > 0 && mayLaunch() { launch() }
                    }
                }
                if Task.isCancelled { throw CancellationError() }
                throw definitiveError ?? lastSentError ?? lastError ?? CancellationError()
            }
        }
    }

    /// `hedging(delay: 2 seconds, maxHedges: 1, maxExtraLoad: 0.1)`.
    public var stageDescription: StageDescription {
        StageDescription(
            name: "hedging",
            settings: [
                .init("delay", "\(delay)"), .init("maxHedges", "\(maxHedges)"),
                .init("maxExtraLoad", "\(maxExtraLoad)"),
            ])
    }
}
