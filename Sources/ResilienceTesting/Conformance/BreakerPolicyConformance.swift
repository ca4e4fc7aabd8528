/// A conformance kit for third-party ``BreakerPolicy`` implementations.
///
/// Give it a factory that makes a fresh breaker and a failure the breaker counts; it drives each breaker
/// with explicit instants (no clock, no sleeping) and checks the protocol's contract: transitions are
/// returned, stale-generation outcomes are not counted (a success from before a trip on the counted failure
/// leaves the breaker open; failures from before a reset do not open it), a cancelled half-open probe is
/// released. It checks the optional protocols the breaker adopts too: reset closes (``ResettableBreaker``),
/// isolate rejects (``IsolatableBreaker``), export/restore round-trips (``PersistableBreaker``), metrics report
/// the state (``MeasurableBreaker``); a rule about a protocol the breaker does not adopt passes. It works with
/// any test framework:
///
/// ```swift
/// @Test func conforms() async throws {
///     try await BreakerPolicyConformance { MyBreaker() }.check()
/// }
/// ```
public struct BreakerPolicyConformance: ConformanceKit {
    typealias Violation = ConformanceViolation

    /// Makes a fresh breaker for each rule.
    public let makeBreaker: @Sendable () -> any BreakerPolicy
    /// A failure the breaker counts (default: an HTTP 429, which every standard predicate counts).
    public let countedFailure: FailureClassification
    /// The most outcomes recorded while trying to trip a breaker before giving up.
    public var maximumCallsToTrip = 1000
    /// The longest open period the kit waits through, in steps, before giving up.
    public var maximumOpenDuration: Duration = .seconds(86_400)

    /// Creates the kit.
    ///
    /// - Parameters:
    ///   - countedFailure: A failure the breaker counts toward opening.
    ///   - makeBreaker: Makes a fresh breaker for each case.
    public init(
        countedFailure: FailureClassification = FailureClassification(
            category: .rateLimited, code: .rateLimited, httpStatus: 429),
        makeBreaker: @escaping @Sendable () -> any BreakerPolicy
    ) {
        self.countedFailure = countedFailure
        self.makeBreaker = makeBreaker
    }

    /// `"BreakerPolicy"`.
    public var subject: String { "BreakerPolicy" }

    /// Runs every rule, one case each, on a fresh breaker.
    public func run() async -> ConformanceReport {
        var run = ConformanceRun()
        let rules: [(String, (inout [Violation]) -> Void)] = [
            ("trip-returns-transition", checkTripReturnsTransition),
            ("reset-closes", checkResetCloses),
            ("isolate-rejects", checkIsolateRejects),
            ("stale-generation-ignored", checkStaleOutcomesIgnored),
            ("cancelled-probe-releases", checkCancelledProbeReleases),
            ("export-restore-round-trip", checkExportRestore),
        ]
        for (name, rule) in rules {
            await run.run(name) {
                var violations: [Violation] = []
                rule(&violations)
                return violations
            }
        }
        return run.report(subject)
    }

    // MARK: Rules

    private func checkTripReturnsTransition(_ violations: inout [Violation]) {
        let breaker = makeBreaker()
        let start = ResilienceInstant.origin
        guard let (transition, _) = trip(breaker, at: start, &violations, rule: "trip-returns-transition") else {
            return
        }
        if transition?.to != .open {
            violations.append(
                Violation(
                    rule: "trip-returns-transition",
                    detail: "the outcome that opened the breaker returned \(String(describing: transition))"))
        }
        if case .admitted = breaker.admit(now: start) {
            violations.append(
                Violation(rule: "trip-returns-transition", detail: "the breaker admitted a call right after a trip"))
        }
        if let measurable = breaker as? any MeasurableBreaker, measurable.metrics(now: start).state != .open {
            violations.append(
                Violation(rule: "trip-returns-transition", detail: "metrics do not report open after a trip"))
        }
    }

