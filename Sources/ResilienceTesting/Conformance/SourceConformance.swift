import Foundation
import ResilienceCore

/// A conformance kit for HTTP-based ``Source`` implementations: a third-party source module runs it in its
/// own tests (with any test framework) to check the ``Source`` contract.
///
/// It builds the source over a ``ScriptedHTTPTransport`` and checks that:
/// - the id is stable and non-empty, and a healthy response yields items;
/// - failures (5xx, 429, 404 unless allowed, an empty or garbage 2xx body, a connection error) are thrown,
///   never returned as an empty list, and are typed (a ``ClassifiedError``, an ``HTTPStatusError``, the
///   transport's own error, or something `classifier` recognises);
/// - cancellation is honoured promptly (before and during a request) and surfaces as cancellation;
/// - an expired `context.deadline` is honoured (the fetch throws instead of returning).
///
/// ```swift
/// let kit = SourceConformance(healthy: .status(200, body: fixture)) { transport in
///     MySource(id: "my-board", transport: transport)
/// }
/// let report = await kit.run()
/// #expect(report.conforms, "\(report)")      // or: try await kit.check()
/// ```
public struct SourceConformance<S: Source>: ConformanceKit {
    typealias Violation = ConformanceViolation

    /// A named failure the source must report as a typed, thrown error.
    public struct FailureScenario: Sendable {
        /// Its name in violations.
        public var name: String
        /// What the transport answers.
        public var answer: ScriptedHTTPTransport.Answer

        /// Creates a scenario.
        ///
        /// - Parameters:
        ///   - name: Its name in violations.
        ///   - answer: What the transport answers.
        public init(name: String, answer: ScriptedHTTPTransport.Answer) {
            self.name = name
            self.answer = answer
        }
    }

    /// Builds the source under test over the given transport.
    public var makeSource: @Sendable (any HTTPTransport) -> S
    /// A response the source turns into at least one item.
    public var healthy: ScriptedHTTPTransport.Answer
    /// The failures to try (``standardFailures`` by default).
    public var failures: [FailureScenario]
    /// Recognises the source's own errors besides the universal rules.
    public var classifier: any ErrorClassifier
    /// The query used.
    public var query: SourceQuery

    /// Creates a kit.
    ///
    /// - Parameters:
    ///   - healthy: A response the source turns into at least one item.
    ///   - failures: The failures to try (``standardFailures`` by default).
    ///   - classifier: Recognises the source's own errors besides the universal rules. Default:
    ///     `CompositeErrorClassifier.standard`.
    ///   - query: The query used. Default: `SourceQuery()`.
    ///   - makeSource: Builds the source under test over the given transport.
    public init(
        healthy: ScriptedHTTPTransport.Answer, failures: [FailureScenario] = SourceConformance.standardFailures,
        classifier: any ErrorClassifier = CompositeErrorClassifier.standard, query: SourceQuery = SourceQuery(),
        makeSource: @escaping @Sendable (any HTTPTransport) -> S
    ) {
        self.healthy = healthy
        self.failures = failures
        self.classifier = classifier
        self.query = query
        self.makeSource = makeSource
    }

    /// 500, 503 with `Retry-After`, 429, 404, an empty 200, a garbage 200 (an HTML error page), and a dropped
    /// connection.
    public static var standardFailures: [FailureScenario] {
        [
            FailureScenario(name: "http-500", answer: .status(500, body: "Internal Server Error")),
            FailureScenario(name: "http-503", answer: .status(503, headers: ["Retry-After": "30"])),
            FailureScenario(name: "http-429", answer: .status(429, headers: ["Retry-After": "60"])),
            FailureScenario(name: "http-404", answer: .status(404)),
            FailureScenario(name: "empty-200", answer: .status(200)),
            FailureScenario(
                name: "garbage-200",
                answer: .status(200, body: "<html><body><h1>502 Bad Gateway</h1>\u{0}\u{FFFD}</body></html>")),
            FailureScenario(name: "connection-lost", answer: .failure(URLError(.networkConnectionLost))),
        ]
    }

    /// `"Source"`.
    public var subject: String { "Source" }

