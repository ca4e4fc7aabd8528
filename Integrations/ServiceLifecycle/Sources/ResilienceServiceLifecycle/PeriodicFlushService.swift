import Logging
import ResilienceCore
import ServiceLifecycle

/// Calls a flush (an exporter writing the recorder's metrics or events somewhere) at a fixed interval, and
/// once more on graceful shutdown, as a swift-service-lifecycle `Service`.
///
/// Flushes start on a fixed schedule, one ``interval`` apart from the moment ``run()`` begins, so the time a
/// flush takes does not push the later ones back. Flushes never overlap: one that outlasts the interval skips
/// the ticks it missed, and the next flush starts at the first tick after it ends.
///
/// On graceful shutdown the wait is cut short and the last flush runs, so the final interval's data is not
/// lost. The shutdown is bounded by ``finalFlushTimeout``, counted from the moment it begins: when it runs out the
/// flush under way is cancelled, so an exporter whose destination stopped answering cannot hold up the service
/// group's shutdown (which, without a `maximumGracefulShutdownDuration`, would otherwise wait for ever). That
/// holds for a periodic flush still running when the shutdown begins too: it may finish within the bound (then
/// the last flush runs in what is left of it) or is cancelled when the bound runs out (then no last flush is
/// started against the destination that stopped answering). On cancellation it stops at once, without a last
/// flush.
///
/// ```swift
/// let exporter = PeriodicFlushService(every: .seconds(60), logger: logger) {
///     let lines = JSONLinesExporter().render(recorder.snapshot())
///     try? await archive.append(lines)
/// }
/// ```
public struct PeriodicFlushService: Service {
    /// The time between the starts of two flushes (at least 1 ms).
    public let interval: Duration
    /// The longest the graceful shutdown may take, from the moment it begins: a periodic flush still running
    /// then and the last flush together; then the flush under way is cancelled (default 10 s, the same as
    /// ``SyncEngineService/Configuration/drainTimeout``, so the two last steps of a group's shutdown have the same
    /// bound).
    public let finalFlushTimeout: Duration
    private let clock: ResilienceClock
    private let logger: Logger?
    private let flush: @Sendable () async -> Void

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - interval: The time between the starts of two flushes (at least 1 ms; less counts as 1 ms).
    ///   - clock: The clock the interval and the last flush's time limit are measured on.
    ///   - finalFlushTimeout: The longest the graceful shutdown may take from the moment it begins (default 10 s):
    ///     a periodic flush still running then and the last flush share it; then the flush's task is cancelled.
    ///     The flush should honour cancellation: one that ignores it still holds up the return. Zero or less
    ///     skips the last flush (and cancels a periodic flush under way at once).
    ///   - logger: Receives one line when the graceful shutdown's flushing ends (flushed, timed out, or cancelled), if
    ///     given.
    ///   - flush: Exports what accumulated since the last call.
    public init(
        every interval: Duration, clock: ResilienceClock = .continuous, finalFlushTimeout: Duration = .seconds(10),
        logger: Logger? = nil, flush: @escaping @Sendable () async -> Void
    ) {
        self.interval = max(interval, .milliseconds(1))
        self.finalFlushTimeout = finalFlushTimeout
        self.clock = clock
        self.logger = logger
        self.flush = flush
    }

