import ResilienceCore

/// One event as the recorder keeps it: strings interned to two-byte ids, optionals packed into sentinels,
/// and a truncated, already-redacted detail. About 72 bytes inline.
struct StoredRecord: Sendable {
    static let none32 = Int32.min
    static let noneDuration = Int64.min
    static let noState: UInt8 = .max

    var timeNanoseconds: Int64
    var durationNanoseconds: Int64
    var openForNanoseconds: Int64
    var detail: String?
    var attempt: Int32
    var count: Int32
    var total: Int32
    var kind: UInt16
    var key: UInt16
    var operation: UInt16
    var category: UInt16
    var code: UInt16
    var httpStatus: Int16
    var fromState: UInt8
    var toState: UInt8
    /// The transition's sequence, in the 6 bytes the fields above leave before the stride: its top 16 of 48 bits.
    var sequenceHigh: UInt16 = .max
    /// The transition's sequence: its low 32 of 48 bits.
    var sequenceLow: UInt32 = .max

    /// The 48-bit value standing for no sequence.
    static let noSequence: UInt64 = 1 << 48 - 1
    /// The largest sequence kept; a larger one (2^48 transitions of one breaker) is kept as this.
    static let largestSequence: UInt64 = noSequence - 1

    /// The breaker transition's sequence, or `nil` when it has none; ones above `largestSequence` read as it.
    var sequence: UInt64? {
        get {
            let value = UInt64(sequenceHigh) << 32 | UInt64(sequenceLow)
            return value == Self.noSequence ? nil : value
        }
        set {
            let value = newValue.map { min($0, Self.largestSequence) } ?? Self.noSequence
            sequenceHigh = UInt16(truncatingIfNeeded: value >> 32)
            sequenceLow = UInt32(truncatingIfNeeded: value)
        }
    }

    /// Drops the breaker transition (states, sequence and time open): the record keeps its kind and time only.
    mutating func forgetTransition() {
        fromState = Self.noState
        toState = Self.noState
        openForNanoseconds = Self.noneDuration
        sequence = nil
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let whole = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if whole.overflow { return seconds < 0 ? Int64.min + 1 : Int64.max }
        let sum = whole.partialValue.addingReportingOverflow(attoseconds / 1_000_000_000)
        return sum.overflow ? Int64.max : sum.partialValue
    }

    static func clamp32(_ value: Int?) -> Int32 {
        guard let value else { return none32 }
        return Int32(clamping: value)
    }

    static func stateCode(_ state: BreakerState?) -> UInt8 {
        guard let state, let index = BreakerState.allCases.firstIndex(of: state) else { return noState }
        return UInt8(index)
    }

    static func state(_ code: UInt8) -> BreakerState? {
        Int(code) < BreakerState.allCases.count ? BreakerState.allCases[Int(code)] : nil
    }

    /// Estimated heap bytes of a native Swift string: none for small strings (≤ 15 UTF-8 bytes, stored
    /// inline), else a 32-byte object header plus the bytes and a terminator, rounded up to 16 by malloc.
    static func heapBytes(of string: String?) -> Int {
        guard let string else { return 0 }
        let count = string.utf8.count
        guard count > 15 else { return 0 }
        return (32 + count + 1 + 15) / 16 * 16
    }
}
