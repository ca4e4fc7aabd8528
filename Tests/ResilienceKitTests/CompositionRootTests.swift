import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

@Suite("Composition root")
struct CompositionRootTests {
    /// A configuration whose only waits are the retry stage's (100 ms, no jitter), so tests drive them exactly.
    func quietConfiguration() -> CompositionRootConfiguration {
        var configuration = CompositionRootConfiguration.standard
        configuration.aggregator.sourceTimeout = nil
        configuration.aggregator.itemNoun = "jobs"
        configuration.preset.totalDeadline = nil
        configuration.preset.attemptTimeout = nil
        configuration.preset.limiter = nil
        configuration.preset.retry = StandardRetryPolicy(
            maxAttempts: 3, backoff: .constant(.milliseconds(100)), jitter: .none)
        return configuration
    }

    @Test("A per-source override changes only that source's pipeline description")
    func overrideChangesOneSource() {
        let clock = ManualClock()
        var root = CompositionRoot<String>(.standard, clock: .manual(clock))
        for id in ["a", "b", "c"] { root.register(ScriptedSource<String>(id: SourceID(id), items: [id])) }
        let before = root.sourceIDs.map { root.pipeline(for: $0).pipelineDescription }
        #expect(Set(before).count == 1)

        root.override("b") { $0.retry = StandardRetryPolicy.background }
        let after = root.sourceIDs.map { root.pipeline(for: $0).pipelineDescription }
        #expect(after[0] == before[0])
        #expect(after[2] == before[2])
        #expect(after[1] != before[1])
        #expect(after[1].contains("maxAttempts: 6"))
        #expect(root.pipelines.overriddenKeys == ["b"])
        #expect(root.sourceDescription("b")?.contains("override: customized") == true)
        #expect(root.sourceDescription("a")?.contains("(default)") == true)

        root.register(ScriptedSource<String>(id: "c", items: ["c"])) { $0.breaker = .rateLimit(.strict) }
        #expect(root.pipeline(for: "c").pipelineDescription.contains("rate-limit"))
        #expect(root.pipeline(for: "a").pipelineDescription == before[0])
        #expect(root.sourceIDs == ["a", "b", "c"])
    }

    @Test("Re-registering without an override restores the default; a hand-built pipeline can replace one")
    func reRegistrationAndCustomPipelines() {
        var root = CompositionRoot<String>(.standard, clock: .manual(ManualClock()))
        root.register(ScriptedSource<String>(id: "a", items: ["a"])) { $0.retry = nil }
        #expect(!root.pipeline(for: "a").stages.map(\.name).contains("retry"))
        root.register(ScriptedSource<String>(id: "a", items: ["a"]))
        #expect(root.pipeline(for: "a").stages.map(\.name).contains("retry"))
        #expect(root.pipelines.overriddenKeys.isEmpty)

        root.override("a", pipeline: Pipeline { TimeoutStrategy(.seconds(1)) })
        #expect(root.pipeline(for: "a").stages.map(\.name) == ["timeout"])
        #expect(root.makeAggregator().registrations[0].pipeline.stages.map(\.name) == ["timeout"])
        #expect(root.sourceDescription("a")?.contains("override: custom") == true)
        #expect(root.sourceDescription("missing") == nil)
    }

