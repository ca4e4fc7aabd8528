import Foundation
import ResilienceSources
import ResilienceTesting
import Testing

@Suite("Aggregator")
struct AggregatorTests {
    let clock = ManualClock()
    var resilienceClock: ResilienceClock { .manual(clock) }

    func aggregator(
        _ configuration: AggregatorConfiguration = AggregatorConfiguration(sourceTimeout: nil),
        sink: RecordingTelemetrySink? = nil, cache: SourceCache<String>? = nil
    ) -> Aggregator<String> {
        Aggregator<String>(configuration: configuration, clock: resilienceClock, telemetry: sink, cache: cache)
    }

    @Test("Best effort merges in registration order and reports each source")
    func bestEffortMergesInOrder() async throws {
        let sink = RecordingTelemetrySink()
        var aggregator = aggregator(sink: sink)
        aggregator.register(ScriptedSource(id: "a", items: ["a1", "a2"]))
        aggregator.register(ScriptedSource<String>(id: "b", steps: [.failure(TestFailure())]))
        aggregator.register(ScriptedSource(id: "c", items: ["c1"]))

        let result = try await aggregator.fetch(SourceQuery(text: "swift"))

        #expect(result.items == ["a1", "a2", "c1"])
        #expect(result.report.sources.map(\.status) == [.succeeded, .failed, .succeeded])
        #expect(result.report.sources.map(\.itemCount) == [2, 0, 1])
        #expect(result.report.report(for: "b")?.classification?.category == .serverError)
        #expect(result.report.isPartial)
        #expect(!result.report.isComplete)
        #expect(sink.events(.sourceFailed).map(\.key) == ["b"])
        #expect(sink.events(.partialResults).first?.count == 2)
        #expect(sink.events(.partialResults).first?.total == 3)
        #expect(sink.events(.fetchCompleted).count == 1)

        let context = result.presentationContext
        #expect(context.sourcesAttempted == 3)
        #expect(context.sourcesSucceeded == 2)
        #expect(context.itemsShown == 3)
        #expect(context.isPartial)
        #expect(result.report.mostCommonFailure?.category == .serverError)
    }

    @Test("With a connectivity monitor, a fetch started offline waits for the path, then runs every source")
    func waitsForTheNetwork() async throws {
        var aggregator = aggregator(AggregatorConfiguration(sourceTimeout: .seconds(8)))
        let monitor = ScriptedConnectivityMonitor(.unsatisfied)
        aggregator.connectivity = monitor
        aggregator.register(ScriptedSource(id: "a", items: ["a1"]))
        let fetch = Task { [aggregator] in try await aggregator.fetch() }
        while monitor.listenerCount == 0 { await Task.yield() }
        monitor.setOnline(true)
        let result = try await fetch.value
        #expect(result.items == ["a1"])
        #expect(!result.report.wasOffline && !result.presentationContext.isOffline)
    }

    @Test("A fetch that stays offline waits at most a source's timeout and says it was offline")
    func staysOffline() async throws {
        let sink = RecordingTelemetrySink()
        var aggregator = aggregator(AggregatorConfiguration(sourceTimeout: .seconds(8)), sink: sink)
        aggregator.connectivity = ScriptedConnectivityMonitor(.unsatisfied)
        aggregator.register(
            ScriptedSource<String>(id: "a", steps: [.failure(TestFailure(category: .networkUnreachable))]))
        aggregator.register(ScriptedSource(id: "b", items: ["b1"]))
        let fetch = Task { [aggregator] in try await aggregator.fetch() }
        await clock.waitForSleepers()
        clock.advance(by: .seconds(8))
        let result = try await fetch.value
        #expect(result.report.wasOffline)
        #expect(result.presentationContext.isOffline)
        // The whole fetch, its wait for the network included.
        #expect(result.report.duration == .seconds(8))
        #expect(sink.events(.fetchCompleted).last?.duration == .seconds(8))
    }

