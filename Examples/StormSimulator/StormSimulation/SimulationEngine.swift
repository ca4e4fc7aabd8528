import ResilienceCore

/// The discrete-event loop behind ``StormSimulator``: one scenario, one strategy, one seed.
///
/// Everything happens on virtual time. The real policies are called synchronously with the event's time
/// as `now`; nothing sleeps and no task is created per request.
final class SimulationEngine {
    private enum Event {
        case arrival
        case startAttempt(request: Int, isHedge: Bool)
        case serverArrival(attempt: Int)
        case serverCompletion(attempt: Int)
        case contentionWrite(attempt: Int, readVersion: Int)
        case response(attempt: Int, outcome: AttemptOutcome)
        case attemptTimeout(attempt: Int)
        case hedge(request: Int)
    }

    private struct Client {
        var budget: (any RetryBudgeting)?
        var breaker: (any BreakerPolicy)?
        var limiter: (any RateLimiter)?
    }

    private struct Request {
        var client: Int
        var start: Nanoseconds
        /// False for requests started during the warm-up: they run but are left out of the totals.
        var isCounted: Bool
        var attemptsMade = 0
        var live = LiveAttempts()
        var previousDelay: Duration? = nil
        var isFinished = false
        var hedged = false
    }

    private struct Attempt {
        var request: Int
        var number: Int
        var breakerPermit: BreakerPermit?
        var limiterPermit: RateLimitPermit?
        /// The attempt's own random stream (network, failures, service time), keyed by request and ordinal,
        /// so the same attempt meets the same server in every strategy's run (common random numbers).
        var random: RandomStream
        var isResolved = false
    }

    /// Bounds that keep a hostile configuration from exhausting memory or time; larger values are clamped.
    static let maximumBuckets = 1_000_000
    static let maximumClients = 100_000
    static let maximumBatch = 1_000_000
    static let maximumRate = 100_000.0
    static let maximumRequests = 5_000_000

    private let scenario: Scenario
    private let strategy: ClientStrategy
    private var events = EventQueue<Event>()
    private var arrivals: RandomStream
    private let attemptSeed: UInt64
    private var policyRandom: RandomStream
    private var clients: [Client] = []
    private var requests: [Request] = []
    private var attempts: [Attempt] = []
    private var queue: [Int] = []
    private var queueHead = 0
    private var busyWorkers = 0
    private var version = 0
    private var result: SimulationResult
    private let bucketWidth: Nanoseconds
    private let horizon: Nanoseconds
    private let loadEnd: Nanoseconds
    private let warmUp: Nanoseconds
    private let timeoutNanoseconds: Nanoseconds?
    private let arrivalRate: Double
    private var now: Nanoseconds = 0

    init(scenario: Scenario, strategy: ClientStrategy, seed: UInt64) {
        self.scenario = scenario
        self.strategy = strategy
        var root = RandomStream(seed: seed)
        arrivals = RandomStream(seed: root.childSeed())
        attemptSeed = root.childSeed()
        policyRandom = RandomStream(seed: root.childSeed())
        var clientSeeds = RandomStream(seed: root.childSeed())
        bucketWidth = max(1, scenario.bucket.nanoseconds)
        horizon = scenario.workload.horizon.nanoseconds
        loadEnd = scenario.workload.duration.nanoseconds
        warmUp = scenario.workload.warmUp.nanoseconds
        let rate = scenario.workload.requestsPerSecond
        arrivalRate = rate.isFinite ? min(max(rate, 0), Self.maximumRate) : 0
        timeoutNanoseconds = scenario.attemptTimeout?.nanoseconds
        let bucketCount = min(Int((max(horizon, 0) + bucketWidth - 1) / bucketWidth), Self.maximumBuckets)
        result = SimulationResult(
            scenario: scenario.id, strategy: strategy.name, bucket: scenario.bucket, bucketCount: max(1, bucketCount))
        for _ in 0..<min(max(1, scenario.workload.clients), Self.maximumClients) {
            let budgetSeed = clientSeeds.childSeed()
            let breakerSeed = clientSeeds.childSeed()
            let limiterSeed = clientSeeds.childSeed()
            clients.append(
                Client(
                    budget: strategy.makeRetryBudget?(budgetSeed),
                    breaker: strategy.makeBreaker?(breakerSeed),
                    limiter: strategy.makeLimiter?(limiterSeed)))
        }
    }

