import ResilienceCore

/// A test double of the rate-limit breaker that seed 004 describes (the real one lives in ResiliencePolicies,
/// which this module's tests do not import): opens after 3 consecutive rate-limited failures for
/// 30 s × multiplier (multiplier doubles up to 10, cooldown capped at 300 s); any other outcome resets the
/// counter; success also resets the multiplier; after the cooldown one probe is admitted (half-open).
final class SeedRateLimitBreakerDouble: IsolatableBreaker, PersistableBreaker, MeasurableBreaker {
    private struct State {
        var state: BreakerState = .closed
        var consecutive = 0
        var multiplier = 1.0
        var openUntil: ResilienceInstant?
        var generation: UInt64 = 0
        var opens = 0
        var probeInFlight = false
    }

    private let lock = LockedState(initialState: State())
    let threshold = 3

    func admit(now: ResilienceInstant) -> BreakerAdmission {
        lock.withLock { s in
            switch s.state {
            case .isolated:
                return .rejected(retryAfter: .seconds(300), state: .isolated)
            case .open:
                let until = s.openUntil ?? now
                if now < until { return .rejected(retryAfter: now.duration(to: until), state: .open) }
                s.state = .halfOpen
                s.generation += 1
                s.probeInFlight = true
                return .admitted(
                    BreakerPermit(generation: s.generation, isProbe: true, admittedAt: now),
                    transition: BreakerTransition(from: .open, to: .halfOpen))
            case .halfOpen:
                if s.probeInFlight { return .rejected(retryAfter: .seconds(1), state: .halfOpen) }
                s.probeInFlight = true
                return .admitted(
                    BreakerPermit(generation: s.generation, isProbe: true, admittedAt: now), transition: nil)
            case .closed:
                return .admitted(
                    BreakerPermit(generation: s.generation, isProbe: false, admittedAt: now), transition: nil)
            }
        }
    }

    func record(_ outcome: BreakerOutcome, for permit: BreakerPermit, now: ResilienceInstant) -> BreakerTransition? {
        lock.withLock { s in
            guard permit.generation == s.generation else { return nil }
            if permit.isProbe { s.probeInFlight = false }
            switch outcome {
            case .cancelled:
                return nil
            case .success:
                let from = s.state
                s.consecutive = 0
                s.multiplier = 1
                s.state = .closed
                s.openUntil = nil
                return from == .closed ? nil : BreakerTransition(from: from, to: .closed)
            case .failure(let classification) where classification.category == .rateLimited:
                s.consecutive += 1
                if s.state == .halfOpen || s.consecutive >= threshold {
                    return Self.trip(&s, now: now)
                }
                return nil
            case .failure:
                s.consecutive = 0
                if s.state == .halfOpen {
                    let from = s.state
                    s.state = .closed
                    return BreakerTransition(from: from, to: .closed)
                }
                return nil
            }
        }
    }

    private static func trip(_ s: inout State, now: ResilienceInstant) -> BreakerTransition {
        let from = s.state
        let cooldown = min(30 * s.multiplier, 300)
        let openFor = Duration.milliseconds(Int64(cooldown * 1000))
        s.multiplier = min(s.multiplier * 2, 10)
        s.state = .open
        s.openUntil = now.advanced(by: openFor)
        s.generation += 1
        s.opens += 1
        s.consecutive = 0
        return BreakerTransition(from: from, to: .open, openFor: openFor)
    }

    func isolate(now: ResilienceInstant) -> BreakerTransition? {
        lock.withLock { s in
            let from = s.state
            s.state = .isolated
            s.generation += 1
            return from == .isolated ? nil : BreakerTransition(from: from, to: .isolated)
        }
    }

    func reset(now: ResilienceInstant) -> BreakerTransition? {
        lock.withLock { s in
            let from = s.state
            s = State(generation: s.generation + 1, opens: s.opens)
            return from == .closed ? nil : BreakerTransition(from: from, to: .closed)
        }
    }

    func metrics(now: ResilienceInstant) -> BreakerMetrics {
        lock.withLock { s in
            let remaining = s.state == .open ? max(.zero, now.duration(to: s.openUntil ?? now)) : .zero
            return BreakerMetrics(
                state: s.state, consecutiveFailures: s.consecutive, totalOpens: s.opens,
                remainingOpenDuration: remaining)
        }
    }

    func exportState(now: ResilienceInstant) -> BreakerSnapshot {
        lock.withLock { s in
            let remaining = s.state == .open ? max(.zero, now.duration(to: s.openUntil ?? now)) : .zero
            return BreakerSnapshot(
                state: s.state, remainingOpen: remaining,
                values: ["multiplier": s.multiplier, "consecutiveFailures": Double(s.consecutive)])
        }
    }

    func restoreState(_ snapshot: BreakerSnapshot, now: ResilienceInstant) -> BreakerTransition? {
        lock.withLock { s in
            let from = s.state
            s.state = snapshot.state == .halfOpen ? .open : snapshot.state
            s.multiplier = snapshot.values["multiplier"] ?? 1
            s.consecutive = Int(snapshot.values["consecutiveFailures"] ?? 0)
            s.openUntil = s.state == .open ? now.advanced(by: snapshot.remainingOpen) : nil
            s.generation += 1
            return from == s.state ? nil : BreakerTransition(from: from, to: s.state)
        }
    }

    var policyDescription: String { "seed-004 rate-limit breaker (test double)" }

    var multiplier: Double { lock.withLock { $0.multiplier } }
}