    @Test("override(_:_:) adjusts the source's own settings: the preset or customisation it was registered with stays")
    func overrideKeepsRegistrationSettings() {
        var root = CompositionRoot<String>(.standard, clock: .manual(ManualClock()))
        root.register(ScriptedSource<String>(id: "lever", items: ["l"])) { $0.retry = StandardRetryPolicy.background }
        root.register(ScriptedSource<String>(id: "feed", items: ["f"]), preset: .background)
        root.register(ScriptedSource<String>(id: "plain", items: ["p"]))

        root.override("lever") { $0.attemptTimeout = .seconds(5) }
        root.override("feed") { $0.attemptTimeout = .seconds(5) }
        root.override("plain") { $0.attemptTimeout = .seconds(5) }
        root.override("lever") { $0.breaker = nil }

        func expected(_ base: PipelinePreset, _ customize: (inout PipelinePreset) -> Void) -> String {
            var settings = base
            customize(&settings)
            return Pipeline.preset(settings).pipelineDescription
        }
        #expect(
            root.pipeline(for: "lever").pipelineDescription
                == expected(.standard) {
                    $0.retry = StandardRetryPolicy.background
                    $0.attemptTimeout = .seconds(5)
                    $0.breaker = nil
                })
        #expect(
            root.pipeline(for: "feed").pipelineDescription == expected(.background) { $0.attemptTimeout = .seconds(5) })
        #expect(
            root.pipeline(for: "plain").pipelineDescription == expected(.standard) { $0.attemptTimeout = .seconds(5) })

        // A re-registration starts over from what it is given.
        root.register(ScriptedSource<String>(id: "lever", items: ["l"]))
        root.override("lever") { $0.attemptTimeout = .seconds(7) }
        #expect(
            root.pipeline(for: "lever").pipelineDescription == expected(.standard) { $0.attemptTimeout = .seconds(7) })
    }

    @Test("An override made before its source is registered holds when the source is registered plainly")
    func overrideBeforeRegistration() {
        var root = CompositionRoot<String>(.standard, clock: .manual(ManualClock()))
        root.override("lever") { $0.attemptTimeout = .seconds(5) }
        root.override("lever") { $0.breaker = nil }
        root.override("feed", pipeline: Pipeline { TimeoutStrategy(.seconds(1)) })
        root.override("own") { $0.attemptTimeout = .seconds(5) }
        root.register(ScriptedSource<String>(id: "lever", items: ["l"]))
        root.register(ScriptedSource<String>(id: "feed", items: ["f"]))
        root.register(ScriptedSource<String>(id: "own", items: ["o"]), preset: .background)
        var settings = PipelinePreset.standard
        settings.attemptTimeout = .seconds(5)
        settings.breaker = nil
        #expect(root.pipeline(for: "lever").pipelineDescription == Pipeline.preset(settings).pipelineDescription)
        #expect(root.sourceDescription("lever")?.contains("override: customized") == true)
        #expect(root.pipeline(for: "feed").stages.map(\.name) == ["timeout"])
        #expect(root.sourceDescription("feed")?.contains("override: custom") == true)
        // A registration with a preset of its own starts from it.
        #expect(
            root.pipeline(for: "own").pipelineDescription
                == Pipeline.preset(.background).pipelineDescription)
        // Later overrides build on the early one; a re-registration starts over.
        root.override("lever") { $0.attemptTimeout = .seconds(7) }
        settings.attemptTimeout = .seconds(7)
        #expect(root.pipeline(for: "lever").pipelineDescription == Pipeline.preset(settings).pipelineDescription)
        root.register(ScriptedSource<String>(id: "lever", items: ["l"]))
        #expect(root.pipeline(for: "lever").pipelineDescription == Pipeline.preset(.standard).pipelineDescription)
        #expect(root.pipelines.overriddenKeys == ["feed", "own"])
    }

    @Test("A source registered with a preset of its own follows the root's connectivity monitor too")
    func registeredPresetKeepsTheRootsMonitor() {
        let monitor = ScriptedConnectivityMonitor(.unsatisfied)
        var configuration = CompositionRootConfiguration.interactive
        configuration.preset.connectivity = monitor
        var root = CompositionRoot<String>(configuration, clock: .manual(ManualClock()))
        root.register(ScriptedSource<String>(id: "acme", items: ["a"]))
        root.register(ScriptedSource<String>(id: "feed", items: ["f"]), preset: .background)
        root.register(ScriptedSource<String>(id: "quiet", items: ["q"]), preset: .background) {
            $0.connectivityWait = nil
        }
        #expect(root.pipeline(for: "acme").stages.map(\.name).contains("wait-for-connectivity"))
        #expect(
            root.pipeline(for: "feed").stages.map(\.name).contains("wait-for-connectivity"),
            "the background preset's 5-minute wait, on the root's monitor")
        #expect(!root.pipeline(for: "quiet").stages.map(\.name).contains("wait-for-connectivity"))
    }

    @Test("A registered source keeps one breaker across aggregators, idle time and registry pressure")
    func oneBreakerPerRegisteredSource() async throws {
        let clock = ManualClock()
        var configuration = quietConfiguration()
        configuration.preset.retry = nil
        var breaker = ConsecutiveFailureBreaker.Configuration.standard
        breaker.failureThreshold = 1
        configuration.preset.breaker = .consecutiveFailures(breaker)
        configuration.registry = PipelineRegistry.Configuration(maximumKeys: 1, idleTimeout: .seconds(1))
        var root = CompositionRoot<String>(configuration, clock: .manual(clock))
        root.register(
            ScriptedSource<String>(
                id: "flaky", steps: [.failure(URLError(.cannotConnectToHost)), .items(["recovered"])]))
        root.register(ScriptedSource<String>(id: "steady", items: ["s"]))

        let first = try await root.makeAggregator().fetch()
        #expect(first.report.report(for: "flaky")?.status == .failed)

        // Idle far past the registry's idle timeout (but within the breaker's open time), and unregistered
        // keys competing for the registry's single slot.
        clock.advance(by: .seconds(10))
        root.pipelines.evictIdle()
        _ = root.pipelines.pipeline(for: "some-host")
        _ = root.pipelines.pipeline(for: "another-host")
        #expect(root.pipelines.pinnedKeys == ["flaky", "steady"])

        let second = try await root.makeAggregator().fetch()
        #expect(second.report.report(for: "flaky")?.status == .skippedCircuitOpen)
        #expect(second.items == ["s"])
    }

    @Test("root.fetch returns items, reports and one message; a missed completion policy is presented too")
    func fetchPresentsEveryOutcome() async throws {
        var configuration = quietConfiguration()
        configuration.preset.retry = nil
        var root = CompositionRoot<String>(configuration, clock: .manual(ManualClock()))
        root.register(ScriptedSource<String>(id: "down", steps: [.failure(URLError(.cannotConnectToHost))]))
        root.register(ScriptedSource<String>(id: "up", items: ["u"]))
        let partial = try await root.fetch()
        #expect(partial.metPolicy)
        #expect(partial.items == ["u"])
        #expect(partial.report.sources.count == 2)
        #expect(partial.message != nil)

        var strict = quietConfiguration()
        strict.preset.retry = nil
        strict.aggregator.completion = .allOrNothing
        var failing = CompositionRoot<String>(strict, clock: .manual(ManualClock()))
        failing.register(ScriptedSource<String>(id: "down", steps: [.failure(URLError(.cannotConnectToHost))]))
        failing.register(ScriptedSource<String>(id: "up", items: ["u"]))
        let missed = try await failing.fetch()
        #expect(!missed.metPolicy)
        #expect(missed.items.isEmpty)
        let message = try #require(missed.message)
        #expect(
            message
                == failing.configuration.presenter.present(
                    missed.report.presentationContext(itemNoun: "jobs", itemsShown: 0, metPolicy: false)))
        #expect(!message.message.contains("AggregationError"))
    }

    @Test("Events reach both the recorder and an extra sink")
    func extraTelemetrySink() async throws {
        let sink = RecordingTelemetrySink()
        var configuration = quietConfiguration()
        configuration.preset.retry = nil
        var root = CompositionRoot<String>(
            configuration, clock: .manual(ManualClock()), telemetry: sink)
        root.register(ScriptedSource<String>(id: "down", steps: [.failure(URLError(.cannotConnectToHost))]))
        root.register(ScriptedSource<String>(id: "up", items: ["u"]))
        _ = try await root.makeAggregator().fetch()
        #expect(sink.contains(.sourceFailed))
        #expect(sink.contains(.fetchCompleted))
        #expect(root.statistics().fetches == 1)
        #expect(root.statistics().partialFetches == 1)
    }

    @Test("The configuration describes itself: transport, classifier, presenter, sources, kinds and stages")
    func describesItself() {
        var configuration = CompositionRootConfiguration.interactive
        configuration.secureTransport = SecureTransportPolicy(action: .block, allowedInsecureHosts: ["127.0.0.1"])
        var root = CompositionRoot<String>(configuration, clock: .manual(ManualClock()))
        root.register(ScriptedSource<String>(id: "greenhouse", kind: "json-api", steps: []))
        root.register(ScriptedSource<String>(id: "feed", kind: "feed", steps: []), timeout: .seconds(3))
        let text = root.configurationDescription
        #expect(text.contains("composition root: 2 sources"))
        #expect(text.contains("secure(plaintext: block, allowed: [127.0.0.1])"))
        #expect(text.contains("TransportErrorClassifier"))
        #expect(text.contains("DefaultErrorPresenter"))
        #expect(text.contains("greenhouse [json-api]"))
        #expect(text.contains("feed [feed]"))
        #expect(text.contains("source-deadline(limit: 3.0 seconds, mode: enforced) → "))
        #expect(text.contains("circuit-breaker"))
        #expect(text.contains("retry"))
    }

    @Test("The aggregator built by the root runs each source through its own pipeline")
    func eachSourceHasItsOwnPipeline() async throws {
        let clock = ManualClock()
        var root = CompositionRoot<String>(quietConfiguration(), clock: .manual(clock))
        let retried = ScriptedSource<String>(
            id: "retried", steps: [.failure(URLError(.networkConnectionLost)), .items(["r1", "r2"])],
            clock: .manual(clock))
        let unretried = ScriptedSource<String>(
            id: "unretried", steps: [.failure(URLError(.networkConnectionLost)), .items(["never"])],
            clock: .manual(clock))
        root.register(retried)
        root.register(unretried) { $0.retry = nil }
        let aggregator = root.makeAggregator()

        let fetch = Task { try await aggregator.fetch() }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(100))
        let result = try await fetch.value

        #expect(result.items == ["r1", "r2"])
        let retriedReport = try #require(result.report.report(for: "retried"))
        let unretriedReport = try #require(result.report.report(for: "unretried"))
        #expect(retriedReport.status == .succeeded)
        #expect(retriedReport.attempts == 2)
        #expect(unretriedReport.status == .failed)
        #expect(unretriedReport.attempts == 1)
        // The root's classifier (TransportErrorClassifier) recognised the URLError.
        #expect(unretriedReport.classification?.category == .transient)
        #expect(retried.callCount == 2)
        #expect(unretried.callCount == 1)
        #expect(root.statistics().sources["retried"]?.retries == 1)
    }

    @Test("The presenter turns a partial report into \"Showing jobs from N of M sources\"")
    func presentsPartialResults() async throws {
        let clock = ManualClock()
        var configuration = quietConfiguration()
        configuration.preset.retry = nil
        var root = CompositionRoot<String>(configuration, clock: .manual(clock))
        root.register(ScriptedSource<String>(id: "acme", items: ["a"]))
        root.register(ScriptedSource<String>(id: "globex", items: ["g"]))
        root.register(
            ScriptedSource<String>(
                id: "lever", displayName: "Lever",
                steps: [.failure(HTTPStatusError(response: HTTPResponse(status: 503), request: nil))]))
        let result = try await root.makeAggregator().fetch()
        let message = try #require(root.present(result))
        #expect(message.message.contains("Showing jobs from 2 of 3 sources"))
        #expect(message.message.contains("Lever"))
        #expect(message.severity == .info)
        #expect(result.report.report(for: "lever")?.classification?.category == .serverError)
    }

    @Test("Every source delivering live means no message")
    func noMessageWhenComplete() async throws {
        var root = CompositionRoot<String>(quietConfiguration(), clock: .manual(ManualClock()))
        root.register(ScriptedSource<String>(id: "acme", items: ["a"]))
        let result = try await root.makeAggregator().fetch()
        #expect(root.present(result) == nil)
        #expect(result.items == ["a"])
    }

    @Test("The transport stack applies the secure-transport policy before the base transport")
    func transportStack() async throws {
        let clock = ManualClock()
        let base = ScriptedHTTPTransport(sequence: [.json("[]")], clock: .manual(clock))
        var configuration = quietConfiguration()
        configuration.secureTransport = SecureTransportPolicy(action: .block, allowedInsecureHosts: ["127.0.0.1"])
        let root = CompositionRoot<String>(configuration, clock: .manual(clock), baseTransport: base)
        let context = ResilienceContext(key: "t", operation: "fetch", clock: .manual(clock))

        let allowed = try await root.transport.send(
            HTTPRequest(url: URL(string: "http://127.0.0.1:1/ok")!), context: context)
        #expect(allowed.status == 200)
        await #expect(throws: TransportError.self) {
            try await root.transport.send(HTTPRequest(url: URL(string: "http://jobs.example/feed")!), context: context)
        }
        #expect(base.requests.map(\.url.absoluteString) == ["http://127.0.0.1:1/ok"])
    }

    @Test("A host pipeline wraps the base transport in ResilientTransport, inside the secure policy")
    func hostPipeline() async throws {
        let clock = ManualClock()
        let base = ScriptedHTTPTransport(sequence: [.status(503), .json("[]")], clock: .manual(clock))
        var configuration = quietConfiguration()
        configuration.hostPipeline = configuration.preset
        let root = CompositionRoot<String>(configuration, clock: .manual(clock), baseTransport: base)
        #expect(root.configurationDescription.contains("per-host pipeline → ScriptedHTTPTransport"))
        let context = ResilienceContext(key: "t", operation: "fetch", clock: .manual(clock))
        let send = Task {
            try await root.transport.send(HTTPRequest(url: URL(string: "https://jobs.example/")!), context: context)
        }
        await clock.waitForSleepers(count: 1)
        clock.advance(by: .milliseconds(100))
        #expect(try await send.value.status == 200)
        #expect(base.requests.count == 2)
    }

    @Test(
        "The root's aggregator follows the preset's connectivity monitor: a fetch started offline waits, then sends",
        .timeLimit(.minutes(1)))
    func aggregatorFollowsConnectivity() async throws {
        let clock = ManualClock()
        let base = ScriptedHTTPTransport(sequence: [.json(#"["a"]"#)], clock: .manual(clock))
        let monitor = ScriptedConnectivityMonitor(.unsatisfied)
        var configuration = quietConfiguration()
        configuration.preset.connectivity = monitor
        configuration.preset.connectivityWait = .standard
        var root = CompositionRoot<String>(configuration, clock: .manual(clock), baseTransport: base)
        let transport = root.transport
        root.register(
            JSONAPISource<String>(id: "acme", transport: transport) { _, _ in
                HTTPRequest(url: URL(string: "https://jobs.example/acme")!)
            })
        #expect(root.makeAggregator().connectivity != nil)

        let fetch = Task { try await root.fetch() }
        while monitor.listenerCount == 0 { await Task.yield() }
        #expect(base.requests.isEmpty)
        monitor.setOnline(true)
        let outcome = try await fetch.value
        #expect(outcome.items == ["a"])
        #expect(outcome.message == nil)
        #expect(base.requests.count == 1)
    }

    @Test(
        "A fetch that stays offline is told so within one source timeout: the pipelines' wait is the only wait",
        .timeLimit(.minutes(1)))
    func offlineFetchWaitsOnce() async throws {
        let clock = ManualClock()
        let monitor = ScriptedConnectivityMonitor(.unsatisfied)
        var configuration = CompositionRootConfiguration.interactive  // 8 s per source, 10 s per call
        configuration.preset.connectivity = monitor
        var root = CompositionRoot<String>(configuration, clock: .manual(clock))
        let source = ScriptedSource<String>(id: "acme", items: ["a"])
        root.register(source)
        let finished = LockedBox(false)
        let fetch = Task { [root] in
            defer { finished.mutate { $0 = true } }
            return try await root.fetch()
        }
        while monitor.listenerCount == 0 { await Task.yield() }
        clock.advance(by: .seconds(8))
        for _ in 0..<100_000 where !finished.value && clock.sleeperCount < 2 { await Task.yield() }
        // A second wait (each pipeline's, after the fetch's own) would still be holding the fetch: let it end, so
        // the test fails on the duration instead of hanging.
        if !finished.value { clock.advanceToNextDeadline() }
        let outcome = try await fetch.value
        #expect(outcome.report.duration == .seconds(8), "the person waited \(outcome.report.duration)")
        #expect(outcome.message?.isOffline == true)
        #expect(source.callCount == 0)

        // The path returning during the wait: the source runs at once.
        let back = ScriptedConnectivityMonitor(.unsatisfied)
        var online = configuration
        online.preset.connectivity = back
        var returning = CompositionRoot<String>(online, clock: .manual(clock))
        returning.register(ScriptedSource<String>(id: "acme", items: ["a"]))
        let second = Task { [returning] in try await returning.fetch() }
        while back.listenerCount == 0 { await Task.yield() }
        clock.advance(by: .seconds(3))
        back.setOnline(true)
        let delivered = try await second.value
        #expect(delivered.items == ["a"])
        #expect(delivered.report.duration == .seconds(3))
        #expect(delivered.message == nil)
    }

    @Test("A host that cannot be found while the monitor says the device is online is not presented as offline")
    func unreachableHostWhileOnline() async throws {
        var configuration = quietConfiguration()
        configuration.preset.retry = nil
        configuration.preset.connectivity = ScriptedConnectivityMonitor(.satisfied)
        var root = CompositionRoot<String>(configuration, clock: .manual(ManualClock()))
        root.register(ScriptedSource<String>(id: "acme", steps: [.failure(URLError(.cannotFindHost))]))
        let outcome = try await root.fetch()
        #expect(outcome.report.sources.first?.classification?.category == .networkUnreachable)
        #expect(outcome.report.wasOnline && !outcome.report.wasOffline)
        let message = try #require(outcome.message)
        #expect(!message.isOffline)
        #expect(message.title == "Server Unreachable")
        #expect(!message.message.localizedCaseInsensitiveContains("internet connection"))
        #expect(message.showsRetry)

        // Without a monitor nothing is known about the path: the failure alone still reads as offline.
        var unknown = quietConfiguration()
        unknown.preset.retry = nil
        var blind = CompositionRoot<String>(unknown, clock: .manual(ManualClock()))
        blind.register(ScriptedSource<String>(id: "acme", steps: [.failure(URLError(.cannotFindHost))]))
        #expect(try await blind.fetch().message?.title == "You're Offline")
    }
}
