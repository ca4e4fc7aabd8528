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
/// once. Reading an off flag costs one relaxed atomic load and a branch (inlined into the stage), so a chaos
/// stage can ship to production switched off.
///
/// ```swift
/// let chaos = ChaosSwitch(isEnabled: false)
/// chaos.isEnabled = environment == .staging
/// let gate = ChaosSwitch { FeatureFlags.current.chaos }
/// ```
public final class ChaosSwitch: Sendable {
    /// The flag ``isEnabled`` sets. A closure switch keeps it on for good, so that an off flag switch is
    /// answered by this one load.
    #if canImport(Darwin)
    @usableFromInline let flag: LockedState<Bool>
    #else
    @usableFromInline let flag: Atomic<Bool>
    #endif
    /// The closure a closure switch asks once its flag is on.
    @usableFromInline let reader: (@Sendable () -> Bool)?

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
        flag = LockedState(initialState: true)
        #else
        flag = Atomic(true)
        #endif
        self.reader = reader
    }

    /// Whether the flag is off, so that ``isEnabled`` is `false` without asking a closure (a closure switch's
    /// flag stays on): what a pipeline checks before it leaves out its switched-off outcome stages.
    @inlinable
    var isFlagOff: Bool {
        #if canImport(Darwin)
        !flag.withLock { $0 }
        #else
        !flag.load(ordering: .relaxed)
        #endif
    }

    /// Whether chaos is injected now.
    @inlinable
    public var isEnabled: Bool {
        get {
            #if canImport(Darwin)
            guard flag.withLock({ $0 }) else { return false }
            #else
            guard flag.load(ordering: .relaxed) else { return false }
            #endif
            guard let reader else { return true }
            return reader()
        }
        set {
            guard reader == nil else { return }
            #if canImport(Darwin)
            flag.withLock { $0 = newValue }
            #else
            flag.store(newValue, ordering: .relaxed)
            #endif
        }
    }
}
