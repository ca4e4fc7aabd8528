/// A fixed-memory, log-bucketed latency histogram in the style of HdrHistogram.
///
/// Values are recorded in microseconds. Values below 16 µs get exact buckets; above that, every power of two
/// is split into 8 linear sub-buckets, so any reported percentile is within 12.5 % of the true value. The
/// range ends at 2^40 µs (about 12.7 days); larger values are clamped into the last bucket. Memory is one
/// array of counters up to the highest bucket recorded into: at most ``bucketCount`` (2.5 KB), 170 (1.4 KB)
/// for latencies under 10 s. It grows only when a value lands above every bucket recorded into before.
public struct LatencyHistogram: Sendable, Hashable {
    /// How many buckets every histogram has.
    public static let bucketCount = 16 + 8 * (maximumExponent - 3)
    static let maximumExponent = 40

    /// The per-bucket counts, ``bucketCount`` of them.
    public var counts: [UInt64] { storage + repeatElement(0, count: Self.bucketCount - storage.count) }
    /// The counts up to the highest bucket recorded into, which is never zero: the buckets above it are empty
    /// and take no memory, and two histograms with the same counts store the same array.
    private var storage: [UInt64] = []
    /// How many values were recorded.
    public private(set) var totalCount: UInt64 = 0
    /// The sum of recorded values, in microseconds.
    public private(set) var sumMicroseconds: UInt64 = 0
    /// The largest recorded value, in microseconds.
    public private(set) var maximumMicroseconds: UInt64 = 0

    /// Creates an empty histogram.
    public init() {}

    /// Records one latency; negative durations count as zero.
    public mutating func record(_ duration: Duration) {
        record(microseconds: Self.microseconds(duration))
    }

    /// Records one value in microseconds.
    public mutating func record(microseconds value: UInt64) {
        let index = Self.bucketIndex(for: value)
        if index >= storage.count { grow(toHold: index) }
        storage[index] &+= 1
        totalCount &+= 1
        sumMicroseconds &+= value
        maximumMicroseconds = max(maximumMicroseconds, value)
    }

    /// Adds every count of `other`.
    public mutating func merge(_ other: LatencyHistogram) {
        if other.storage.count > storage.count { grow(toHold: other.storage.count - 1) }
        for index in other.storage.indices { storage[index] &+= other.storage[index] }
        totalCount &+= other.totalCount
        sumMicroseconds &+= other.sumMicroseconds
        maximumMicroseconds = max(maximumMicroseconds, other.maximumMicroseconds)
    }

    /// The value at `percentile` (0…100): the highest value equivalent to the bucket that holds it, capped at
    /// the recorded maximum; `nil` when empty.
    public func value(atPercentile percentile: Double) -> Duration? {
        guard totalCount > 0 else { return nil }
        let clamped = min(max(percentile, 0), 100)
        let rank = max(1, UInt64((clamped / 100 * Double(totalCount)).rounded(.up)))
        var seen: UInt64 = 0
        for (index, count) in storage.enumerated() where count > 0 {
            seen += count
            if seen >= rank {
                return .microseconds(Int64(min(Self.upperBound(ofBucket: index), maximumMicroseconds)))
            }
        }
        return .microseconds(Int64(maximumMicroseconds))
    }

    /// How many recorded values are at most `limit` microseconds, counting whole buckets whose upper bound is
    /// within the limit (so within the histogram's 12.5 % resolution).
    public func count(atOrBelowMicroseconds limit: UInt64) -> UInt64 {
        var total: UInt64 = 0
        for (index, count) in storage.enumerated() where count > 0 && Self.upperBound(ofBucket: index) <= limit {
            total += count
        }
        return total
    }

    /// The mean, or `nil` when empty.
    public var mean: Duration? {
        totalCount == 0 ? nil : .microseconds(Int64(sumMicroseconds / totalCount))
    }

    /// Extends the stored counts, with exactly the room needed, to bucket `index`.
    private mutating func grow(toHold index: Int) {
        var grown = [UInt64](repeating: 0, count: index + 1)
        for position in storage.indices { grown[position] = storage[position] }
        storage = grown
    }

    /// The bucket holding `value` microseconds.
    static func bucketIndex(for value: UInt64) -> Int {
        if value < 16 { return Int(value) }
        let capped = min(value, (UInt64(1) << UInt64(maximumExponent)) - 1)
        let mostSignificantBit = UInt64.bitWidth - capped.leadingZeroBitCount - 1
        let shift = mostSignificantBit - 3
        let mantissa = Int(capped >> UInt64(shift))
        return 16 + (shift - 1) * 8 + (mantissa - 8)
    }

    /// The lowest value in bucket `index`.
    static func lowerBound(ofBucket index: Int) -> UInt64 {
        if index < 16 { return UInt64(index) }
        let offset = index - 16
        let shift = offset / 8 + 1
        return UInt64(offset % 8 + 8) << UInt64(shift)
    }

    /// The highest value in bucket `index`.
    static func upperBound(ofBucket index: Int) -> UInt64 {
        if index < 16 { return UInt64(index) }
        let offset = index - 16
        let shift = offset / 8 + 1
        return (UInt64(offset % 8 + 9) << UInt64(shift)) - 1
    }

    static func microseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return 0 }
        let wholeMicroseconds = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !wholeMicroseconds.overflow else { return UInt64.max }
        let total = wholeMicroseconds.partialValue + attoseconds / 1_000_000_000_000
        return total < 0 ? 0 : UInt64(total)
    }
}