    @Test("A monitor that stopped says nothing about the path: a server's failure is not presented as offline")
    func stoppedMonitorIsNotOffline() async throws {
        var aggregator = aggregator(AggregatorConfiguration(sourceTimeout: .seconds(8)))
        let monitor = ScriptedConnectivityMonitor(.unsatisfied)
        monitor.stop()  // its last word was "offline"; it can no longer say when the network is back
        aggregator.connectivity = monitor
        aggregator.register(ScriptedSource<String>(id: "a", steps: [.failure(TestFailure(category: .serverError))]))
        aggregator.register(ScriptedSource(id: "b", items: ["b1"]))
        let result = try await aggregator.fetch()
        #expect(result.items == ["b1"])
        #expect(!result.report.wasOffline)
        #expect(!result.report.wasOnline)
        #expect(!result.presentationContext.isOffline)

        let stale = ScriptedConnectivityMonitor(.satisfied)
        stale.stop()
        aggregator.connectivity = stale
        #expect(try await !aggregator.fetch().report.wasOnline, "a stopped monitor's last path is not known now")
    }

    @Test("Best effort with every source failing throws a typed error carrying the report")
    func bestEffortAllFailThrows() async throws {
        var aggregator = aggregator()
        aggregator.register(
            ScriptedSource<String>(id: "a", steps: [.failure(TestFailure(category: .networkUnreachable))]))
        aggregator.register(
            ScriptedSource<String>(id: "b", steps: [.failure(TestFailure(category: .networkUnreachable))]))
        let error = try await #require(throws: AggregationError.self) { try await aggregator.fetch() }
        #expect(error.report.deliveredCount == 0)
        #expect(error.classification.category == .networkUnreachable)
        #expect(error.presentationContext.sourcesSucceeded == 0)
    }

    @Test("No sources registered is an empty success")
    func noSources() async throws {
        let result = try await aggregator().fetch()
        #expect(result.items.isEmpty)
        #expect(result.report.sources.isEmpty)
        #expect(result.report.mostCommonFailure == nil)
    }

    @Test("At least N: met with N, and fails fast (cancelling the rest) once it cannot be met")
    func atLeastN() async throws {
        var met = aggregator(AggregatorConfiguration(sourceTimeout: nil, completion: .atLeast(2)))
        met.register(ScriptedSource(id: "a", items: ["a"]))
        met.register(ScriptedSource<String>(id: "b", steps: [.failure(TestFailure())]))
        met.register(ScriptedSource(id: "c", items: ["c"]))
        #expect(try await met.fetch().items == ["a", "c"])

        var unmet = aggregator(AggregatorConfiguration(sourceTimeout: nil, completion: .atLeast(2)))
        let slow = ScriptedSource(id: "slow", items: ["s"], delay: .seconds(60), clock: resilienceClock)
        unmet.register(slow)
        unmet.register(ScriptedSource<String>(id: "b", steps: [.failure(TestFailure())]))
        unmet.register(ScriptedSource<String>(id: "c", steps: [.failure(TestFailure())]))
        let fetch = Task { [unmet] in try await unmet.fetch() }
        // No time is advanced: the two failures alone make at-least(2) of 3 impossible.
        let error = try await #require(throws: AggregationError.self) { try await fetch.value }
        #expect(error.report.report(for: "slow")?.status == .cancelled)
        #expect(error.report.requiredCount == 2)
        #expect(clock.sleeperCount == 0)
    }