    /// Runs every case and reports what each found.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        await run.run("stable-id", checkStableID)
        await run.run("healthy", checkHealthy)
        for scenario in failures {
            await run.run("failure:\(scenario.name)") { await checkFailure(scenario) }
        }
        await run.run("cancel-before-start", checkCancelledBeforeStart)
        await run.run("cancel-during-request", checkCancelledDuringRequest)
        await run.run("deadline", checkExpiredDeadline)
        return run.report(subject)
    }

    private func context(
        _ clock: ResilienceClock = .continuous, deadline: ResilienceInstant? = nil
    )
        -> ResilienceContext
    {
        ResilienceContext(key: "conformance", operation: "fetch", deadline: deadline, clock: clock)
    }

    private func checkStableID() async -> [Violation] {
        let first = makeSource(ScriptedHTTPTransport(sequence: [healthy]))
        let second = makeSource(ScriptedHTTPTransport(sequence: [healthy]))
        var found: [Violation] = []
        if first.id.rawValue.isEmpty { found.append(Violation(rule: "stable-id", detail: "the id is empty")) }
        if first.id != second.id {
            found.append(Violation(rule: "stable-id", detail: "two instances have ids \(first.id) and \(second.id)"))
        }
        _ = try? await first.fetch(query, context: context())
        if first.id != second.id {
            found.append(Violation(rule: "stable-id", detail: "the id changed after a fetch"))
        }
        return found
    }

    private func checkHealthy() async -> [Violation] {
        let source = makeSource(ScriptedHTTPTransport(sequence: [healthy]))
        do {
            let items = try await source.fetch(query, context: context())
            if items.isEmpty {
                return [Violation(rule: "healthy", detail: "the healthy response produced no items")]
            }
            return []
        } catch {
            return [Violation(rule: "healthy", detail: "the healthy response threw \(error)")]
        }
    }

    private func checkFailure(_ scenario: FailureScenario) async -> [Violation] {
        let source = makeSource(ScriptedHTTPTransport(sequence: [scenario.answer]))
        do {
            let items = try await source.fetch(query, context: context())
            return [
                Violation(
                    rule: "no-silent-empty",
                    detail: "\(scenario.name) returned \(items.count) items instead of throwing")
            ]
        } catch {
            return isTyped(error)
                ? []
                : [
                    Violation(
                        rule: "typed-failure", detail: "\(scenario.name) threw an unrecognised \(type(of: error))")
                ]
        }
    }

    private func checkCancelledBeforeStart() async -> [Violation] {
        let source = makeSource(ScriptedHTTPTransport(sequence: [healthy]))
        let query = query
        let context = context()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await source.fetch(query, context: context)
        }
        return await cancellationViolations(task, when: "cancelled before start")
    }

    private func checkCancelledDuringRequest() async -> [Violation] {
        let clock = ManualClock()
        let time = ResilienceClock.manual(clock)
        var slow = healthy
        slow.delay = .seconds(3_600)
        let transport = ScriptedHTTPTransport(sequence: [slow], clock: time)
        let source = makeSource(transport)
        let query = query
        let context = context(time)
        let task = Task { try await source.fetch(query, context: context) }
        var spins = 0
        while transport.requests.isEmpty, spins < 100_000 {
            await Task.yield()
            spins += 1
        }
        if transport.requests.isEmpty {
            task.cancel()
            _ = try? await task.value
            return [Violation(rule: "cancellation", detail: "the source never sent a request")]
        }
        task.cancel()
        return await cancellationViolations(task, when: "cancelled during the request")
    }

    private func cancellationViolations(_ task: Task<[S.Item], any Error>, when: String) async -> [Violation] {
        do {
            let items = try await task.value
            return [Violation(rule: "cancellation", detail: "\(when): returned \(items.count) items")]
        } catch {
            if CancellationDetection.isCancellation(error) { return [] }
            return [Violation(rule: "cancellation", detail: "\(when): threw \(error) instead of cancellation")]
        }
    }

    private func checkExpiredDeadline() async -> [Violation] {
        let clock = ManualClock()
        let time = ResilienceClock.manual(clock)
        let transport = ScriptedHTTPTransport(sequence: [healthy], clock: time)
        let source = makeSource(transport)
        clock.advance(by: .seconds(10))
        do {
            let items = try await source.fetch(
                query, context: context(time, deadline: ResilienceInstant(offset: .seconds(1))))
            return [Violation(rule: "deadline", detail: "an expired deadline still returned \(items.count) items")]
        } catch {
            return isTyped(error) ? [] : [Violation(rule: "deadline", detail: "threw an unrecognised \(error)")]
        }
    }

    private func isTyped(_ error: any Error) -> Bool {
        if CompositeErrorClassifier.universalClassification(of: error) != nil { return true }
        if error is HTTPStatusError || error is URLError { return true }
        return classifier.classify(error).map { $0.category != .unknown } ?? false
    }
}