    private func checkResetCloses(_ violations: inout [Violation]) {
        guard let breaker = makeBreaker() as? any ResettableBreaker else { return }
        let start = ResilienceInstant.origin
        guard trip(breaker, at: start, &violations, rule: "reset-closes") != nil else { return }
        let transition = breaker.reset(now: start)
        if transition?.to != .closed {
            violations.append(
                Violation(rule: "reset-closes", detail: "reset returned \(String(describing: transition))"))
        }
        if case .rejected(_, let state) = breaker.admit(now: start) {
            violations.append(Violation(rule: "reset-closes", detail: "admit after reset rejected (\(state))"))
        }
        guard let metrics = (breaker as? any MeasurableBreaker)?.metrics(now: start) else { return }
        if metrics.state != .closed || metrics.consecutiveFailures != 0 {
            violations.append(
                Violation(
                    rule: "reset-closes",
                    detail: "metrics after reset: \(metrics.state), "
                        + "\(metrics.consecutiveFailures) failures"))
        }
    }

    private func checkIsolateRejects(_ violations: inout [Violation]) {
        guard let breaker = makeBreaker() as? any IsolatableBreaker else { return }
        let start = ResilienceInstant.origin
        let transition = breaker.isolate(now: start)
        if transition != BreakerTransition(from: .closed, to: .isolated) {
            violations.append(
                Violation(rule: "isolate-rejects", detail: "isolate returned \(String(describing: transition))"))
        }
        let later = start.advanced(by: maximumOpenDuration)
        for instant in [start, later] {
            if case .admitted = breaker.admit(now: instant) {
                violations.append(Violation(rule: "isolate-rejects", detail: "isolated breaker admitted at \(instant)"))
            }
        }
        breaker.reset(now: later)
        if case .rejected = breaker.admit(now: later) {
            violations.append(Violation(rule: "isolate-rejects", detail: "reset did not end isolation"))
        }
    }

    private func checkStaleOutcomesIgnored(_ violations: inout [Violation]) {
        let breaker = makeBreaker()
        let start = ResilienceInstant.origin
        guard case .admitted(let early, _) = breaker.admit(now: start) else {
            violations.append(Violation(rule: "stale-generation-ignored", detail: "a fresh breaker rejected"))
            return
        }
        guard trip(breaker, at: start, &violations, rule: "stale-generation-ignored") != nil else { return }
        let transition = breaker.record(.success, for: early, now: start)
        var stillOpen = true
        if case .admitted = breaker.admit(now: start) { stillOpen = false }
        if transition != nil || !stillOpen {
            violations.append(
                Violation(
                    rule: "stale-generation-ignored",
                    detail: "a success admitted before the trip changed the state (\(String(describing: transition)))"))
        }
        // Outcomes admitted before a reset must not count afterwards.
        guard let breaker = breaker as? any ResettableBreaker else { return }
        breaker.reset(now: start)
        var stale: [BreakerPermit] = []
        for _ in 0..<maximumCallsToTrip {
            guard case .admitted(let permit, _) = breaker.admit(now: start) else { break }
            stale.append(permit)
            if stale.count >= 64 { break }
        }
        breaker.reset(now: start)
        for permit in stale { breaker.record(.failure(countedFailure), for: permit, now: start) }
        if case .rejected = breaker.admit(now: start) {
            violations.append(
                Violation(rule: "stale-generation-ignored", detail: "failures admitted before a reset opened it"))
        }
    }

    private func checkCancelledProbeReleases(_ violations: inout [Violation]) {
        let rule = "cancelled-probe-releases"
        let breaker = makeBreaker()
        guard let (_, openedAt) = trip(breaker, at: .origin, &violations, rule: rule) else { return }
        guard let reopen = waitUntilAdmitted(breaker, after: openedAt) else {
            violations.append(Violation(rule: rule, detail: "the breaker never admitted a call after opening"))
            return
        }
        var now = reopen.instant
        var permit = reopen.permit
        for round in 1...3 {
            breaker.record(.cancelled, for: permit, now: now)
            guard case .admitted(let next, _) = breaker.admit(now: now) else {
                violations.append(
                    Violation(rule: rule, detail: "after a cancelled probe (round \(round)) the breaker rejected"))
                return
            }
            permit = next
            now = now.advanced(by: .milliseconds(1))
        }
        breaker.record(.cancelled, for: permit, now: now)
        guard let state = (breaker as? any MeasurableBreaker)?.metrics(now: now).state else { return }
        if state == .open || state == .isolated {
            violations.append(Violation(rule: rule, detail: "cancelled probes re-opened the breaker (\(state))"))
        }
    }

