import ResilienceCore
import Testing

@Suite("ResilienceInstant")
struct ResilienceInstantTests {
    /// Offsets around the places where a 128-bit count of attoseconds changes its high half or its sign.
    static let offsets: [Duration] = [
        .zero, .nanoseconds(1), .nanoseconds(-1), .seconds(1), .seconds(-1), .seconds(9), .seconds(10),
        .seconds(-10), .seconds(18.446744073709551615), .seconds(18.446744073709551617),
        .seconds(1_000_000_000), .seconds(-1_000_000_000), .milliseconds(1500), .milliseconds(-1500),
        Duration(secondsComponent: 18, attosecondsComponent: 446_744_073_709_551_615),
        Duration(secondsComponent: 18, attosecondsComponent: 446_744_073_709_551_616),
        Duration(secondsComponent: -18, attosecondsComponent: -446_744_073_709_551_616),
    ]

    @Test("Instants order exactly as their offsets do, across signs and 64-bit boundaries")
    func orderMatchesDuration() {
        for lhs in Self.offsets {
            for rhs in Self.offsets {
                let a = ResilienceInstant(offset: lhs)
                let b = ResilienceInstant(offset: rhs)
                #expect((a < b) == (lhs < rhs), "\(lhs) < \(rhs)")
                #expect((a <= b) == (lhs <= rhs), "\(lhs) <= \(rhs)")
                #expect((a > b) == (lhs > rhs), "\(lhs) > \(rhs)")
            }
        }
    }

    @Test("Advancing and measuring between instants match Duration's own arithmetic")
    func arithmeticMatchesDuration() {
        for lhs in Self.offsets {
            for rhs in Self.offsets {
                let a = ResilienceInstant(offset: lhs)
                #expect(a.advanced(by: rhs).offset == lhs + rhs, "\(lhs) + \(rhs)")
                #expect(a.duration(to: ResilienceInstant(offset: rhs)) == rhs - lhs, "\(rhs) - \(lhs)")
            }
        }
        // At the ends of the range the high halves wrap and the carry or borrow wraps them back.
        let minusOne = Duration(_high: -1, low: .max)
        let almostSmallest = Duration(_high: .min, low: 1)
        #expect(
            ResilienceInstant(offset: minusOne).advanced(by: almostSmallest).offset == Duration(_high: .min, low: 0))
        let one = Duration(_high: 0, low: 1)
        let largest = Duration(_high: .max, low: .max)
        #expect(
            ResilienceInstant(offset: one).duration(to: ResilienceInstant(offset: largest))
                == Duration(_high: .max, low: .max - 1))
    }

    @Test("A deadline's limit is clamped to zero and to a billion seconds")
    func deadlineLimitIsClamped() async throws {
        let clock = ResilienceClock.continuous
        for (limit, expected) in [
            (Duration.seconds(-5), Duration.zero), (.seconds(5), .seconds(5)),
            (.seconds(2_000_000_000), .seconds(1_000_000_000)),
        ] {
            let context = ResilienceContext(key: "k", clock: clock)
            let start = clock.now()
            let deadline = try await ResilienceDeadline(limit).run(context, startingAt: start) { inner in
                inner.deadline
            }
            #expect(deadline == start.advanced(by: expected))
        }
    }
}
