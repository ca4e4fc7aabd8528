import ResilienceCore
import Testing

@testable import ResiliencePolicies

@Suite("DurationArithmetic")
struct DurationArithmeticTests {
    /// What `seconds(_:)` must return: the sum of the standard library's split, bit for bit (the adaptive
    /// limiter's samples, and so the simulator's traces, depend on it).
    static func componentsSum(_ duration: Duration) -> Double {
        let components = duration.components
        return Double(components.seconds) + Double(components.attoseconds) * 1e-18
    }

    /// Durations on both sides of zero, past `Int64` attoseconds and either side of 2⁸² attoseconds (about 56
    /// days), where the division by 5¹⁸ gives way to 128 bits; seeded.
    static func durations() -> [Duration] {
        var random = PseudoRandomGenerator(seed: 7)
        var durations: [Duration] = [
            .zero, .nanoseconds(1), .nanoseconds(-1), .seconds(9), .seconds(10), .seconds(-10),
            .seconds(3_600 * 24 * 365), .milliseconds(-1_500),
            Duration(secondsComponent: 1_000_000_000, attosecondsComponent: 999_999_999_999_999_999),
            Duration(_high: (1 << 18) - 1, low: .max), Duration(_high: 1 << 18, low: 0),
            Duration(_high: 0, low: .max), Duration(_high: 1, low: 0),
        ]
        for _ in 0..<20_000 {
            let seconds = Int64.random(in: -1_000_000_000...1_000_000_000, using: &random)
            let attoseconds = Int64.random(in: -999_999_999_999_999_999...999_999_999_999_999_999, using: &random)
            durations.append(Duration(secondsComponent: seconds, attosecondsComponent: attoseconds))
            durations.append(.nanoseconds(Int64.random(in: -20_000_000_000...20_000_000_000, using: &random)))
            let withinDays = Int64.random(in: 0...4_835_703, using: &random)
            durations.append(Duration(secondsComponent: withinDays, attosecondsComponent: max(attoseconds, 0)))
        }
        return durations
    }

    @Test("seconds(_:) equals the components' sum bit for bit, on both sides of zero and past Int64 attoseconds")
    func secondsMatchesComponents() {
        let mismatches = Self.durations().filter {
            DurationArithmetic.seconds($0).bitPattern != Self.componentsSum($0).bitPattern
        }
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(3))")
    }

    @Test("nanoseconds(_:) is the components' whole nanoseconds, saturating, on both sides of zero")
    func nanosecondsMatchesComponents() {
        func fromComponents(_ duration: Duration) -> Int64 {
            let parts = duration.components
            let (whole, overflow) = parts.seconds.multipliedReportingOverflow(by: 1_000_000_000)
            if overflow { return parts.seconds < 0 ? .min : .max }
            let (total, overflowSum) = whole.addingReportingOverflow(parts.attoseconds / 1_000_000_000)
            if overflowSum { return parts.seconds < 0 ? .min : .max }
            return total
        }
        let mismatches = Self.durations().filter { DurationArithmetic.nanoseconds($0) != fromComponents($0) }
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(3))")
    }
}