    /// Runs to the horizon and returns the measurements.
    func run() -> SimulationResult {
        let workload = scenario.workload
        for index in 0..<min(max(0, workload.batchSize), Self.maximumBatch) {
            startRequest(client: index % clients.count, at: 0)
        }
        if arrivalRate > 0, loadEnd > 0 {
            scheduleNextArrival(after: 0)
        }
        while let (time, event) = events.popFirst() {
            if time > horizon { break }
            now = time
            handle(event)
        }
        finish()
        return result
    }

    // MARK: Events

    private func handle(_ event: Event) {
        switch event {
        case .arrival:
            let client = Int(arrivals.next() % UInt64(clients.count))
            startRequest(client: client, at: now)
            scheduleNextArrival(after: now)
        case .startAttempt(let request, let isHedge):
            startAttempt(request: request, isHedge: isHedge)
        case .serverArrival(let attempt):
            serverArrival(attempt)
        case .serverCompletion(let attempt):
            serverCompletion(attempt)
        case .contentionWrite(let attempt, let readVersion):
            if version == readVersion {
                version += 1
                respond(attempt, .success)
            } else {
                respond(attempt, .conflict)
            }
        case .response(let attempt, let outcome):
            if attempts[attempt].isResolved {
                result.wastedWork += outcome == .success && isCounted(attempt: attempt) ? 1 : 0
            } else {
                resolve(attempt, outcome)
            }
        case .attemptTimeout(let attempt):
            if !attempts[attempt].isResolved {
                result.timeoutsPerBucket[bucket(now)] += 1
                resolve(attempt, .timedOut)
            }
        case .hedge(let request):
            if !requests[request].isFinished, !requests[request].live.isEmpty {
                requests[request].hedged = true
                if requests[request].isCounted { result.hedges += 1 }
                startAttempt(request: request, isHedge: true)
            }
        }
    }

    private func isCounted(attempt: Int) -> Bool {
        requests[attempts[attempt].request].isCounted
    }

    private func scheduleNextArrival(after time: Nanoseconds) {
        let gap = arrivals.exponential(mean: 1e9 / arrivalRate)
        let next = time + max(1, Nanoseconds(min(gap, 1e15)))
        if next < loadEnd, requests.count < Self.maximumRequests {
            events.schedule(.arrival, at: next)
        }
    }

    // MARK: Client side

    private func startRequest(client: Int, at time: Nanoseconds) {
        let index = requests.count
        requests.append(Request(client: client, start: time, isCounted: time >= warmUp))
        if time >= warmUp { result.logicalRequests += 1 }
        result.startedPerBucket[bucket(time)] += 1
        clients[client].budget?.noteRequest(at: time.instant)
        startAttempt(request: index, isHedge: false)
    }