    @Test("Ratio policy rounds up")
    func ratioPolicy() async throws {
        #expect(CompletionPolicy.ratio(0.5).requiredSources(of: 5) == 3)
        #expect(CompletionPolicy.ratio(2).requiredSources(of: 4) == 4)
        #expect(CompletionPolicy.ratio(.nan).requiredSources(of: 4) == 4)
        #expect(CompletionPolicy.bestEffort.requiredSources(of: 0) == 0)
        #expect(CompletionPolicy.atLeast(10).requiredSources(of: 3) == 3)
        // 0.28 × 25 and 0.56 × 25 are 7.000000000000001 and 14.000000000000002 in binary floating point.
        #expect(CompletionPolicy.ratio(0.28).requiredSources(of: 25) == 7)
        #expect(CompletionPolicy.ratio(0.56).requiredSources(of: 25) == 14)
        #expect(CompletionPolicy.ratio(0.14).requiredSources(of: 50) == 7)
        #expect(CompletionPolicy.ratio(0.281).requiredSources(of: 25) == 8)

        var aggregator = aggregator(AggregatorConfiguration(sourceTimeout: nil, completion: .ratio(0.5)))
        aggregator.register(ScriptedSource(id: "a", items: ["a"]))
        aggregator.register(ScriptedSource<String>(id: "b", steps: [.failure(TestFailure())]))
        aggregator.register(ScriptedSource<String>(id: "c", steps: [.failure(TestFailure())]))
        aggregator.register(ScriptedSource(id: "d", items: ["d"]))
        let result = try await aggregator.fetch()
        #expect(result.report.deliveredCount == 2)
        #expect(result.report.meetsPolicy)
    }

    @Test("All or nothing: the first failure cancels the others and throws")
    func allOrNothing() async throws {
        let sink = RecordingTelemetrySink()
        var aggregator = aggregator(AggregatorConfiguration(sourceTimeout: nil, completion: .allOrNothing), sink: sink)
        aggregator.register(ScriptedSource(id: "slow", items: ["s"], delay: .seconds(30), clock: resilienceClock))
        aggregator.register(ScriptedSource<String>(id: "broken", steps: [.failure(TestFailure(category: .timeout))]))
        let error = try await #require(throws: AggregationError.self) { try await aggregator.fetch() }
        #expect(error.report.report(for: "slow")?.status == .cancelled)
        #expect(error.report.report(for: "broken")?.status == .failed)
        #expect(error.classification.category == .timeout)
        #expect(sink.events(.fetchCompleted).first?.detail == "all-or-nothing not met")
    }

    @Test("A source the fetch cancelled is reported cancelled, whatever error it threw on its way out")
    func cancelledSourceWrappingItsCancellation() async throws {
        let sink = RecordingTelemetrySink()
        var aggregator = aggregator(AggregatorConfiguration(sourceTimeout: nil, completion: .allOrNothing), sink: sink)
        aggregator.register(CancellationWrappingSource(id: "w1", clock: resilienceClock))
        aggregator.register(CancellationWrappingSource(id: "w2", clock: resilienceClock))
        aggregator.register(ScriptedSource<String>(id: "broken", steps: [.failure(TestFailure.serverError)]))
        let error = try await #require(throws: AggregationError.self) { try await aggregator.fetch() }
        #expect(error.report.sources.map(\.status) == [.cancelled, .cancelled, .failed])
        #expect(error.report.report(for: "w1")?.classification?.category == .cancelled)
        // The one real failure is the summary, not the errors the cancelled sources threw.
        #expect(error.classification.category == .serverError)
        #expect(sink.events(.sourceFailed).map(\.key) == ["broken"])
        #expect(clock.sleeperCount == 0)
    }

    @Test("Bounded concurrency: exactly the limit runs at once on a manual clock")
    func boundedConcurrency() async throws {
        let tracker = LockedBox<(current: Int, maximum: Int)>((0, 0))
        var aggregator = aggregator(AggregatorConfiguration(maximumConcurrentSources: 3, sourceTimeout: nil))
        for index in 0..<7 {
            aggregator.register(
                ConcurrencyProbeSource(
                    id: SourceID("s\(index)"), delay: .seconds(1), clock: resilienceClock, tracker: tracker))
        }
        let fetch = Task { [aggregator] in try await aggregator.fetch() }
        for expected in [3, 3, 1] {
            await clock.waitForSleepers(count: expected)
            // The last wave's source can be asleep before the two others of the wave before it have returned.
            for _ in 0..<10_000 where tracker.value.current != expected { await Task.yield() }
            #expect(tracker.value.current == expected)
            clock.advance(by: .seconds(1))
        }
        let result = try await fetch.value
        #expect(result.items == (0..<7).map { "s\($0)" })
        #expect(tracker.value.maximum == 3)
    }

