/// Reads numbers out of a ``BreakerSnapshot`` defensively: restored state may come from disk.
enum SnapshotValues {
    /// The non-negative whole number stored under `key` (zero when missing, negative, NaN or huge).
    static func count(_ snapshot: BreakerSnapshot, _ key: String, limit: Int = 1_000_000_000) -> Int {
        guard let value = snapshot.values[key], value.isFinite, value > 0 else { return 0 }
        return Int(min(value, Double(limit)))
    }
}
