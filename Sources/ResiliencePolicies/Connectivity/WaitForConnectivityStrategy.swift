import ResilienceCore

/// The wait-for-connectivity stage: while the device has no usable network path, a call waits for one instead
/// of failing, and a call that failed because the network was unreachable waits for the path and runs again at
/// once, so an outage of the device's own network costs no retry attempts, no retry budget and, inside a
/// breaker, no breaker failures.
///
/// Put it inside the retry stage and outside the per-attempt timeout: the stages outside it see one attempt
/// that took longer, and each run after the path returns gets a fresh attempt timeout. The presets put it
/// outside the breaker too: a breaker that judges silence (``FailureRatioBreaker/Configuration/opensWhenUnanswered``)
/// would read the calls it holds while offline as calls the server left unanswered; there, a call the network
/// drops midway counts once as the breaker's failure.
///
/// - Before each run, when ``ConnectivityWaitPolicy/accepts(_:)`` refuses the monitor's current path, it
///   waits for an accepted path.
/// - When a run fails classified ``FailureCategory/networkUnreachable`` and the path is not accepted now, it
///   waits for one and runs again (at most ``ConnectivityWaitPolicy/maximumWaits`` times per call). A
///   failure while the path looks fine is rethrown: that is the server's or the route's problem, for the
///   retry stage and the breaker to judge.
/// - Every wait ends by the context's deadline or ``ConnectivityWaitPolicy/maximumWait``, whichever comes
///   first; then the call fails with the failure it had (or, if it never ran, ``ResilienceError`` with code
///   `deadlineExceeded` whose underlying failure is the missing path: classified
///   ``FailureCategory/networkUnreachable`` `NET_001`, not sent, so the person is told they are offline and not
///   that a server was slow). Cancellation ends a wait at once.
/// - A monitor that stops (``ConnectivityMonitorError/stopped``: shut down, or its source of path information
///   failed) can no longer say when the network is back, so the stage stops holding calls: a call waiting to
///   run runs at once, and one that failed network-unreachable fails with that failure, for the retry stage
///   to judge. A stopped monitor is never reported as the time running out.
/// - Each wait is emitted as a `connectivityWait` event (its duration, and the path it waited for, `gave-up`
///   or `monitor-stopped`).
///
/// ```swift
/// let monitor = try NetlinkConnectivityMonitor()            // or PathMonitorConnectivity() on Apple platforms
/// let pipeline = Pipeline {
///     TotalDeadlineStrategy(.seconds(30))
///     RetryStrategy(policy: StandardRetryPolicy.standard)
///     WaitForConnectivityStrategy(monitor: monitor)
///     TimeoutStrategy(.seconds(10))
/// }
/// ```
public struct WaitForConnectivityStrategy: ResilienceStrategy {
    /// Where the path comes from.
    public var monitor: any ConnectivityMonitor
    /// Which paths a call runs on, and how long it waits.
    public var policy: ConnectivityWaitPolicy

    /// Creates the stage.
    ///
    /// - Parameters:
    ///   - monitor: Where the path comes from (share one per process).
    ///   - policy: Which paths a call runs on, and how long it waits. Default: `.standard`.
    public init(monitor: any ConnectivityMonitor, policy: ConnectivityWaitPolicy = .standard) {
        self.monitor = monitor
        self.policy = policy
    }

    /// Runs `next` on an accepted path, waiting for one first and after a network-unreachable failure.
    public func execute<Output: Sendable>(
        _ context: ResilienceContext,
        next: (ResilienceContext) async throws -> Output
    ) async throws -> Output {
        var waits = 0
        if !policy.accepts(monitor.currentPath) {
            waits += 1
            try await waitForPath(context, failure: nil)
        }
        while true {
            do {
                return try await next(context)
            } catch {
                let failure = context.classify(error)
                guard failure.category == .networkUnreachable, !Task.isCancelled, waits < policy.maximumWaits,
                    !policy.accepts(monitor.currentPath)
                else { throw error }
                waits += 1
                try await waitForPath(context, failure: error)
            }
        }
    }

