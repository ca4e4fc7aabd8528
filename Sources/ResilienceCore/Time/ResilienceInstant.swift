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
        ResilienceInstant(offset: offset + duration)
    }

    /// The signed duration from `self` to `other`.
    @inlinable
    public func duration(to other: ResilienceInstant) -> Duration {
        other.offset - offset
    }

    /// Orders instants in time.
    @inlinable
    public static func < (lhs: ResilienceInstant, rhs: ResilienceInstant) -> Bool {
        lhs.offset.isLess(than: rhs.offset)
    }

    /// `+<offset>` in seconds, for logs and test failures.
    public var description: String { "+\(offset)" }
}

extension Duration {
    /// `self < other`, inlined: the standard library's operator is not inlinable, and every stage compares
    /// instants on its success path. A duration is a signed 128-bit count of attoseconds stored as a signed
    /// high half and an unsigned low half, so comparing the halves in order gives the same answer.
    @inlinable
    func isLess(than other: Duration) -> Bool {
        _high < other._high || (_high == other._high && _low < other._low)
    }
}