    /// Starts one attempt through the stages in ARCHITECTURE.md's order: breaker, then rate limiter.
    private func startAttempt(request index: Int, isHedge: Bool) {
        let client = requests[index].client
        var breakerPermit: BreakerPermit? = nil
        if let breaker = clients[client].breaker {
            switch breaker.admit(now: now.instant) {
            case .admitted(let permit, _):
                breakerPermit = permit
            case .rejected:
                if requests[index].isCounted { result.rejectedByBreaker += 1 }
                result.localRejectionsPerBucket[bucket(now)] += 1
                failLocally(index)
                return
            }
        }
        var limiterPermit: RateLimitPermit? = nil
        if let limiter = clients[client].limiter {
            let decision = limiter.tryAcquire(now: now.instant)
            if case .admitted(let permit) = decision {
                limiterPermit = permit
            } else {
                if let breakerPermit {
                    clients[client].breaker?.record(.cancelled, for: breakerPermit, now: now.instant)
                }
                if case .delayed(let retryAfter) = decision {
                    events.schedule(
                        .startAttempt(request: index, isHedge: isHedge), at: now + max(1, retryAfter.nanoseconds))
                } else {
                    if requests[index].isCounted { result.rejectedByLimiter += 1 }
                    result.localRejectionsPerBucket[bucket(now)] += 1
                    failLocally(index)
                }
                return
            }
        }
        requests[index].attemptsMade += 1
        let attemptIndex = attempts.count
        attempts.append(
            Attempt(
                request: index, number: requests[index].attemptsMade, breakerPermit: breakerPermit,
                limiterPermit: limiterPermit,
                random: attemptRandom(request: index, ordinal: requests[index].attemptsMade)
            ))
        requests[index].live.insert(attemptIndex)
        if requests[index].isCounted { result.attempts += 1 }
        result.attemptsPerBucket[bucket(now)] += 1
        events.schedule(.serverArrival(attempt: attemptIndex), at: now + oneWayDelay(attemptIndex))
        if let timeoutNanoseconds {
            events.schedule(.attemptTimeout(attempt: attemptIndex), at: now + timeoutNanoseconds)
        }
        if !isHedge, !requests[index].hedged, let hedgeDelay = strategy.hedgeDelay {
            events.schedule(.hedge(request: index), at: now + hedgeDelay.nanoseconds)
        }
    }

    /// A local rejection (breaker open, throttled) ends the logical request: it is never retried.
    private func failLocally(_ index: Int) {
        guard requests[index].live.isEmpty else { return }
        finishRequest(index, success: false)
    }

    private func resolve(_ attemptIndex: Int, _ outcome: AttemptOutcome) {
        let success = outcome == .success
        attempts[attemptIndex].isResolved = true
        let attempt = attempts[attemptIndex]
        let client = clients[requests[attempt.request].client]
        let instant = now.instant
        if let permit = attempt.breakerPermit {
            client.breaker?.record(
                success ? .success : .failure(outcome.classification), for: permit, now: instant)
        }
        if let permit = attempt.limiterPermit {
            client.limiter?.release(permit, outcome: outcome.limiterOutcome, now: instant)
        }
        let index = attempt.request
        requests[index].live.remove(attemptIndex)
        guard !requests[index].isFinished else { return }
        if success {
            cancelSiblings(of: index)
            finishRequest(index, success: true)
            return
        }
        guard requests[index].live.isEmpty else { return }
        scheduleRetryOrFail(index, failure: outcome.classification)
    }

    private func cancelSiblings(of index: Int) {
        let client = clients[requests[index].client]
        requests[index].live.forEach { sibling in
            attempts[sibling].isResolved = true
            let attempt = attempts[sibling]
            if let permit = attempt.breakerPermit {
                client.breaker?.record(.cancelled, for: permit, now: now.instant)
            }
            if let permit = attempt.limiterPermit {
                client.limiter?.release(permit, outcome: .abandoned, now: now.instant)
            }
        }
        requests[index].live = LiveAttempts()
    }

    private func scheduleRetryOrFail(_ index: Int, failure: FailureClassification) {
        guard let policy = strategy.retryPolicy else {
            finishRequest(index, success: false)
            return
        }
        let request = requests[index]
        let attempt = RetryAttempt(
            number: request.attemptsMade, failure: failure, previousDelay: request.previousDelay,
            idempotency: .idempotent, elapsed: (now - request.start).duration)
        let decision = policy.decide(attempt, using: &policyRandom)
        guard let delay = decision.delay else {
            finishRequest(index, success: false)
            return
        }
        if let budget = clients[request.client].budget, !budget.spendRetry(at: now.instant) {
            if request.isCounted { result.deniedByBudget += 1 }
            result.localRejectionsPerBucket[bucket(now)] += 1
            finishRequest(index, success: false)
            return
        }
        requests[index].previousDelay = delay
        events.schedule(.startAttempt(request: index, isHedge: false), at: now + max(0, delay.nanoseconds))
    }

