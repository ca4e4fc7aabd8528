/// A type-erased monotonic clock: the one source of time for every policy, stage, transport and sync engine.
///
/// Wrap any standard `Clock` whose duration is `Duration`: `ContinuousClock` in production, `ManualClock`
/// from ResilienceTesting in tests, a virtual clock in a simulation. Reading `now()` costs one indirect call
/// and no allocation; nothing in ResilienceKit reads the system clock directly.
///
/// ```swift
/// let clock = ResilienceClock(ContinuousClock())
/// let start = clock.now()
/// try await clock.sleep(for: .milliseconds(10))
/// ```
public struct ResilienceClock: Sendable {
    /// One reference (not two closures), so copying a clock (and a ``ResilienceContext``) costs one retain.
    @usableFromInline let source: ClockSource

    /// Wraps `clock`, taking its current instant as this clock's origin.
    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        // The system clocks get closures compiled for their concrete types: a generic closure would read
        // the time through witness tables and cost several times the clock read itself.
        if let continuous = clock as? ContinuousClock {
            self.init(concrete: continuous)
        } else if let suspending = clock as? SuspendingClock {
            self.init(concrete: suspending)
        } else {
            self.init(concrete: clock)
        }
    }

    /// Wraps `clock`, measuring instants from `origin` (for clocks with a natural zero, like a manual or
    /// virtual clock, so both report the same offsets).
    public init<C: Clock>(_ clock: C, origin: C.Instant) where C.Duration == Duration {
        self.init(concrete: clock, origin: origin)
    }

    @inline(__always)
    private init<C: Clock>(concrete clock: C, origin: C.Instant? = nil) where C.Duration == Duration {
        let origin = origin ?? clock.now
        source = ClockSource(
            readNow: { ResilienceInstant(offset: origin.duration(to: clock.now)) },
            sleepUntil: { deadline in
                try await clock.sleep(until: origin.advanced(by: deadline.offset), tolerance: nil)
            })
    }

    /// The current instant.
    @inlinable
    public func now() -> ResilienceInstant { source.readNow() }

    /// Suspends until `deadline`; throws `CancellationError` if the task is cancelled first.
    @inlinable
    public func sleep(until deadline: ResilienceInstant) async throws {
        try await source.sleepUntil(deadline)
    }

    /// Suspends for `duration`; throws `CancellationError` if the task is cancelled first.
    @inlinable
    public func sleep(for duration: Duration) async throws {
        try await source.sleepUntil(now().advanced(by: duration))
    }

    /// A clock backed by `ContinuousClock`, created when first used.
    public static let continuous = ResilienceClock(ContinuousClock())
}