    /// Waits for an accepted path within the deadline; throws `failure` (or `deadlineExceeded`) when the time
    /// runs out first. When the monitor stops, returns (the call runs) before a first run, and throws `failure`
    /// after one.
    private func waitForPath(_ context: ResilienceContext, failure: (any Error)?) async throws {
        let clock = context.clock
        let start = clock.now()
        var end = start.advanced(by: policy.maximumWait)
        if let deadline = context.deadline, deadline < end { end = deadline }
        let monitor = monitor
        let policy = policy
        do {
            let path = try await withDeadline(until: end, clock: clock) {
                try await monitor.waitForPath(where: policy.accepts)
            }
            let now = clock.now()
            context.emit(.connectivityWait, at: now) {
                $0.duration = start.duration(to: now)
                $0.detail = path.status.rawValue
            }
        } catch is ConnectivityMonitorError {
            if Task.isCancelled { throw CancellationError() }
            let now = clock.now()
            context.emit(.connectivityWait, at: now) {
                $0.duration = start.duration(to: now)
                $0.detail = "monitor-stopped"
            }
            if let failure { throw failure }
        } catch {
            if Task.isCancelled { throw CancellationError() }
            let now = clock.now()
            context.emit(.connectivityWait, at: now) {
                $0.duration = start.duration(to: now)
                $0.detail = "gave-up"
            }
            throw failure
                ?? ResilienceError(
                    .deadlineExceeded, key: context.key,
                    underlying: FailureClassification(
                        category: .networkUnreachable, code: .noConnection, isTransient: false,
                        message: "no usable network path (\(monitor.currentPath)) for \(start.duration(to: now))",
                        requestWasNotSent: true))
        }
    }

    /// `wait-for-connectivity(maximumWait: 60 seconds, defers: constrained)`.
    public var stageDescription: StageDescription {
        var settings = [StageDescription.Setting("maximumWait", "\(policy.maximumWait)")]
        let defers = [
            policy.defersWhileConstrained ? "constrained" : nil, policy.defersWhileExpensive ? "expensive" : nil,
        ]
        .compactMap { $0 }
        if !defers.isEmpty { settings.append(.init("defers", defers.joined(separator: ", "))) }
        return StageDescription(name: StageDescription.connectivityWaitName, settings: settings)
    }
}

/// Which network paths a call runs on, and how long it waits for one: plain, validated data.
public struct ConnectivityWaitPolicy: Hashable, Sendable {
    /// The longest one wait may take, also bounded by the call's deadline. Default: 60 s.
    public var maximumWait: Duration {
        didSet { maximumWait = max(.zero, maximumWait) }
    }
    /// How many times one call may wait (before running and after network-unreachable failures): a path
    /// that comes and goes cannot keep a call alive forever. Default: 3.
    public var maximumWaits: Int {
        didSet { maximumWaits = max(1, maximumWaits) }
    }
    /// Whether to wait while the person asked to use little data (Low Data Mode). Default: `false`.
    public var defersWhileConstrained: Bool
    /// Whether to wait while the path is expensive (cellular, a hotspot). Default: `false`.
    public var defersWhileExpensive: Bool

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - maximumWait: The longest one wait may take (negative counts as zero); the call's deadline also
    ///     bounds it. Default: 60 s.
    ///   - maximumWaits: How many times one call may wait (at least 1). Default: 3.
    ///   - defersWhileConstrained: Whether to wait while the path is constrained. Default: `false`.
    ///   - defersWhileExpensive: Whether to wait while the path is expensive. Default: `false`.
    public init(
        maximumWait: Duration = .seconds(60), maximumWaits: Int = 3, defersWhileConstrained: Bool = false,
        defersWhileExpensive: Bool = false
    ) {
        self.maximumWait = max(.zero, maximumWait)
        self.maximumWaits = max(1, maximumWaits)
        self.defersWhileConstrained = defersWhileConstrained
        self.defersWhileExpensive = defersWhileExpensive
    }

    /// Whether a call may run on `path`.
    ///
    /// - Parameter path: The path now.
    @Sendable
    public func accepts(_ path: NetworkPath) -> Bool {
        path.isSatisfied && !(defersWhileConstrained && path.isConstrained)
            && !(defersWhileExpensive && path.isExpensive)
    }

    /// Runs on any satisfied path, waiting up to 60 s (and the deadline) for one: the interactive preset's.
    public static let standard = ConnectivityWaitPolicy()
    /// Also waits out Low Data Mode, up to 5 minutes: for background work that can wait for a better path.
    public static let background = ConnectivityWaitPolicy(maximumWait: .seconds(300), defersWhileConstrained: true)
}

extension ResilienceStrategy where Self == WaitForConnectivityStrategy {
    /// A wait-for-connectivity stage on `monitor`.
    ///
    /// - Parameters:
    ///   - monitor: Where the path comes from.
    ///   - policy: Which paths a call runs on, and how long it waits. Default: `.standard`.
    public static func waitForConnectivity(
        _ monitor: any ConnectivityMonitor, policy: ConnectivityWaitPolicy = .standard
    ) -> WaitForConnectivityStrategy {
        WaitForConnectivityStrategy(monitor: monitor, policy: policy)
    }
}
