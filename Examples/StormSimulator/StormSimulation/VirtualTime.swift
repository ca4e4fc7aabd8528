import ResilienceCore

/// Virtual time in whole nanoseconds, the simulator's internal unit (cheap to compare and to store).
typealias Nanoseconds = Int64

extension Duration {
    /// The largest magnitude the simulator uses (about 73 years), so sums of times never overflow.
    static let simulationLimit: Nanoseconds = Int64.max / 4

    /// The duration in whole nanoseconds (rounded toward zero), clamped to ±``simulationLimit``.
    var nanoseconds: Nanoseconds {
        let parts = components
        let limit = Self.simulationLimit
        guard parts.seconds < limit / 1_000_000_000, parts.seconds > -limit / 1_000_000_000 else {
            return parts.seconds < 0 ? -limit : limit
        }
        return parts.seconds * 1_000_000_000 + parts.attoseconds / 1_000_000_000
    }

    /// The duration in seconds as a `Double`.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
    }
}

extension Nanoseconds {
    /// The instant this many nanoseconds after the simulation's origin.
    var instant: ResilienceInstant { ResilienceInstant(offset: .nanoseconds(self)) }

    /// This many nanoseconds as a `Duration`.
    var duration: Duration { .nanoseconds(self) }

    /// This many nanoseconds in seconds.
    var inSeconds: Double { Double(self) / 1e9 }
}
