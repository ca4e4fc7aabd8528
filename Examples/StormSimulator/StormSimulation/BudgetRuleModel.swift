import Foundation
import ResilienceKit

/// The retry budget's rule run alone on one scope's brownout traffic: how many retries per request a
/// ``RetryBudgetConfiguration`` grants when every attempt fails with probability p, with no pipeline around it
/// (no breaker, no limiter, no timeouts, no queueing server). The brownout goal's bound where the budget, not
/// the attempts, limits the retries (``BrownoutBound``).
///
/// A reference model written from the budget's documentation, not a call into `RetryBudget`: a sliding window of
/// `buckets` slices counting first attempts, the first attempts that failed, retries and first attempts that
/// started while a refused retry waited; with ``RetryBudgetConfiguration/Funding/requests``, retries ≤
/// ⌊ratio × requests + minimumPerSecond × window⌋; with ``RetryBudgetConfiguration/Funding/failedFirstAttempts``,
/// retries ≤ ⌊ratio × failures⌋, the floor (full at the start, a whole retry taken from it, earned back at
/// `ratio` per first attempt up to `minimumPerSecond` × window) while the window holds fewer than 1 ÷ ratio
/// requests, and a refused retry asking again at its jittered delay, then, while the window shows first attempts
/// that started beside a waiting refusal, at its delay before jitter and at `evidenceWait`, each time granted
/// within ⌊ratio × requests⌋ once a first attempt that started after its failure has succeeded. The retry
/// policy's own backoff and jitter draw the delays; the total deadline ends a retry that would start after it.
///
/// Requests arrive as a Poisson process at the scope's rate for the run's duration, and each attempt is
/// answered after the scenario's network delay (both ways) and service time. A closed form, taking each
/// window's allowance and demand at their means and a window's quietness as independent of the floor's credit,
/// overstates the retries by up to 1.5 pp of success where demand and supply are about equal (p ≈ ratio) and by
/// 0.4–0.9 pp on the floor: a sliding window refuses
/// the retries of a window whose requests dipped after its retries were granted, and the bursts that earn the
/// floor its credit are the ones that fill a window past 1 ÷ ratio requests and refuse it.
struct BudgetRuleModel {
    /// The budget's settings.
    let budget: RetryBudgetConfiguration
    /// The retry policy whose attempts, backoff and jitter the scope's requests follow.
    let policy: StandardRetryPolicy
    /// The total deadline of a request, if any.
    let deadline: Double?
    /// The scope's requests per second.
    let rate: Double
    /// The seconds a scope starts requests for (each scope starts fresh: a full floor, an empty window).
    let duration: Double
    /// One attempt's round trip in seconds.
    let answer: @Sendable (inout PseudoRandomGenerator) -> Double

    /// Granted retries and successes over `requests` requests.
    struct Outcome: Sendable, Equatable {
        /// Requests started.
        var requests = 0
        /// Retries the budget granted.
        var retries = 0
        /// Requests whose some attempt succeeded.
        var successes = 0

        /// Retries per request.
        var retriesPerRequest: Double { requests > 0 ? Double(retries) / Double(requests) : 0 }
        /// The share of requests that succeeded.
        var success: Double { requests > 0 ? Double(successes) / Double(requests) : 1 }
    }

    /// Runs fresh scopes one after another, each for ``duration`` seconds, until at least `requests` requests
    /// have started, every attempt failing with probability `p`. The same seed draws the same arrivals, round
    /// trips, delays and coins at every p (a coin fails where its uniform draw is below p), so outcomes at nearby
    /// p differ only by the coins that changed, which keeps their difference precise.
    func run(p: Double, requests: Int, seed: UInt64) -> Outcome {
        var outcome = Outcome()
        var scope: UInt64 = 0
        while outcome.requests < requests, rate > 0, duration > 0 {
            var generator = PseudoRandomGenerator(seed: seed &+ scope &* 0x9E37_79B9_7F4A_7C15)
            var state = ScopeRun(model: self, p: p)
            state.run(using: &generator, into: &outcome)
            scope += 1
        }
        return outcome
    }
}

/// One scope's run: the event queue and the budget's counters.
private struct ScopeRun {
    enum Event {
        /// A request's first attempt starts.
        case arrival
        /// Attempt `attempt` (1-based) of the request that started at `start` ends; `failed` is its coin.
        case answer(start: Double, attempt: Int, failed: Bool)
        /// A refused retry asks again: the request's attempt `attempt` failed at `failure`; `checkpoint` indexes
        /// the instants it may still ask at.
        case ask(start: Double, attempt: Int, failure: Double, checkpoints: [Double], checkpoint: Int)
    }

    struct Scheduled: Comparable {
        let time: Double
        let order: Int
        let event: Event

        static func < (lhs: Scheduled, rhs: Scheduled) -> Bool { (lhs.time, lhs.order) < (rhs.time, rhs.order) }
        static func == (lhs: Scheduled, rhs: Scheduled) -> Bool { (lhs.time, lhs.order) == (rhs.time, rhs.order) }
    }

    let model: BudgetRuleModel
    let p: Double
    let ratio: Double
    let floorRetries: Double
    let fundedByFailures: Bool
    let sliceLength: Double
    var slices: [(requests: Int, failures: Int, retries: Int, startsWhileHeld: Int)]
    var currentSlice = 0
    var totals = (requests: 0, failures: 0, retries: 0, startsWhileHeld: 0)
    var floorBase: Double
    var floorEarned = 0
    var held = 0
    var latestSuccessStart = -Double.infinity
    var queue = EventHeap<Scheduled>()
    var order = 0

