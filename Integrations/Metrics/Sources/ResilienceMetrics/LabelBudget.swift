import ResilienceCore

/// Admits at most `limit` distinct values of one label; later values become the overflow value.
///
/// The first `limit` values seen keep their names for the life of the process, so a dashboard's series stay
/// stable; everything after them is counted together.
struct LabelBudget: Sendable {
    let limit: Int
    let overflow: String
    private let seen = LockedState(initialState: Set<String>())

    init(limit: Int, overflow: String) {
        self.limit = max(0, limit)
        self.overflow = overflow
    }

    /// `value` itself if it was seen before or there is room, else ``overflow``.
    func label(for value: String) -> String {
        seen.withLock { seen in
            if seen.contains(value) { return value }
            guard seen.count < limit else { return overflow }
            seen.insert(value)
            return value
        }
    }

    /// How many distinct values kept their own name.
    var distinctCount: Int { seen.withLock { $0.count } }
}
