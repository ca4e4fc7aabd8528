import ResilienceCore

/// A conformance kit for ``ConnectivityMonitor`` implementations.
///
/// Give it a factory for a fresh monitor and a way to make that monitor see a path: for a monitor you feed
/// yourself, call your own update; for a system monitor, change the system (take an interface down inside a
/// network namespace, say) and return once done. Each case checks one rule of the contract: ``ConnectivityMonitor/paths()``
/// starts with ``ConnectivityMonitor/currentPath``; changes arrive in order, a repeated report of the same path is not a change;
/// several listeners each see every change; `waitForPath` returns at once when the path already suits and
/// wakes when it comes; and a cancelled waiter returns promptly with `CancellationError` and stops listening.
///
/// ```swift
/// @Test func conforms() async throws {
///     try await ConnectivityMonitorConformance {
///         let monitor = ScriptedConnectivityMonitor(.satisfied)
///         return (monitor, { path in monitor.setPath(path) })
///     }.check()
/// }
/// ```
///
/// Every case is bounded by ``bound`` on ``clock`` (the real clock unless you give one), so a monitor that
/// never reports a change fails its case instead of hanging the test run.
public struct ConnectivityMonitorConformance: ConformanceKit {
    /// A monitor under test and how to make it see `path` (returns once the change is made).
    public typealias Subject = (monitor: any ConnectivityMonitor, present: @Sendable (NetworkPath) async throws -> Void)

    /// Makes a fresh monitor for each case, showing a satisfied path.
    public let makeSubject: @Sendable () async throws -> Subject
    /// The longest any wait of a case may take (generous: a system monitor learns of a change within
    /// milliseconds; a monitor that never reports one fails after this).
    public var bound: Duration = .seconds(10)
    /// The clock ``bound`` is measured on. Default: the real clock.
    public var clock: ResilienceClock = .continuous

    /// Creates the kit.
    ///
    /// - Parameter makeSubject: Makes a fresh monitor, showing a satisfied path, and a way to make it see
    ///   another path.
    public init(makeSubject: @escaping @Sendable () async throws -> Subject) {
        self.makeSubject = makeSubject
    }

    /// `"ConnectivityMonitor"`.
    public var subject: String { "ConnectivityMonitor" }

    /// Runs every case.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        await run.check("paths-start-with-current") {
            await bounded { subject in
                var paths = subject.monitor.paths().makeAsyncIterator()
                let first = await paths.next()
                return first == subject.monitor.currentPath
                    ? nil
                    : "the first path was \(String(describing: first)), the current one \(subject.monitor.currentPath)"
            }
        }
        await run.check("changes-in-order") {
            await bounded { subject in
                var paths = subject.monitor.paths().makeAsyncIterator()
                _ = await paths.next()
                try await subject.present(.unsatisfied)
                let offline = await paths.next()
                try Task.checkCancellation()
                try await subject.present(.unsatisfied)
                try await subject.present(.satisfied)
                let online = await paths.next()
                guard offline?.status == .unsatisfied, online?.status == .satisfied else {
                    return "saw \(String(describing: offline)) then \(String(describing: online))"
                }
                return subject.monitor.currentPath.isSatisfied ? nil : "the current path stayed offline"
            }
        }
        await run.check("every-listener-sees-every-change") {
            await bounded { subject in
                var first = subject.monitor.paths().makeAsyncIterator()
                var second = subject.monitor.paths().makeAsyncIterator()
                _ = await first.next()
                _ = await second.next()
                try await subject.present(.unsatisfied)
                let (a, b) = (await first.next(), await second.next())
                return a?.status == .unsatisfied && b?.status == .unsatisfied
                    ? nil : "listeners saw \(String(describing: a)) and \(String(describing: b))"
            }
        }
        await run.check("wait-returns-at-once-or-wakes") {
            await bounded { subject in
                let now = try await subject.monitor.waitForPath()
                guard now.isSatisfied else { return "waitForPath returned \(now) on a satisfied path" }
                try await subject.present(.unsatisfied)
                guard !subject.monitor.currentPath.isSatisfied else { return "the path never went offline" }
                let monitor = subject.monitor
                let waiter = Task { try await monitor.waitForPath() }
                try await subject.present(.satisfied)
                let woken = try await waiter.value
                return woken.isSatisfied ? nil : "waitForPath woke with \(woken)"
            }
        }
        await run.check("cancelled-wait-ends") {
            await bounded { subject in
                try await subject.present(.unsatisfied)
                guard !subject.monitor.currentPath.isSatisfied else { return "the path never went offline" }
                let monitor = subject.monitor
                let waiter = Task { try await monitor.waitForPath() }
                waiter.cancel()
                switch await waiter.result {
                case .success(let path): return "a cancelled wait returned \(path)"
                case .failure(let error) where error is CancellationError: return nil
                case .failure(let error): return "a cancelled wait threw \(error), not CancellationError"
                }
            }
        }
        return run.report(subject)
    }

    /// Runs `body` on a fresh subject within ``bound``; a thrown error or the time running out is a violation.
    private func bounded(_ body: @escaping @Sendable (Subject) async throws -> String?) async -> String? {
        let makeSubject = makeSubject
        do {
            return try await withDeadline(after: bound, clock: clock) {
                try await body(try await makeSubject())
            }
        } catch is DeadlineExceededError {
            return "no answer within \(bound)"
        } catch {
            return "threw \(error)"
        }
    }
}