    private func finishRequest(_ index: Int, success: Bool) {
        requests[index].isFinished = true
        let start = requests[index].start
        let counted = requests[index].isCounted
        if success {
            if counted { result.successes += 1 }
            result.successesPerBucket[bucket(now)] += 1
            result.successfulStartsPerBucket[bucket(start)] += 1
            if counted { result.latencies.append(now - start) }
        } else if counted {
            result.failures += 1
        }
        result.completionTime = max(result.completionTime, now.duration)
    }

    // MARK: Server side

    private func serverArrival(_ attempt: Int) {
        let server = scenario.server
        for fault in server.faults where now >= fault.startNanoseconds && now < fault.endNanoseconds {
            if attempts[attempt].random.chance(fault.failureProbability) {
                if fault.kind == .blackHole { return }
                respond(attempt, .unavailable)
                return
            }
        }
        if attempts[attempt].random.chance(server.failureProbability) {
            respond(attempt, .unavailable)
            return
        }
        if server.contention {
            let window = oneWayDelay(attempt) + oneWayDelay(attempt)
            events.schedule(.contentionWrite(attempt: attempt, readVersion: version), at: now + window)
            return
        }
        if server.workers <= 0 || busyWorkers < server.workers {
            if server.workers > 0 { busyWorkers += 1 }
            events.schedule(.serverCompletion(attempt: attempt), at: now + serviceTime(attempt))
        } else if queue.count - queueHead < server.queueLimit {
            queue.append(attempt)
        } else {
            respond(attempt, .unavailable)
        }
    }

    private func serverCompletion(_ attempt: Int) {
        respond(attempt, .success)
        guard scenario.server.workers > 0 else { return }
        if queueHead < queue.count {
            let next = queue[queueHead]
            queueHead += 1
            if queueHead > 4_096, queueHead * 2 > queue.count {
                queue.removeFirst(queueHead)
                queueHead = 0
            }
            events.schedule(.serverCompletion(attempt: next), at: now + serviceTime(next))
        } else {
            busyWorkers -= 1
        }
    }

    private func respond(_ attempt: Int, _ outcome: AttemptOutcome) {
        events.schedule(.response(attempt: attempt, outcome: outcome), at: now + oneWayDelay(attempt))
    }

    private func attemptRandom(request: Int, ordinal: Int) -> RandomStream {
        RandomStream(
            seed: attemptSeed ^ (UInt64(request) &* 0x9E37_79B9_7F4A_7C15) ^ (UInt64(ordinal) &* 0xC2B2_AE3D_27D4_EB4F))
    }

    private func oneWayDelay(_ attempt: Int) -> Nanoseconds {
        let server = scenario.server
        return attempts[attempt].random.around(
            server.networkDelay.nanoseconds, spread: server.networkDelaySpread.nanoseconds)
    }

    private func serviceTime(_ attempt: Int) -> Nanoseconds {
        let server = scenario.server
        if attempts[attempt].random.chance(server.slowFraction) {
            let tail = attempts[attempt].random.exponential(mean: Double(server.slowServiceTailMean.nanoseconds))
            return server.slowServiceMinimum.nanoseconds + Nanoseconds(min(tail, 1e12))
        }
        let mean = server.serviceTime.nanoseconds
        return attempts[attempt].random.around(mean, spread: Nanoseconds(Double(mean) * server.serviceSpread))
    }

    // MARK: Bookkeeping

    private func bucket(_ time: Nanoseconds) -> Int {
        min(max(0, Int(time / bucketWidth)), result.startedPerBucket.count - 1)
    }

    private func finish() {
        result.unfinished = requests.reduce(0) { $0 + ($1.isFinished || !$1.isCounted ? 0 : 1) }
        result.latencies.sort()
    }
}
