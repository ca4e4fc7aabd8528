#if canImport(Darwin)
import ResilienceCore
#else
import ResilienceCore
import Synchronization
#endif

/// Whether chaos is injected now: a flag flipped at run time (an admin endpoint, a remote configuration, a
/// debug menu), or a closure the stages ask on every call.
///
/// Share one switch between the chaos stages of a pipeline (or of a whole app) to turn them all off at
/// once. Reading an off switch costs an atomic load, so a chaos stage can ship to production switched off.
///
/// ```swift
/// let chaos = ChaosSwitch(isEnabled: false)
/// chaos.isEnabled = environment == .staging
/// let gate = ChaosSwitch { FeatureFlags.current.chaos }
/// ```
public final class ChaosSwitch: Sendable {
    #if canImport(Darwin)
    private let flag: LockedState<Bool>
    #else
    private let flag: Atomic<Bool>
    #endif
    private let reader: (@Sendable () -> Bool)?

    /// Creates a switch flipped with ``isEnabled``.
    ///
    /// - Parameter isEnabled: Whether chaos is injected at first. Default: `true`.
    public init(isEnabled: Bool = true) {
        #if canImport(Darwin)
        flag = LockedState(initialState: isEnabled)
        #else
        flag = Atomic(isEnabled)
        #endif
        reader = nil
    }

    /// Creates a switch that asks `reader` on every call (setting ``isEnabled`` has no effect on it).
    ///
    /// - Parameter reader: Says whether chaos is injected now; keep it cheap and non-blocking.
    public init(_ reader: @escaping @Sendable () -> Bool) {
        #if canImport(Darwin)
        flag = LockedState(initialState: false)
        #else
        flag = Atomic(false)
        #endif
        self.reader = reader
    }

    /// Whether chaos is injected now.
    public var isEnabled: Bool {
        get {
            if let reader { return reader() }
            #if canImport(Darwin)
            return flag.withLock { $0 }
            #else
            return flag.load(ordering: .relaxed)
            #endif
        }
        set {
            #if canImport(Darwin)
            flag.withLock { $0 = newValue }
            #else
            flag.store(newValue, ordering: .relaxed)
            #endif
        }
    }
}
