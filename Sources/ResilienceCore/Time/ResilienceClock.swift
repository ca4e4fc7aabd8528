#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// A type-erased monotonic clock: the one source of time for every policy, stage, transport and sync engine.
///
/// Wrap any standard `Clock` whose duration is `Duration`: `ContinuousClock` in production, `ManualClock`
/// from ResilienceTesting in tests, a virtual clock in a simulation. Reading `now()` allocates nothing: for
/// `ContinuousClock` and `SuspendingClock` it is one read of the operating system's clock, for any other clock
/// one indirect call. Nothing else in ResilienceKit reads the system clock.
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
            source = ClockSource(
                reading: SystemClockReading.continuous(origin: start),
                readNow: { ResilienceInstant(offset: start.duration(to: ContinuousClock.now)) },
                sleepUntil: { deadline in
                    try await continuous.sleep(
                        until: start.advanced(by: Self.systemSleepOffset(deadline)), tolerance: nil)
                })
        } else if let suspending = clock as? SuspendingClock, let start = origin as? SuspendingClock.Instant {
            source = ClockSource(
                reading: SystemClockReading.suspending(origin: start),
                readNow: { ResilienceInstant(offset: start.duration(to: SuspendingClock.now)) },
                sleepUntil: { deadline in
                    try await suspending.sleep(
                        until: start.advanced(by: Self.systemSleepOffset(deadline)), tolerance: nil)
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
    public func now() -> ResilienceInstant {
        // The system clocks' fast path: the operating system's clock read in place, with no indirect call
        // and no retain of a closure's context.
        if let reading = source.reading { return reading.now() }
        return source.readNow()
    }

    /// Suspends until `deadline`; throws `CancellationError` if the task is cancelled first. On `ContinuousClock`
    /// and `SuspendingClock` a deadline more than 10⁹ s (about 31.7 years) from the origin is clamped to that
    /// distance, since those clocks cannot represent an instant 2⁶³ s away.
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

    /// The farthest a sleep on a system clock reaches from its origin, either way: 10⁹ s (about 31.7 years, as
    /// ``ResilienceDeadline`` clamps its limit). The system clocks cannot represent an instant 2⁶³ s away, and
    /// sleeping until one traps; a deadline beyond this bound is slept towards for 10⁹ s instead.
    static let longestSystemSleep = Duration.seconds(1_000_000_000)

    /// `deadline`'s offset clamped to ±`longestSystemSleep`, for the system clocks.
    static func systemSleepOffset(_ deadline: ResilienceInstant) -> Duration {
        let offset = deadline.offset
        if offset > longestSystemSleep { return longestSystemSleep }
        if offset < .zero - longestSystemSleep { return .zero - longestSystemSleep }
        return offset
    }
}

/// The storage of a ``ResilienceClock``: the wrapped clock's two operations, behind one reference, and the
/// operating system's reading when the clock is a system clock the platform reads directly.
@usableFromInline
final class ClockSource: Sendable {
    /// The system clock's direct reading, which ``ResilienceClock/now()`` prefers to ``readNow``.
    @usableFromInline let reading: SystemClockReading?
    @usableFromInline let readNow: @Sendable () -> ResilienceInstant
    @usableFromInline let sleepUntil: @Sendable (ResilienceInstant) async throws -> Void

    init(
        reading: SystemClockReading? = nil,
        readNow: @escaping @Sendable () -> ResilienceInstant,
        sleepUntil: @escaping @Sendable (ResilienceInstant) async throws -> Void
    ) {
        self.reading = reading
        self.readNow = readNow
        self.sleepUntil = sleepUntil
    }
}

// MARK: - The system clocks, read directly

/// Reads `ContinuousClock` or `SuspendingClock` time straight from the operating system, as a count of
/// nanoseconds from a ``ResilienceClock``'s origin: the fast path of ``ResilienceClock/now()`` for the
/// system clocks.
///
/// It reads the clock the standard library reads for the same clock (Linux: `CLOCK_BOOTTIME` for continuous,
/// `CLOCK_MONOTONIC` for suspending; Apple platforms: `CLOCK_MONOTONIC_RAW` and `CLOCK_UPTIME_RAW`), so an
/// instant it reports and a sleep on the standard clock until that instant agree. The origin is placed by
/// reading this clock first and the standard clock just after, so a reading is never behind the standard
/// clock's: a sleep until an instant never wakes before this reading reaches it.
@usableFromInline
struct SystemClockReading: Sendable {
    #if canImport(Darwin) || canImport(Glibc) || canImport(Musl) || canImport(Android)
    /// The operating system's identifier of the clock.
    private let clockID: clockid_t
    #endif
    /// The clock's reading at the origin, in nanoseconds.
    private let originNanoseconds: Int64

    /// The reading for `ContinuousClock` time from `origin`, or `nil` on a platform without one.
    static func continuous(origin: ContinuousClock.Instant) -> SystemClockReading? {
        #if canImport(Darwin)
        return SystemClockReading(clockID: CLOCK_MONOTONIC_RAW) { origin.duration(to: ContinuousClock.now) }
        #elseif os(Linux) || os(Android)
        return SystemClockReading(clockID: CLOCK_BOOTTIME) { origin.duration(to: ContinuousClock.now) }
        #else
        return nil
        #endif
    }

    /// The reading for `SuspendingClock` time from `origin`, or `nil` on a platform without one.
    static func suspending(origin: SuspendingClock.Instant) -> SystemClockReading? {
        #if canImport(Darwin)
        return SystemClockReading(clockID: CLOCK_UPTIME_RAW) { origin.duration(to: SuspendingClock.now) }
        #elseif os(Linux) || os(Android)
        return SystemClockReading(clockID: CLOCK_MONOTONIC) { origin.duration(to: SuspendingClock.now) }
        #else
        return nil
        #endif
    }

    #if canImport(Darwin) || canImport(Glibc) || canImport(Musl) || canImport(Android)
    /// Places the origin: `elapsed` is the standard clock's time since the origin, read just after this
    /// clock. `nil` if the clock cannot be read or the elapsed time does not fit 64-bit nanoseconds.
    private init?(clockID: clockid_t, elapsed: () -> Duration) {
        guard let reading = Self.read(clockID) else { return nil }
        let (seconds, attoseconds) = elapsed().components
        let (wholeNanoseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return nil }
        // A fraction of a nanosecond rounds up, so that the origin is never placed after the standard one.
        let (partNanoseconds, fraction) = attoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        let (elapsedNanoseconds, sumOverflow) = wholeNanoseconds.addingReportingOverflow(
            partNanoseconds + (fraction > 0 ? 1 : 0))
        guard !sumOverflow else { return nil }
        let (origin, originOverflow) = reading.subtractingReportingOverflow(elapsedNanoseconds)
        guard !originOverflow else { return nil }
        self.clockID = clockID
        originNanoseconds = origin
    }

    /// The clock's reading in nanoseconds, or `nil` if it cannot be read.
    private static func read(_ clockID: clockid_t) -> Int64? {
        var time = timespec()
        guard clock_gettime(clockID, &time) == 0 else { return nil }
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }

    /// The current instant: the reading less the origin's, as a `Duration` built from its two halves.
    @usableFromInline
    func now() -> ResilienceInstant {
        var time = timespec()
        // The clock was read when the origin was placed; a clock that can be read once can always be read.
        _ = clock_gettime(clockID, &time)
        let nanoseconds = Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec) &- originNanoseconds
        let attoseconds = nanoseconds.multipliedFullWidth(by: 1_000_000_000)
        return ResilienceInstant(offset: Duration(_high: attoseconds.high, low: attoseconds.low))
    }
    #else
    /// Never called: no platform without `clock_gettime` makes a reading.
    @usableFromInline
    func now() -> ResilienceInstant { preconditionFailure("no system clock reading on this platform") }
    #endif
}