    /// Flushes on every tick of the ``interval``'s schedule until graceful shutdown (then flushes once more, the shutdown taking at most
    /// ``finalFlushTimeout``) or cancellation.
    public func run() async {
        let clock = clock
        let interval = interval
        // The instant the next flush is due.
        var due = clock.now().advanced(by: interval)
        // The instant the shutdown's time runs out, set when it begins during a periodic flush.
        var shutdownDeadline: ResilienceInstant?
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await cancelWhenGracefulShutdown { [due] in try await clock.sleep(until: due) }
            } catch {
                break
            }
            switch await periodicFlush() {
            case .flushed: due = Self.tick(after: clock.now(), following: due, every: interval)
            case .shutdownBegan(let deadline): shutdownDeadline = deadline
            case .timedOut:
                logger?.warning(
                    "periodic flush on shutdown timed out; the last interval may not be exported",
                    metadata: ["resilience.flush.timeout": "\(finalFlushTimeout)"])
                return
            }
        }
        guard !Task.isCancelled else {
            // Cancelled after the shutdown began (a second signal, the group's hard stop): the last flush did not
            // run, or a periodic flush under way was cut short.
            if Task.isShuttingDownGracefully { logCancelled() }
            return
        }
        await finalFlush(until: shutdownDeadline ?? ResilienceDeadline(finalFlushTimeout).end(from: clock.now()))
    }

    /// How a periodic flush ended.
    private enum PeriodicFlushEnd {
        /// Before any graceful shutdown.
        case flushed
        /// After a graceful shutdown began during it, in time; the shutdown's time runs out at the instant given.
        case shutdownBegan(ResilienceInstant)
        /// Cancelled when the shutdown that began during it ran out of time.
        case timedOut
    }

    /// Runs one periodic flush. When graceful shutdown begins during it, the flush gets until
    /// ``finalFlushTimeout`` after that moment, then is cancelled.
    private func periodicFlush() async -> PeriodicFlushEnd {
        let flush = flush
        let clock = clock
        let timeout = finalFlushTimeout
        // Finishes when the flush ends: what the watcher waits for, within the shutdown's bound.
        let (flushEnded, flushEnding) = AsyncStream.makeStream(of: Never.self)
        return await withTaskGroup(of: PeriodicFlushEnd?.self) { group in
            group.addTask {
                await flush()
                flushEnding.finish()
                return nil
            }
            // Watches for the shutdown: nil when none began during the flush; else whether the flush ended in time,
            // raced against the shutdown's deadline by Core's timer race.
            group.addTask {
                do {
                    try await gracefulShutdown()
                } catch {
                    return nil  // the flush ended first, or the service was cancelled
                }
                let deadline = ResilienceDeadline(timeout).end(from: clock.now())
                do {
                    try await withDeadline(until: deadline, clock: clock) {
                        for await _ in flushEnded {}
                        try Task.checkCancellation()
                    }
                } catch is DeadlineExceededError {
                    return .timedOut
                } catch {
                    // Cancelled: the flush ended (the group cancels the watcher then) or the service was cancelled.
                }
                return .shutdownBegan(deadline)
            }
            // The flush's end (nil) cancels the watcher, which then says whether the shutdown had begun.
            var end = PeriodicFlushEnd.flushed
            while let next = await group.next() {
                if let next {
                    end = next
                    if case .timedOut = next { group.cancelAll() }
                } else {
                    group.cancelAll()
                }
            }
            return end
        }
    }

    /// The first tick of the schedule (`due` plus a whole number of intervals, at least one) that is not before
    /// `now`: a flush that ended after one or more ticks skips them, so flushes neither overlap nor run back to
    /// back to catch up.
    static func tick(
        after now: ResilienceInstant, following due: ResilienceInstant, every interval: Duration
    ) -> ResilienceInstant {
        var next = due.advanced(by: interval)
        guard next < now else { return next }
        let missed = Int64((due.duration(to: now) / interval).rounded(.down))
        next = due.advanced(by: interval * missed)
        while next < now { next = next.advanced(by: interval) }
        return next
    }

    /// Logs that cancellation ended the shutdown's flushing before the last flush finished.
    private func logCancelled() {
        logger?.warning("periodic flush on shutdown cancelled; the last interval may not be exported")
    }

    /// Runs the last flush, bounded by the shutdown's `deadline`, and logs how it ended.
    private func finalFlush(until deadline: ResilienceInstant) async {
        let flush = flush
        do {
            try await withDeadline(until: deadline, clock: clock) {
                await flush()
                // A flush the timer cancelled returns like one that finished: the check turns that into the time
                // running out.
                try Task.checkCancellation()
            }
            logger?.info("periodic flush service flushed on shutdown")
        } catch {
            if Task.isCancelled {
                // A second signal or the group's hard stop ended the flush, not the time limit.
                logCancelled()
            } else {
                logger?.warning(
                    "periodic flush on shutdown timed out; the last interval may not be exported",
                    metadata: ["resilience.flush.timeout": "\(finalFlushTimeout)"])
            }
        }
    }
}
