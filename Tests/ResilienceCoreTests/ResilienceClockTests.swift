import ResilienceCore
import Testing

@Suite("ResilienceClock on the system clocks")
struct ResilienceClockTests {
    /// The instant a wrapped clock reports is never behind the standard clock's reading just before it, and
    /// leads the reading just after by no more than the time it took to place the origin (nanoseconds; the
    /// bound allows for a descheduled thread).
    @Test("A continuous clock's instants match ContinuousClock's offsets from the origin")
    func continuousMatchesStandardClock() {
        expectReadingsMatch(ContinuousClock())
    }

    @Test("A suspending clock's instants match SuspendingClock's offsets from the origin")
    func suspendingMatchesStandardClock() {
        expectReadingsMatch(SuspendingClock())
    }

    /// Reads a ``ResilienceClock`` wrapping `standard` between two readings of `standard` itself, 1,000 times.
    private func expectReadingsMatch<C: Clock>(_ standard: C) where C.Duration == Duration {
        let origin = standard.now
        let clock = ResilienceClock(standard, origin: origin)
        for _ in 0..<1_000 {
            let before = origin.duration(to: standard.now)
            let reading = clock.now().offset
            let after = origin.duration(to: standard.now)
            #expect(before <= reading, "\(reading) before \(before)")
            #expect(reading <= after + .milliseconds(50), "\(reading) after \(after)")
        }
    }

    @Test("An origin in the past or the future shifts every instant by the same offset")
    func originShiftsInstants() {
        let now = ContinuousClock.now
        let past = ResilienceClock(ContinuousClock(), origin: now.advanced(by: .seconds(-3_600)))
        let future = ResilienceClock(ContinuousClock(), origin: now.advanced(by: .seconds(3_600)))
        let gap = future.now().duration(to: past.now())
        #expect(gap > .milliseconds(7_199_950) && gap < .milliseconds(7_200_050), "\(gap)")
        #expect(past.now() > ResilienceInstant(offset: .seconds(3_600)))
        #expect(future.now() < ResilienceInstant(offset: .seconds(-3_599)))
    }

    @Test("Instants are whole nanoseconds and never go backwards")
    func readingsAreMonotonic() {
        let clock = ResilienceClock(ContinuousClock())
        var previous = clock.now()
        for _ in 0..<10_000 {
            let reading = clock.now()
            #expect(previous <= reading)
            #expect(reading.offset.components.attoseconds % 1_000_000_000 == 0)
            previous = reading
        }
    }

    @Test("A sleep on a system clock until an instant it cannot represent waits until cancelled, not a trap")
    func sleepBeyondTheSystemClock() async {
        for clock in [ResilienceClock.continuous, ResilienceClock(SuspendingClock())] {
            for offset in [Duration.seconds(Int64.max), .seconds(Int64.max) * 4] {
                let (started, starting) = AsyncStream<Void>.makeStream()
                let sleeper = Task {
                    starting.yield()
                    try await clock.sleep(until: ResilienceInstant(offset: offset))
                }
                for await _ in started { break }
                // Time for the sleeper to reach the clock (no real sleeping: yields only).
                for _ in 0..<1_000 { await Task.yield() }
                sleeper.cancel()
                await #expect(throws: CancellationError.self) { try await sleeper.value }
            }
        }
    }
}
