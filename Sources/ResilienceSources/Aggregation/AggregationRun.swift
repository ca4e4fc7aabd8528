import ResilienceCore

/// One execution of ``Aggregator/fetch(_:onSourceCompleted:)``: the fan-out, each source through its
/// pipeline, the policy check, the merge and the events.
struct AggregationRun<Item: Sendable>: Sendable {
    let aggregator: Aggregator<Item>
    let query: SourceQuery

    struct Outcome: Sendable {
        var report: SourceReport
        var items: [Item]
    }

    func execute(onSourceCompleted: @Sendable (SourceReport, Int, Int) -> Void) async throws -> AggregateResult<Item> {
        let registrations = aggregator.registrations
        let total = registrations.count
        let policy = aggregator.configuration.completion
        let required = policy.requiredSources(of: total)
        // A fetch its caller has already cancelled calls no source.
        try Task.checkCancellation()
        let start = aggregator.clock.now()
        try await waitForNetwork(registrations)
        var outcomes = [Outcome?](repeating: nil, count: total)
        var abandoned = false

        await withTaskGroup(of: (Int, Outcome).self) { group in
            var next = 0
            var completed = 0
            var undelivered = 0
            let limit = aggregator.configuration.maximumConcurrentSources
            while next < min(limit, total) {
                let index = next
                group.addTask { (index, await run(registrations[index])) }
                next += 1
            }
            while let (index, outcome) = await group.next() {
                outcomes[index] = outcome
                completed += 1
                if !outcome.report.status.delivered { undelivered += 1 }
                onSourceCompleted(outcome.report, completed, total)
                if Task.isCancelled || undelivered > total - required {
                    abandoned = true
                    group.cancelAll()
                    continue
                }
                if next < total {
                    let index = next
                    group.addTask { (index, await run(registrations[index])) }
                    next += 1
                }
            }
        }
        try Task.checkCancellation()

        let reports = outcomes.enumerated().map { index, outcome in
            outcome?.report ?? notStarted(registrations[index])
        }
        var report = AggregateReport(
            sources: reports, policy: policy, duration: start.duration(to: aggregator.clock.now()))
        // A monitor that stopped says nothing about the path now: neither offline nor online.
        if let monitor = aggregator.connectivity, let path = await monitor.livePath() {
            report.wasOffline = !path.isSatisfied
            report.wasOnline = path.isSatisfied
        }
        emitSummary(report)
        if abandoned || !report.meetsPolicy {
            throw AggregationError(report: report, itemNoun: aggregator.configuration.itemNoun)
        }
        return AggregateResult(
            items: merge(outcomes.compactMap { $0 }), report: report, itemNoun: aggregator.configuration.itemNoun)
    }

    /// While the connectivity monitor says the device is offline, waits for the path, at most a source's
    /// timeout (15 s without one); the sources then run whatever the path is. When every source's pipeline
    /// waits for the path itself, within the source's deadline, it does not wait: a second wait before theirs
    /// would hold a fetch that stays offline for twice its time.
    private func waitForNetwork(_ registrations: [SourceRegistration<Item>]) async throws {
        guard let monitor = aggregator.connectivity, !monitor.currentPath.isSatisfied,
            !registrations.allSatisfy({ $0.pipeline.waitsForConnectivity })
        else { return }
        let limit = aggregator.configuration.sourceTimeout ?? .seconds(15)
        do {
            _ = try await withDeadline(after: limit, clock: aggregator.clock) { try await monitor.waitForPath() }
        } catch is DeadlineExceededError {
            return
        } catch is ConnectivityMonitorError {
            return
        }
    }

    private func notStarted(_ registration: SourceRegistration<Item>) -> SourceReport {
        SourceReport(
            id: registration.id, displayName: registration.displayName, kind: registration.kind, status: .cancelled,
            classification: .cancelled)
    }

    private func merge(_ outcomes: [Outcome]) -> [Item] {
        let all = outcomes.lazy.filter { $0.report.status.delivered }.flatMap(\.items)
        guard let key = aggregator.deduplicationKey else { return Array(all) }
        var seen = Set<String>()
        return all.filter { seen.insert(key($0)).inserted }
    }

    private func emitSummary(_ report: AggregateReport) {
        guard let telemetry = aggregator.telemetry, telemetry.isEnabled else { return }
        let context = context(key: "aggregate", deadline: nil)
        let delivered = report.deliveredCount
        let total = report.sources.count
        if report.isPartial {
            context.emit(.partialResults) { event in
                event.count = delivered
                event.total = total
                event.classification = report.mostCommonFailure
            }
        }
        context.emit(.fetchCompleted) { event in
            event.count = delivered
            event.total = total
            event.duration = report.duration
            event.detail = report.meetsPolicy ? "\(report.policy) met" : "\(report.policy) not met"
        }
    }

