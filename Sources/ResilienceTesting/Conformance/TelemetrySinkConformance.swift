import ResilienceCore

/// A conformance kit for ``TelemetrySink`` implementations (exporters, loggers, metric bridges).
///
/// Give it a factory for a fresh sink and, optionally, a way to read what the sink exported as text (a log
/// file, a captured handler's output); each case checks one rule of the sink contract: every event kind and
/// every optional field is accepted; `receive` returns promptly (it is on the hot path); concurrent calls
/// from many tasks are safe and, when the sink reports a count, none is lost; `isEnabled` is readable from
/// any task; and secrets (bearer tokens, cookies, `api_key` parameters) never appear in the exported text.
///
/// ```swift
/// @Test func conforms() async throws {
///     try await TelemetrySinkConformance { (sink: MySink(), exported: { MySink.lastOutput() }) }.check()
/// }
/// ```
public struct TelemetrySinkConformance: ConformanceKit {
    /// A sink under test and how to read what it exported (`nil` when it exports nothing readable).
    public typealias Subject = (sink: any TelemetrySink, exported: (@Sendable () -> String)?)

    /// Makes a fresh sink for each case.
    public let makeSink: @Sendable () -> Subject
    /// How many events the promptness case sends.
    public var promptEvents = 1_000
    /// The longest the promptness case may take (generous: a loaded machine passes; a sink that blocks for
    /// a few milliseconds per event does not).
    public var promptBound: Duration = .seconds(5)
    /// How many tasks send at once in the concurrency case, each `eventsPerTask` events.
    public var concurrentTasks = 8
    /// How many events each task sends in the concurrency case.
    public var eventsPerTask = 500

    /// Creates the kit.
    ///
    /// - Parameter makeSink: Makes a fresh sink (and optionally a reader of its exported text) per case.
    public init(makeSink: @escaping @Sendable () -> Subject) {
        self.makeSink = makeSink
    }

    /// Creates the kit for a sink with no readable output.
    ///
    /// - Parameter makeSink: Makes a fresh sink per case.
    public init(sink makeSink: @escaping @Sendable () -> any TelemetrySink) {
        self.makeSink = { (makeSink(), nil) }
    }

    /// `"TelemetrySink"`.
    public var subject: String { "TelemetrySink" }

    /// Every event kind this library emits (``ResilienceEventKind/predefined``).
    public static let allKinds: [ResilienceEventKind] = ResilienceEventKind.predefined

    static let secret = "s3cr3t-conformance-token"

    static func event(_ kind: ResilienceEventKind, index: Int = 0) -> ResilienceEvent {
        ResilienceEvent(
            kind: kind, key: "conformance", operation: "GET /jobs", attempt: index % 5 + 1,
            time: ResilienceInstant.origin.advanced(by: .milliseconds(index)), duration: .milliseconds(index % 100),
            classification: FailureClassification(
                category: .serverError, code: .serverUnavailable, httpStatus: 503, retryAfter: .seconds(2),
                message: "upstream said: Authorization: Bearer \(secret)"),
            transition: BreakerTransition(from: .closed, to: .open),
            detail: "GET https://api.example.com/jobs?api_key=\(secret) Cookie: session=\(secret)", count: index,
            total: index + 1)
    }

    /// Runs every case on a fresh sink.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        await run.check("accepts-every-kind-and-field") {
            let subject = makeSink()
            for kind in Self.allKinds {
                subject.sink.receive(Self.event(kind))
                subject.sink.receive(ResilienceEvent(kind: kind, key: "", time: .origin))
            }
            return nil
        }
        await run.check("receive-is-prompt") {
            let sink = makeSink().sink
            let started = ContinuousClock.now
            for index in 0..<promptEvents { sink.receive(Self.event(.attemptSucceeded, index: index)) }
            let elapsed = ContinuousClock.now - started
            return elapsed > promptBound ? "\(promptEvents) events took \(elapsed) (bound \(promptBound))" : nil
        }
        await run.check("concurrent-receive-and-isEnabled") {
            let sink = makeSink().sink
            let perTask = eventsPerTask
            await withTaskGroup(of: Void.self) { group in
                for task in 0..<concurrentTasks {
                    group.addTask {
                        for index in 0..<perTask {
                            _ = sink.isEnabled
                            sink.receive(Self.event(Self.allKinds[(task + index) % Self.allKinds.count], index: index))
                        }
                    }
                }
            }
            guard let recorder = sink as? RecordingTelemetrySink else { return nil }
            let expected = concurrentTasks * perTask
            return recorder.events.count == expected ? nil : "\(recorder.events.count) of \(expected) events kept"
        }
        await run.check("redacts-secrets") {
            let subject = makeSink()
            guard let exported = subject.exported else { return nil }
            for kind in Self.allKinds { subject.sink.receive(Self.event(kind)) }
            let text = exported()
            return text.contains(Self.secret) ? "a secret appears in the exported output" : nil
        }
        return run.report(subject)
    }
}
