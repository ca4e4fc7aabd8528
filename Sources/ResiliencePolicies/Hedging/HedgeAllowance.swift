/// How many hedges a ``HedgingStrategy`` may still launch: every call earns `maxExtraLoad` of a hedge, every hedge
/// spends a whole one (given back when its request was never sent), and at most `capacity` are saved up (the stage starts with them). Calls fund it, not
/// seconds, so a client that calls once a minute hedges as large a share of its calls as one that calls a
/// hundred times a second, and no window empties between its calls.
///
/// Counted in millionths of a hedge, so that ten deposits of 10 % make exactly one.
struct HedgeAllowance: Sendable {
    /// One hedge, in the allowance's units.
    static let unit = 1_000_000

    private let state: LockedState<Int>
    private let deposit: Int
    private let capacity: Int

    /// An allowance that earns `ratio` of a hedge per call and saves up `max(1, 100 × ratio)` hedges (none when
    /// `ratio` is 0 or less, or not a number), or `nil` when `ratio` is infinite and bounds nothing.
    init?(ratio: Double) {
        guard ratio != .infinity else { return nil }
        let ratio = ratio.isNaN ? 0 : min(max(ratio, 0), 1_000)
        deposit = Int((ratio * Double(Self.unit)).rounded())
        capacity = deposit == 0 ? 0 : max(Self.unit, 100 * deposit)
        state = LockedState(initialState: capacity)
    }

    /// Credits one call.
    func earn() {
        let deposit = deposit
        let capacity = capacity
        state.withLock { $0 = min($0 + deposit, capacity) }
    }

    /// Gives back the hedge that a launch took when its request was never sent (a full bulkhead or an open
    /// breaker inside refused it, or there was no network): it added no load, so it spends none.
    func refund() {
        let capacity = capacity
        state.withLock { $0 = min($0 + Self.unit, capacity) }
    }

    /// Takes one hedge; `false` when less than one is saved.
    func spend() -> Bool {
        state.withLock { saved in
            guard saved >= Self.unit else { return false }
            saved -= Self.unit
            return true
        }
    }
}