    private func context(key: String, deadline: ResilienceInstant?) -> ResilienceContext {
        ResilienceContext(
            key: key, operation: aggregator.configuration.operation, deadline: deadline,
            telemetry: aggregator.telemetry, clock: aggregator.clock, classifier: aggregator.classifier)
    }

    /// Runs one source through its pipeline, whose outermost stage is the source's deadline, and turns the
    /// outcome into a report.
    private func run(_ registration: SourceRegistration<Item>) async -> Outcome {
        let clock = aggregator.clock
        let started = clock.now()
        let context = context(key: registration.id.rawValue, deadline: nil)
        let pipeline = registration.pipeline(defaultTimeout: aggregator.configuration.sourceTimeout)
        let query = query
        // Behind a lock: a pipeline that hedges runs attempts concurrently.
        let attempts = LockedState(initialState: AttemptLog())
        let result: Result<SourceFetchResult<Item>, any Error>
        do {
            result = .success(
                try await pipeline.execute(context) { attemptContext in
                    attempts.withLock { $0.count += 1 }
                    do {
                        return try await registration.fetch(query, attemptContext)
                    } catch {
                        // An attempt whose task was cancelled (a hedge that lost, an attempt its timeout stopped,
                        // the fetch ending) was stopped; it did not fail.
                        if !Task.isCancelled {
                            let failure = attemptContext.classify(error)
                            attempts.withLock { $0.lastFailure = failure }
                        }
                        throw error
                    }
                })
        } catch {
            result = .failure(error)
        }
        let duration = started.duration(to: clock.now())
        let log = attempts.withLock { $0 }
        var outcome = outcome(
            registration, result: result, attempts: log.count, duration: duration, context: context,
            cancelledByFetch: Task.isCancelled)
        if outcome.report.classification == nil { outcome.report.classification = log.lastFailure }
        return outcome
    }

    /// How many times a source's pipeline called it, and the last failure of an attempt that was not stopped.
    private struct AttemptLog: Sendable {
        var count = 0
        var lastFailure: FailureClassification?
    }

    /// `cancelledByFetch`: whether this source's task was cancelled (the fetch was, or gave up on its policy).
    private func outcome(
        _ registration: SourceRegistration<Item>, result: Result<SourceFetchResult<Item>, any Error>, attempts: Int,
        duration: Duration, context: ResilienceContext, cancelledByFetch: Bool
    ) -> Outcome {
        var report = SourceReport(
            id: registration.id, displayName: registration.displayName, kind: registration.kind, status: .succeeded,
            attempts: attempts, duration: duration)
        let cache = registration.usesCache ? aggregator.cache : nil
        switch result {
        case .success(let fetched):
            report.itemCount = fetched.items.count
            report.servedBy = fetched.servedBy
            report.cacheAge = fetched.cacheAge
            report.isStale = fetched.isStale
            if fetched.cacheAge != nil {
                report.status = .servedFromCache
            } else {
                if fetched.servedBy != nil { report.status = .servedByFallback }
                cache?.store(
                    fetched.items, for: registration.id, query: query, freshness: fetched.freshness, age: fetched.age)
            }
            return Outcome(report: report, items: fetched.items)
        case .failure(let error):
            var classification = context.classify(error)
            if cancelledByFetch {
                // The fetch cancelled this source, whatever it threw on its way out (a source may wrap the
                // cancellation in an error of its own): it did not fail, and its error names no failure.
                report.classification = classification.category == .cancelled ? classification : .cancelled
                report.status = .cancelled
                return Outcome(report: report, items: [])
            }
            if classification.category == .cancelled {
                // A cancellation the fetch did not ask for (URLSession's answer to a cancelled authentication
                // challenge, say) is the source failing: served from cache or named, like any failure.
                classification = FailureClassification(
                    category: .unknown, code: .unknown, isTransient: false,
                    message: "the source was cancelled although the fetch was not")
            }
            report.classification = classification
            context.emit(.sourceFailed) { event in
                event.classification = classification
                event.duration = duration
                event.attempt = attempts
            }
            if let entry = cache?.entry(for: registration.id, query: query) {
                report.status = .servedFromCache
                report.itemCount = entry.items.count
                report.cacheAge = entry.age
                report.isStale = entry.isStale
                return Outcome(report: report, items: entry.items)
            }
            report.status = classification.category == .circuitOpen ? .skippedCircuitOpen : .failed
            return Outcome(report: report, items: [])
        }
    }
}