    init(model: BudgetRuleModel, p: Double) {
        self.model = model
        self.p = p
        let budget = model.budget
        ratio = budget.ratio
        let window = budget.window.seconds
        floorRetries = budget.minimumPerSecond * window
        fundedByFailures = budget.funding == .failedFirstAttempts
        let buckets = max(budget.buckets, 1)
        sliceLength = window / Double(buckets)
        slices = Array(repeating: (0, 0, 0, 0), count: buckets)
        floorBase = floorRetries
    }

    mutating func schedule(_ event: Event, at time: Double) {
        order += 1
        queue.push(Scheduled(time: time, order: order, event: event))
    }

    mutating func run(using generator: inout PseudoRandomGenerator, into outcome: inout BudgetRuleModel.Outcome) {
        var clock = 0.0
        while true {
            clock += -log(1 - Double.random(in: 0..<1, using: &generator)) / model.rate
            guard clock < model.duration else { break }
            schedule(.arrival, at: clock)
        }
        while let next = queue.pop() {
            let now = next.time
            slide(to: now)
            switch next.event {
            case .arrival:
                outcome.requests += 1
                record(\.requests)
                if fundedByFailures {
                    if held > 0 { record(\.startsWhileHeld) }
                    floorEarned += 1
                    if floorCredit >= floorRetries { (floorBase, floorEarned) = (floorRetries, 0) }
                }
                attempt(1, of: now, at: now, using: &generator)
            case .answer(let start, let number, let failed):
                guard failed else {
                    outcome.successes += 1
                    if number == 1 { latestSuccessStart = max(latestSuccessStart, start) }
                    continue
                }
                retry(after: number, of: start, failedAt: now, using: &generator, into: &outcome)
            case .ask(let start, let number, let failure, let checkpoints, let index):
                if withdraw() || withdrawOnEvidence(afterFailureAt: failure) {
                    outcome.retries += 1
                    held -= 1
                    attempt(number + 1, of: start, at: now, using: &generator)
                } else if index + 1 < checkpoints.count, totals.startsWhileHeld > 0 {
                    let event = Event.ask(
                        start: start, attempt: number, failure: failure, checkpoints: checkpoints,
                        checkpoint: index + 1)
                    schedule(event, at: max(checkpoints[index + 1], now))
                } else {
                    held -= 1
                }
            }
        }
    }

    /// Starts attempt `number` of the request that started at `start`, at `now`.
    mutating func attempt(_ number: Int, of start: Double, at now: Double, using generator: inout PseudoRandomGenerator)
    {
        let failed = Double.random(in: 0..<1, using: &generator) < p
        schedule(.answer(start: start, attempt: number, failed: failed), at: now + model.answer(&generator))
    }

    /// What follows attempt `number`'s failure at `now`: a retry now granted, a refused one waiting to ask again,
    /// or none.
    mutating func retry(
        after number: Int, of start: Double, failedAt now: Double, using generator: inout PseudoRandomGenerator,
        into outcome: inout BudgetRuleModel.Outcome
    ) {
        guard number < model.policy.maxAttempts else { return }
        let unjittered = model.policy.backoff.delay(forRetry: number, previous: nil, using: &generator)
        let delay = model.policy.jitter.apply(to: unjittered, using: &generator).seconds
        if number == 1 { record(\.failures) }
        let end = model.deadline.map { start + $0 } ?? .infinity
        guard now + delay < end else { return }
        if withdraw() {
            outcome.retries += 1
            attempt(number + 1, of: start, at: now + delay, using: &generator)
            return
        }
        guard fundedByFailures else { return }
        held += 1
        var checkpoints = [now + delay]
        for wait in [unjittered.seconds, model.budget.evidenceWait.seconds] where now + wait > checkpoints.last! {
            checkpoints.append(min(now + wait, end))
            if now + wait >= end { break }
        }
        schedule(
            .ask(start: start, attempt: number, failure: now, checkpoints: checkpoints, checkpoint: 0), at: now + delay)
    }

    var floorCredit: Double { min(floorBase + ratio * Double(floorEarned), floorRetries) }

    /// A retry from the window's allowance (or the floor).
    mutating func withdraw() -> Bool {
        if !fundedByFailures {
            guard Double(totals.retries) < (ratio * Double(totals.requests) + floorRetries).rounded(.down) else {
                return false
            }
        } else if ratio * Double(totals.requests) < 1 {
            let credit = floorCredit
            guard credit.rounded(.down) >= 1 else { return false }
            (floorBase, floorEarned) = (credit - 1, 0)
        } else {
            guard Double(totals.retries) < (ratio * Double(totals.failures)).rounded(.down) else { return false }
        }
        record(\.retries)
        return true
    }

    /// A retry on the evidence of a first attempt that started after `failure` and succeeded.
    mutating func withdrawOnEvidence(afterFailureAt failure: Double) -> Bool {
        guard fundedByFailures, latestSuccessStart > failure,
            Double(totals.retries) < (ratio * Double(totals.requests)).rounded(.down)
        else { return false }
        record(\.retries)
        return true
    }

    mutating func record(
        _ count: WritableKeyPath<(requests: Int, failures: Int, retries: Int, startsWhileHeld: Int), Int>
    ) {
        totals[keyPath: count] += 1
        slices[currentSlice % slices.count][keyPath: count] += 1
    }

    /// Expires the slices that left the window at `now`.
    mutating func slide(to now: Double) {
        let slice = Int((now / sliceLength).rounded(.down))
        guard slice > currentSlice else { return }
        for step in 1...min(slice - currentSlice, slices.count) {
            let expired = (currentSlice + step) % slices.count
            totals.requests -= slices[expired].requests
            totals.failures -= slices[expired].failures
            totals.retries -= slices[expired].retries
            totals.startsWhileHeld -= slices[expired].startsWhileHeld
            slices[expired] = (0, 0, 0, 0)
        }
        currentSlice = slice
    }
}