    private func checkExportRestore(_ violations: inout [Violation]) {
        let rule = "export-restore-round-trip"
        guard let breaker = makeBreaker() as? any PersistableBreaker,
            let restored = makeBreaker() as? any PersistableBreaker
        else { return }
        let start = ResilienceInstant.origin
        guard let (_, openedAt) = trip(breaker, at: start, &violations, rule: rule) else { return }
        let snapshot = breaker.exportState(now: openedAt)
        if snapshot.state != .open || snapshot.remainingOpen <= .zero {
            violations.append(
                Violation(
                    rule: rule, detail: "export of an open breaker: \(snapshot.state), \(snapshot.remainingOpen)"))
            return
        }
        let elsewhere = ResilienceInstant(offset: .seconds(1_000_000))
        let transition = restored.restoreState(snapshot, now: elsewhere)
        if transition?.to != .open {
            violations.append(Violation(rule: rule, detail: "restore returned \(String(describing: transition))"))
        }
        switch restored.admit(now: elsewhere) {
        case .admitted:
            violations.append(Violation(rule: rule, detail: "a restored open breaker admitted a call"))
        case .rejected(let retryAfter, _):
            if retryAfter != snapshot.remainingOpen {
                violations.append(
                    Violation(
                        rule: rule, detail: "restored retryAfter \(retryAfter) ≠ exported \(snapshot.remainingOpen)"))
            }
        }
        let again = restored.exportState(now: elsewhere)
        if again.state != snapshot.state || again.remainingOpen != snapshot.remainingOpen {
            violations.append(
                Violation(rule: rule, detail: "re-export \(again.state)/\(again.remainingOpen) differs"))
        }
        if case .rejected = restored.admit(now: elsewhere.advanced(by: snapshot.remainingOpen)) {
            violations.append(Violation(rule: rule, detail: "the restored breaker stayed closed to calls too long"))
        }
    }

    // MARK: Helpers

    /// Records counted failures until the breaker opens; returns the transition and the instant.
    private func trip(
        _ breaker: any BreakerPolicy, at start: ResilienceInstant, _ violations: inout [Violation], rule: String
    ) -> (BreakerTransition?, ResilienceInstant)? {
        var now = start
        for _ in 0..<maximumCallsToTrip {
            switch breaker.admit(now: now) {
            case .rejected(_, let state):
                if state == .open { return (nil, now) }
                violations.append(Violation(rule: rule, detail: "rejected in state \(state) while tripping"))
                return nil
            case .admitted(let permit, _):
                if let transition = breaker.record(.failure(countedFailure), for: permit, now: now),
                    transition.to == .open
                {
                    return (transition, now)
                }
            }
            now = now.advanced(by: .milliseconds(1))
        }
        violations.append(
            Violation(rule: rule, detail: "\(maximumCallsToTrip) counted failures did not open the breaker"))
        return nil
    }

    /// Steps time forward until the breaker admits a call again.
    private func waitUntilAdmitted(
        _ breaker: any BreakerPolicy, after openedAt: ResilienceInstant
    ) -> (permit: BreakerPermit, instant: ResilienceInstant)? {
        var now = openedAt
        let limit = openedAt.advanced(by: maximumOpenDuration)
        while now <= limit {
            switch breaker.admit(now: now) {
            case .admitted(let permit, _):
                return (permit, now)
            case .rejected(let retryAfter, _):
                now = now.advanced(by: max(retryAfter, .milliseconds(1)))
            }
        }
        return nil
    }
}
