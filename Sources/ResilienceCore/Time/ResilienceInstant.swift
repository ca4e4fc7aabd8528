/// A point on a ``ResilienceClock``'s timeline, measured from the clock's origin.
///
/// Policies are pure state machines that take `now` as an argument; they use this one concrete instant type
/// so they need not be generic over the clock. It is monotonic: never compare it with wall-clock time.
public struct ResilienceInstant: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Time elapsed since the clock's origin.
    public var offset: Duration

    /// Creates an instant `offset` after the origin.
    ///
    /// - Parameter offset: Time elapsed since the clock's origin.
    @inlinable
    public init(offset: Duration) {
        self.offset = offset
    }

    /// The clock's origin.
    public static let origin = ResilienceInstant(offset: .zero)

    /// The instant `duration` later.
    @inlinable
    public func advanced(by duration: Duration) -> ResilienceInstant {
        ResilienceInstant(offset: offset.adding(duration))
    }

    /// The signed duration from `self` to `other`.
    @inlinable
    public func duration(to other: ResilienceInstant) -> Duration {
        other.offset.subtracting(offset)
    }

    /// Orders instants in time.
    @inlinable
    public static func < (lhs: ResilienceInstant, rhs: ResilienceInstant) -> Bool {
        lhs.offset.isLess(than: rhs.offset)
    }

    /// `+<offset>` in seconds, for logs and test failures.
    public var description: String { "+\(offset)" }
}

// The standard library's `Duration` operators and `zero` are not inlinable, and every stage compares and
// advances instants on its success path. A duration is a signed 128-bit count of attoseconds stored as a
// signed high half and an unsigned low half; these work on the halves and give the same answers (overflow
// traps, as the standard library's operators do).
extension Duration {
    /// `Duration.zero`, inlined.
    @inlinable
    static var inlinedZero: Duration { Duration(_high: 0, low: 0) }

    /// `self < other`, inlined.
    @inlinable
    func isLess(than other: Duration) -> Bool {
        _high < other._high || (_high == other._high && _low < other._low)
    }

    /// `self + other`, inlined.
    @inlinable
    func adding(_ other: Duration) -> Duration {
        let (low, carry) = _low.addingReportingOverflow(other._low)
        let (partial, firstOverflow) = _high.addingReportingOverflow(other._high)
        let (high, secondOverflow) = partial.addingReportingOverflow(carry ? 1 : 0)
        // Two wraps in opposite directions cancel out; one alone means the sum does not fit.
        precondition(firstOverflow == secondOverflow, "Duration overflow")
        return Duration(_high: high, low: low)
    }

    /// `self - other`, inlined.
    @inlinable
    func subtracting(_ other: Duration) -> Duration {
        let (low, borrow) = _low.subtractingReportingOverflow(other._low)
        let (partial, firstOverflow) = _high.subtractingReportingOverflow(other._high)
        let (high, secondOverflow) = partial.subtractingReportingOverflow(borrow ? 1 : 0)
        precondition(firstOverflow == secondOverflow, "Duration overflow")
        return Duration(_high: high, low: low)
    }
}
