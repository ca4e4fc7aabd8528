import Foundation
import ResilienceKit
import Testing

@testable import ResilienceTesting

/// The runtime's own time arithmetic gives exactly what the standard library's operators give: a simulation
/// that used them would otherwise draw other latencies and put requests in other buckets, and its results would
/// change. Checked on seeded random values across the ranges a simulation meets and beyond (negative values,
/// values wider than 64 bits, ties and whole numbers).
@Suite struct SimulationArithmeticTests {
    /// A random 128-bit value of a random width (1 to 127 bits), either sign.
    static func value(_ generator: inout PseudoRandomGenerator) -> Int128 {
        let wide = Int128(_low: generator.next(), _high: Int64(bitPattern: generator.next()) & Int64.max)
        let width = Int(generator.next() % 127) + 1
        let magnitude = wide >> (127 - width)
        return generator.next() % 2 == 0 ? magnitude : -magnitude
    }

    @Test func theNearestDoubleIsTheStandardLibrarysConversion() {
        var generator = PseudoRandomGenerator(seed: 1)
        for _ in 0..<200_000 {
            let value = Self.value(&generator)
            #expect(value.nearestDouble == Double(value), "\(value)")
        }
        let edges: [Int128] = [
            0, 1, -1, Int128(Int64.max), Int128(Int64.max) + 1, Int128(Int64.min), Int128(Int64.min) - 1,
            Int128.max, Int128.min, (1 << 64) + 1, (1 << 117) + (1 << 64), (1 << 117) + (1 << 64) + 1,
        ]
        for value in edges { #expect(value.nearestDouble == Double(value), "\(value)") }
    }

    @Test func truncatingADoubleIsTheStandardLibrarysConversion() {
        var generator = PseudoRandomGenerator(seed: 2)
        for _ in 0..<200_000 {
            let value = (Self.value(&generator) >> 1).nearestDouble * (Double(generator.next() % 997) / 997)
            #expect(Int128(truncating: value) == Int128(value), "\(value)")
        }
        for value in [0.0, -0.0, 0.5, -0.5, 0x1p63, -0x1p63, 0x1p63 - 1024, 0x1p100, -0x1p100] {
            #expect(Int128(truncating: value) == Int128(value), "\(value)")
        }
    }

    @Test func dividingByA64BitDivisorIsTheStandardLibrarysDivision() {
        var generator = PseudoRandomGenerator(seed: 3)
        let divisors: [UInt64] = [1, 3, 1_000_000_000, 1_000_000_000_000_000_000, UInt64.max]
        for _ in 0..<100_000 {
            let value = Self.value(&generator)
            for divisor in divisors {
                let expected = value.quotientAndRemainder(dividingBy: Int128(divisor))
                let divided = value.quotientAndRemainder(dividingBy: divisor)
                #expect(divided.quotient == expected.quotient && divided.remainder == expected.remainder, "\(value)")
            }
        }
    }

    @Test func durationArithmeticIsTheStandardLibrarys() {
        var generator = PseudoRandomGenerator(seed: 4)
        for _ in 0..<100_000 {
            let duration = Duration(attosecondCount: Self.value(&generator) >> 40)
            let factor = -log(1 - LatencyDistribution.unit(&generator)) * Double(generator.next() % 100)
            #expect(duration.scaled(by: factor) == duration * factor, "\(duration) × \(factor)")
            let other = Duration(attosecondCount: Self.value(&generator) >> 40)
            if other != .zero {
                #expect(duration.ratio(to: other) == duration / other, "\(duration) / \(other)")
            }
            let seconds = (LatencyDistribution.unit(&generator) - 0.5) * Double(generator.next() % 1_000_000)
            #expect(Duration(seconds: seconds) == Duration.seconds(seconds), "\(seconds)")
        }
        for seconds in [0.0, 1.0, -1.0, 0.1, 2.5, -2.5, 1e-18, 4e-19, 9.999999999999999, 1e9] {
            #expect(Duration(seconds: seconds) == Duration.seconds(seconds), "\(seconds)")
        }
    }
}
