#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// Reads `ContinuousClock` or `SuspendingClock` time straight from the operating system, as a count of
/// nanoseconds from a ``ResilienceClock``'s origin: the fast path of ``ResilienceClock/now()`` for the
/// system clocks.
///
/// It reads the clock the standard library reads for the same clock (Linux: `CLOCK_BOOTTIME` for continuous,
/// `CLOCK_MONOTONIC` for suspending; Apple platforms: `CLOCK_MONOTONIC_RAW` and `CLOCK_UPTIME_RAW`), so an
/// instant it reports and a sleep on the standard clock until that instant agree. The origin is placed by
/// reading this clock first and the standard clock just after, so a reading is never behind the standard
/// clock's: a sleep until an instant never wakes before this reading reaches it.
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
    func now() -> ResilienceInstant { preconditionFailure("no system clock reading on this platform") }
    #endif
}
