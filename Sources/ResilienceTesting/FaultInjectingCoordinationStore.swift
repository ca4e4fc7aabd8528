/// Wraps a ``CoordinationStore`` and fails, stalls or delays its calls on command: the store going down,
/// hanging or coming back, for testing shared limiters and breakers.
///
/// ```swift
/// let store = FaultInjectingCoordinationStore(wrapping: InMemoryCoordinationStore(clock: clock), clock: clock)
/// store.fault = .unavailable       // every call throws
/// store.fault = .stall             // every call hangs until cancelled
/// store.fault = .unresponsive      // every call hangs, ignoring cancellation, until the fault changes
/// store.fault = nil                // healthy again
/// ```
public final class FaultInjectingCoordinationStore: CoordinationStore {
    /// What the wrapper does to each call.
    public enum Fault: Hashable, Sendable {
        /// Throw ``CoordinationStoreError/unavailable(_:)`` without calling the store.
        case unavailable
        /// Never answer: suspend until the caller cancels (a deadline must rescue the caller).
        case stall
        /// Never answer and ignore cancellation, as a client blocked on a dead socket does: hold the call
        /// until the fault changes, then throw ``CoordinationStoreError/unavailable(_:)``.
        case unresponsive
        /// Wait `delay` on the clock, then call the store.
        case latency(Duration)
    }

    private struct State {
        var fault: Fault?
        var calls = 0
        var callsInFlight = 0
        var failedCalls = 0
        /// Calls held by ``Fault/unresponsive``, resumed when the fault changes.
        var held: [CheckedContinuation<Void, Never>] = []
    }

    private let base: any CoordinationStore
    private let clock: ResilienceClock
    private let state = LockedState(initialState: State())

    /// Wraps `base`; stalls and latency sleep on `clock`.
    /// - Parameters:
    ///   - base: The store that answers healthy calls.
    ///   - clock: The clock stalls and delays sleep on (a `ManualClock` in tests).
    public init(wrapping base: any CoordinationStore, clock: ResilienceClock) {
        self.base = base
        self.clock = clock
    }

    /// The fault applied to calls from now on; `nil` passes them through.
    public var fault: Fault? {
        get { state.withLock { $0.fault } }
        set {
            let released = state.withLock { state in
                state.fault = newValue
                guard newValue != .unresponsive else { return [CheckedContinuation<Void, Never>]() }
                defer { state.held = [] }
                return state.held
            }
            for call in released { call.resume() }
        }
    }

    /// How many calls ``Fault/unresponsive`` is holding now.
    public var heldCalls: Int { state.withLock { $0.held.count } }

    /// How many calls arrived (healthy or not).
    public var calls: Int { state.withLock { $0.calls } }

    /// How many calls have arrived and not yet returned or thrown. A call whose task has not yet run (on a busy
    /// machine, for as long as the system keeps its thread waiting) has not arrived: a test that moves a manual
    /// clock while a healthy call may be on its way should wait on the caller's side too.
    public var callsInFlight: Int { state.withLock { $0.callsInFlight } }

    /// How many calls the wrapper failed or stalled.
    public var failedCalls: Int { state.withLock { $0.failedCalls } }

    /// Injects the fault, then runs `call` on the wrapped store, counted in ``callsInFlight`` throughout.
    private func forward<Result>(
        _ call: () async throws(CoordinationStoreError) -> Result
    ) async throws(CoordinationStoreError) -> Result {
        state.withLock { $0.callsInFlight += 1 }
        defer { state.withLock { $0.callsInFlight -= 1 } }
        try await inject()
        return try await call()
    }

    private func inject() async throws(CoordinationStoreError) {
        let fault = state.withLock { state -> Fault? in
            state.calls += 1
            if state.fault == .unavailable || state.fault == .stall || state.fault == .unresponsive {
                state.failedCalls += 1
            }
            return state.fault
        }
        switch fault {
        case nil:
            return
        case .unavailable:
            throw .unavailable("injected fault")
        case .stall:
            while true {
                do {
                    try await clock.sleep(for: .seconds(3600))
                } catch {
                    throw .unavailable("stalled call cancelled")
                }
            }
        case .unresponsive:
            await withCheckedContinuation { (call: CheckedContinuation<Void, Never>) in
                let heldNow = state.withLock { state in
                    guard state.fault == .unresponsive else { return false }
                    state.held.append(call)
                    return true
                }
                if !heldNow { call.resume() }
            }
            throw .unavailable("unresponsive call released")
        case .latency(let delay):
            do {
                try await clock.sleep(for: delay)
            } catch {
                throw .unavailable("delayed call cancelled")
            }
        }
    }

    /// Injects the fault, then leases from the wrapped store.
    public func leaseTokens(_ request: TokenLeaseRequest) async throws(CoordinationStoreError) -> TokenLease {
        try await forward { () async throws(CoordinationStoreError) in try await base.leaseTokens(request) }
    }

    /// Injects the fault, then reads from the wrapped store.
    public func breakerRecord(key: String) async throws(CoordinationStoreError) -> BreakerRecord? {
        try await forward { () async throws(CoordinationStoreError) in try await base.breakerRecord(key: key) }
    }

    /// Injects the fault, then updates the wrapped store.
    public func updateBreaker(
        _ update: BreakerRecordUpdate
    ) async throws(CoordinationStoreError)
        -> BreakerUpdateResult
    {
        try await forward { () async throws(CoordinationStoreError) in try await base.updateBreaker(update) }
    }

    /// Injects the fault, then asks the wrapped store for the probe lease.
    public func acquireProbe(
        key: String, holder: String, ttl: Duration
    ) async throws(CoordinationStoreError)
        -> ProbeLeaseResult
    {
        try await forward { () async throws(CoordinationStoreError) in
            try await base.acquireProbe(key: key, holder: holder, ttl: ttl)
        }
    }

    /// Injects the fault, then releases the probe lease in the wrapped store.
    public func releaseProbe(key: String, holder: String) async throws(CoordinationStoreError) {
        try await forward { () async throws(CoordinationStoreError) in
            try await base.releaseProbe(key: key, holder: holder)
        }
    }

    /// Injects the fault, then sweeps the wrapped store.
    @discardableResult
    public func sweepExpired() async throws(CoordinationStoreError) -> Int {
        try await forward { () async throws(CoordinationStoreError) in try await base.sweepExpired() }
    }
}