    @Test("1,000 scripted sources complete with bounded concurrency")
    func thousandSources() async throws {
        let tracker = LockedBox<(current: Int, maximum: Int)>((0, 0))
        var aggregator = aggregator(AggregatorConfiguration(maximumConcurrentSources: 16, sourceTimeout: .seconds(5)))
        for index in 0..<1_000 {
            aggregator.register(
                ConcurrencyProbeSource(
                    id: SourceID("s\(index)"), delay: .zero, clock: resilienceClock, tracker: tracker))
        }
        let result = try await aggregator.fetch()
        #expect(result.items.count == 1_000)
        #expect(result.items.first == "s0")
        #expect(result.items.last == "s999")
        #expect(result.report.succeededCount == 1_000)
        #expect(tracker.value.maximum <= 16)
        #expect(tracker.value.maximum >= 1)
    }

    @Test("A source that overruns its deadline is cancelled and reported as timed out")
    func perSourceDeadline() async throws {
        var aggregator = aggregator(AggregatorConfiguration(sourceTimeout: .seconds(10)))
        let slow = ScriptedSource(id: "slow", items: ["late"], delay: .seconds(60), clock: resilienceClock)
        aggregator.register(slow, timeout: .seconds(2))
        aggregator.register(ScriptedSource(id: "fast", items: ["f"]))
        let fetch = Task { [aggregator] in try await aggregator.fetch() }
        await clock.waitForSleepers(count: 2)  // the slow source and its deadline timer
        clock.advance(by: .seconds(2))
        let result = try await fetch.value
        let report = try #require(result.report.report(for: "slow"))
        #expect(report.status == .failed)
        #expect(report.classification?.code == .deadlineExceeded)
        #expect(report.classification?.category == .timeout)
        #expect(report.duration == .seconds(2))
        #expect(result.items == ["f"])
        #expect(clock.sleeperCount == 0)
    }

