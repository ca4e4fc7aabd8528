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
    ///
    /// - Parameter clock: The clock to read and sleep on (`ContinuousClock`, a manual or virtual clock); its instant
    ///   now becomes offset zero.
    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        self.init(clock, origin: clock.now)
    }

    /// Wraps `clock`, measuring instants from `origin` (for clocks with a natural zero, like a manual or
    /// virtual clock, so both report the same offsets).
    ///
    /// - Parameters:
    ///   - clock: The clock to read and sleep on.
    ///   - origin: The instant of `clock` that becomes offset zero.
    public init<C: Clock>(_ clock: C, origin: C.Instant) where C.Duration == Duration {
        // The system clocks read the operating system's clock directly, in whole nanoseconds: the standard
        // library builds each of their instants with 128-bit `Duration` arithmetic, which costs more than the
        // read itself. A clock the platform gives no such reading for gets closures written for its concrete
        // type (a generic closure would read the time through witness tables).
        if let continuous = clock as? ContinuousClock, let start = origin as? ContinuousClock.Instant {
            let readNow: @Sendable () -> ResilienceInstant
            if let reading = SystemClockReading.continuous(origin: start) {
                readNow = { reading.now() }
            } else {
                readNow = { ResilienceInstant(offset: start.duration(to: ContinuousClock.now)) }
            }
            source = ClockSource(
                readNow: readNow,
                sleepUntil: { deadline in
                    try await continuous.sleep(until: start.advanced(by: deadline.offset), tolerance: nil)
                })
        } else if let suspending = clock as? SuspendingClock, let start = origin as? SuspendingClock.Instant {
            let readNow: @Sendable () -> ResilienceInstant
            if let reading = SystemClockReading.suspending(origin: start) {
                readNow = { reading.now() }
            } else {
                readNow = { ResilienceInstant(offset: start.duration(to: SuspendingClock.now)) }
            }
            source = ClockSource(
                readNow: readNow,
                sleepUntil: { deadline in
                    try await suspending.sleep(until: start.advanced(by: deadline.offset), tolerance: nil)
                })
        } else {
            source = ClockSource(
                readNow: { ResilienceInstant(offset: origin.duration(to: clock.now)) },
                sleepUntil: { deadline in
                    try await clock.sleep(until: origin.advanced(by: deadline.offset), tolerance: nil)
                })
        }
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

/// The storage of a ``ResilienceClock``: the wrapped clock's two operations, behind one reference.
@usableFromInline
final class ClockSource: Sendable {
    @usableFromInline let readNow: @Sendable () -> ResilienceInstant
    @usableFromInline let sleepUntil: @Sendable (ResilienceInstant) async throws -> Void

    init(
        readNow: @escaping @Sendable () -> ResilienceInstant,
        sleepUntil: @escaping @Sendable (ResilienceInstant) async throws -> Void
    ) {
        self.readNow = readNow
        self.sleepUntil = sleepUntil
    }
}