    @Test("Cancelling the fetch cancels every source promptly")
    func cancellation() async throws {
        var aggregator = aggregator(AggregatorConfiguration(maximumConcurrentSources: 4))
        let sources = (0..<4).map {
            ScriptedSource(id: SourceID("s\($0)"), items: ["x"], delay: .seconds(100), clock: resilienceClock)
        }
        for source in sources { aggregator.register(source) }
        let fetch = Task { [aggregator] in try await aggregator.fetch() }
        await clock.waitForSleepers(count: 8)  // four sources and four deadline timers
        fetch.cancel()
        await #expect(throws: CancellationError.self) { try await fetch.value }
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .zero)
    }

    @Test("A fetch whose caller has already cancelled calls no source and emits nothing")
    func cancelledBeforeStart() async throws {
        let sink = RecordingTelemetrySink()
        var aggregator = aggregator(sink: sink)
        let sources = (0..<3).map { ScriptedSource(id: SourceID("s\($0)"), items: ["x"]) }
        for source in sources { aggregator.register(source) }
        let fetch = Task { [aggregator] in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await aggregator.fetch()
        }
        await #expect(throws: CancellationError.self) { try await fetch.value }
        #expect(sources.map(\.callCount) == [0, 0, 0])
        #expect(sink.events.isEmpty)
    }

    @Test("A source whose breaker is open is skipped, not called, and reported as such")
    func breakerOpenSkip() async throws {
        var aggregator = aggregator()
        let guarded = ScriptedSource(id: "guarded", items: ["g"])
        aggregator.register(guarded, pipeline: OpenBreakerPipeline())
        aggregator.register(ScriptedSource(id: "ok", items: ["o"]))
        let result = try await aggregator.fetch()
        let report = try #require(result.report.report(for: "guarded"))
        #expect(report.status == .skippedCircuitOpen)
        #expect(report.attempts == 0)
        #expect(report.classification?.category == .circuitOpen)
        #expect(guarded.callCount == 0)
        #expect(result.items == ["o"])
    }

    @Test("Attempts count every call the pipeline makes")
    func attemptsCounted() async throws {
        var aggregator = aggregator()
        let flaky = ScriptedSource<String>(
            id: "flaky", steps: [.failure(TestFailure()), .failure(TestFailure()), .items(["ok"])])
        aggregator.register(flaky, pipeline: RetryingPipeline(maxAttempts: 3))
        let result = try await aggregator.fetch()
        #expect(result.report.report(for: "flaky")?.attempts == 3)
        #expect(result.report.report(for: "flaky")?.status == .succeeded)
        #expect(result.report.report(for: "flaky")?.classification?.category == .serverError)
        #expect(result.report.mostCommonFailure == nil)
        #expect(result.items == ["ok"])
    }

    @Test("A source that cancels itself, while the fetch did not, failed: served from cache or named, never hidden")
    func selfCancelledSourceFailed() async throws {
        // URLSession answers a cancelled authentication challenge (a rejected pinned certificate) with
        // URLError.cancelled, although nobody cancelled the fetch.
        var aggregator = aggregator(cache: SourceCache(clock: resilienceClock))
        aggregator.register(
            ScriptedSource<String>(id: "pinned", steps: [.items(["p1"]), .failure(CancellationError())]))
        aggregator.register(
            ScriptedSource<String>(id: "bare", steps: [.failure(CancellationError())]), usesCache: false)
        aggregator.register(ScriptedSource(id: "up", items: ["u"]))
        _ = try await aggregator.fetch()
        let second = try await aggregator.fetch()
        #expect(second.report.sources.map(\.status) == [.servedFromCache, .failed, .succeeded])
        #expect(second.items == ["p1", "u"])
        #expect(second.report.sources.allSatisfy { $0.classification?.category != .cancelled })
        #expect(second.presentationContext.unavailableSources.map(\.id) == ["bare"])
    }

    @Test("Failures are served from cache, marked with their age and staleness")
    func cacheServesStale() async throws {
        let cache = SourceCache<String>(
            configuration: SourceCacheConfiguration(freshFor: .seconds(60)), clock: resilienceClock)
        var aggregator = aggregator(cache: cache)
        let source = ScriptedSource<String>(
            id: "a", steps: [.items(["a1"]), .failure(TestFailure(category: .serverError))])
        aggregator.register(source)
        aggregator.register(ScriptedSource<String>(id: "nocache", steps: [.failure(TestFailure())]), usesCache: false)

        _ = try await aggregator.fetch(SourceQuery(text: "q"))
        clock.advance(by: .seconds(90))
        let second = try await aggregator.fetch(SourceQuery(text: "q"))
        let report = try #require(second.report.report(for: "a"))
        #expect(report.status == .servedFromCache)
        #expect(report.cacheAge == .seconds(90))
        #expect(report.isStale)
        #expect(report.classification?.category == .serverError)
        #expect(second.items == ["a1"])
        #expect(second.presentationContext.sources.first?.servedFromCache == true)
        #expect(second.report.mostCommonFailure?.category == .serverError)

        await #expect(throws: AggregationError.self) { try await aggregator.fetch(SourceQuery(text: "other")) }
    }

    @Test("A fallback chain reports which alternative served")
    func fallbackServes() async throws {
        let sink = RecordingTelemetrySink()
        var aggregator = aggregator(sink: sink)
        let api = ScriptedSource<String>(id: "acme-api", steps: [.failure(TestFailure(category: .serverError))])
        let rss = ScriptedSource(id: "acme-rss", items: ["from-rss"])
        aggregator.register(FallbackSource(primary: api, fallbacks: [.source(rss, name: "rss")]))
        let result = try await aggregator.fetch()
        let report = try #require(result.report.report(for: "acme-api"))
        #expect(report.status == .servedByFallback)
        #expect(report.servedBy == "rss")
        #expect(result.items == ["from-rss"])
        #expect(sink.events(.fallbackUsed).first?.detail == "rss")
        #expect(result.report.mostCommonFailure == nil)
    }

    @Test("De-duplication keeps the first occurrence in registration order")
    func deduplication() async throws {
        var aggregator = aggregator()
        aggregator.deduplicationKey = { $0.lowercased() }
        aggregator.register(ScriptedSource(id: "a", items: ["Swift Dev", "iOS Dev"]))
        aggregator.register(ScriptedSource(id: "b", items: ["swift dev", "Backend"]))
        #expect(try await aggregator.fetch().items == ["Swift Dev", "iOS Dev", "Backend"])
    }

    @Test("Registering the same id again replaces the source in place")
    func reRegistration() async throws {
        var aggregator = aggregator()
        aggregator.register(ScriptedSource(id: "a", items: ["old"]))
        aggregator.register(ScriptedSource(id: "b", items: ["b"]))
        aggregator.register(ScriptedSource(id: "a", items: ["new"]))
        #expect(aggregator.sourceIDs == ["a", "b"])
        #expect(try await aggregator.fetch().items == ["new", "b"])
        aggregator.unregister("a")
        #expect(aggregator.sourceIDs == ["b"])
        aggregator.register(ScriptedSource(id: "c", items: ["c"]))
        aggregator.register(ScriptedSource(id: "b", items: ["b2"]))
        aggregator.unregister("missing")
        #expect(aggregator.sourceIDs == ["b", "c"])
        #expect(try await aggregator.fetch().items == ["b2", "c"])
    }

    @Test("Progress is an async sequence of per-source completions, then the result")
    func progressSequence() async throws {
        var aggregator = aggregator()
        aggregator.register(ScriptedSource(id: "a", items: ["a"]))
        aggregator.register(ScriptedSource<String>(id: "b", steps: [.failure(TestFailure())]))
        aggregator.register(ScriptedSource(id: "c", items: ["c"]))
        var completed: [SourceID] = []
        var counts: [Int] = []
        var final: AggregateResult<String>?
        for try await step in aggregator.progress() {
            switch step {
            case .sourceCompleted(let report, let done, let total):
                completed.append(report.id)
                counts.append(done)
                #expect(total == 3)
            case .finished(let result):
                final = result
            }
        }
        #expect(Set(completed) == ["a", "b", "c"])
        #expect(counts == [1, 2, 3])
        #expect(final?.items == ["a", "c"])
    }

    @Test("The neutral summary is the first failure of the most common category, first seen on ties")
    func mostCommonFailureSummary() {
        func report(
            _ id: SourceID, _ category: FailureCategory, retryAfter: Duration? = nil,
            status: SourceReport.Status = .failed
        ) -> SourceReport {
            SourceReport(
                id: id, displayName: id.rawValue, kind: "test", status: status,
                classification: TestFailure(category: category, retryAfter: retryAfter).classification)
        }
        let tie = AggregateReport(
            sources: [report("a", .serverError), report("b", .rateLimited, retryAfter: .seconds(5))],
            policy: .bestEffort, duration: .zero)
        #expect(tie.mostCommonFailure?.category == .serverError)
        let majority = AggregateReport(
            sources: [
                report("a", .serverError), report("b", .rateLimited, retryAfter: .seconds(5)),
                report("c", .rateLimited, retryAfter: .seconds(60), status: .servedFromCache), report("d", .timeout),
                report("e", .timeout, status: .servedByFallback), report("f", .timeout, status: .succeeded),
            ], policy: .bestEffort, duration: .zero)
        #expect(majority.mostCommonFailure?.category == .rateLimited)
        #expect(majority.mostCommonFailure?.retryAfter == .seconds(5))
        #expect(AggregationError(report: majority).classification == majority.mostCommonFailure)
        let context = majority.presentationContext(itemNoun: "jobs", itemsShown: 0)
        #expect(context.sources.map(\.classification) == majority.sources.map(\.classification))
        #expect(context.sources.map(\.delivered) == [false, false, true, false, true, true])
        #expect(context.sourcesServedFromCache == 1)
        #expect(context.sources.first?.kind == "test")
        #expect(context.metPolicy)
        #expect(!AggregationError(report: majority).presentationContext.metPolicy)
        let fine = AggregateReport(
            sources: [SourceReport(id: "x", displayName: "X", kind: "test", status: .succeeded, itemCount: 1)],
            policy: .bestEffort, duration: .zero)
        #expect(fine.mostCommonFailure == nil)
        #expect(AggregationError(report: fine).classification == .unknown)
        #expect(fine.isComplete)
    }

    @Test("Mapped sources keep id and provenance; the configuration describes itself")
    func mappedSourcesAndDescription() async throws {
        var aggregator = aggregator()
        let api = ScriptedSource<Int>(id: "api", steps: [.failure(TestFailure())])
        let backup = ScriptedSource(id: "backup", items: [1, 2])
        aggregator.register(
            FallbackSource(primary: api, fallbacks: [.source(backup, name: "backup")]).mapItems { "job-\($0)" },
            pipeline: RetryingPipeline(maxAttempts: 2), timeout: .seconds(3))
        let result = try await aggregator.fetch()
        #expect(result.items == ["job-1", "job-2"])
        #expect(result.report.report(for: "api")?.status == .servedByFallback)
        #expect(result.report.report(for: "api")?.servedBy == "backup")
        #expect(
            aggregator.configurationDescription.contains(
                "pipeline: source-deadline(limit: 3.0 seconds, mode: enforced) → retry(maxAttempts: 2)"))
        #expect(aggregator.configurationDescription.contains("retry(maxAttempts: 2)"))
    }

    @Test("A registration is small: the per-source footprint stays far under 2 KB")
    func registrationFootprint() {
        // The inline part; the source value and pipeline live in existential boxes (inline when ≤ 3 words).
        #expect(MemoryLayout<SourceRegistration<String>>.stride <= 160)
        #expect(MemoryLayout<SourceReport>.stride <= 256)
    }

    @Test("Ending the progress iteration early cancels the remaining sources")
    func progressEarlyExitCancels() async throws {
        var aggregator = aggregator()
        let slow = ScriptedSource(id: "slow", items: ["s"], delay: .seconds(100), clock: resilienceClock)
        aggregator.register(ScriptedSource(id: "fast", items: ["f"]))
        aggregator.register(slow)
        for try await step in aggregator.progress() {
            if case .sourceCompleted(let report, _, _) = step {
                #expect(report.id == "fast")
                await clock.waitForSleepers(count: 1)  // the slow source is asleep when we stop listening
                break
            }
        }
        var spins = 0
        while clock.sleeperCount > 0, spins < 100_000 {
            await Task.yield()
            spins += 1
        }
        #expect(slow.callCount == 1)
        #expect(clock.sleeperCount == 0)
        #expect(clock.now.offset == .zero)
    }

    @Test("A skipped source (breaker open) is served from cache when it has a last good result")
    func breakerOpenServedFromCache() async throws {
        let cache = SourceCache<String>(clock: resilienceClock)
        cache.store(["cached"], for: "guarded", query: SourceQuery())
        var aggregator = aggregator(cache: cache)
        aggregator.register(ScriptedSource(id: "guarded", items: ["live"]), pipeline: OpenBreakerPipeline())
        let result = try await aggregator.fetch()
        let report = try #require(result.report.report(for: "guarded"))
        #expect(report.status == .servedFromCache)
        #expect(report.classification?.category == .circuitOpen)
        #expect(result.items == ["cached"])
    }

    @Test("A maximumConcurrentSources set to 0 or less after init is clamped to 1, as init clamps it: sources run")
    func nonPositiveConcurrencyIsClamped() async throws {
        for limit in [0, -3, Int.min] {
            var configuration = AggregatorConfiguration(sourceTimeout: nil)
            configuration.maximumConcurrentSources = limit
            #expect(configuration.maximumConcurrentSources == 1)
            var aggregator = aggregator(configuration)
            aggregator.register(ScriptedSource(id: "a", items: ["a1"]))
            aggregator.register(ScriptedSource(id: "b", items: ["b1"]))
            let result = try await aggregator.fetch()
            #expect(result.items == ["a1", "b1"], "limit \(limit)")
        }
    }
}
