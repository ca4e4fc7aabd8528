#if canImport(Darwin)
import Darwin
#elseif os(Linux) && canImport(Synchronization)
import Synchronization
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// A value guarded by a small platform lock: the building block of every hot-path state machine.
///
/// State machines in ResilienceKit are value types that take `now` as an argument. They live inside a
/// `LockedState`, are mutated in `withLock`, and return *actions* that the caller performs after the lock
/// is released (sleeping, emitting events, resuming continuations). Never suspend or call out to user code
/// while holding the lock.
///
/// The storage is a single `ManagedBuffer` holding both the state and the lock, so creating one costs one
/// allocation and locking costs none. The lock is `os_unfair_lock` on Apple platforms (where `Mutex` from the
/// Synchronization module needs macOS 15, which is why this type exists) and that `Mutex` on Linux. Third-party breakers, limiters and sinks use it the same way:
///
/// ```swift
/// final class MyBreaker: BreakerPolicy {
///     private let machine = LockedState(initialState: MyMachine())
///     func admit(now: ResilienceInstant) -> BreakerAdmission { machine.withLock { $0.admit(now: now) } }
///     …
/// }
/// ```
///
/// The lock is not recursive: calling `withLock` on the same value inside `body` deadlocks.
public struct LockedState<State>: @unchecked Sendable {
    @usableFromInline let storage: LockStorage<State>

    /// Creates the lock with an initial state.
    ///
    /// - Parameter initialState: The state the lock guards.
    public init(initialState: State) {
        storage = LockStorage.create(initialState: initialState)
    }

    /// Runs `body` with exclusive access to the state and returns its result.
    ///
    /// - Parameter body: Reads or changes the state; must not suspend, block, or call back into code that
    ///   may take the same lock.
    @inlinable
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try storage.withLock(body)
    }
}

@usableFromInline
final class LockStorage<State>: ManagedBuffer<State, PlatformLock> {
    static func create(initialState: State) -> LockStorage<State> {
        let buffer = Self.create(minimumCapacity: 1) { _ in initialState }
        let storage = unsafeDowncast(buffer, to: LockStorage<State>.self)
        storage.withUnsafeMutablePointerToElements { PlatformLock.initialize($0) }
        return storage
    }

    @inlinable
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { state, lock in
            #if os(Linux) && canImport(Synchronization)
            // The state lives beside the mutex, not in it, so the result is not derived from the mutex's value.
            try lock.pointee.withLock { _ in UncheckedResult(value: try body(&state.pointee)) }.value
            #else
            PlatformLock.lock(lock)
            defer { PlatformLock.unlock(lock) }
            return try body(&state.pointee)
            #endif
        }
    }

    deinit {
        withUnsafeMutablePointerToElements { PlatformLock.destroy($0) }
    }
}

/// The platform's cheapest non-recursive mutex: `os_unfair_lock` on Apple platforms, the Synchronization
/// module's `Mutex` on Linux (an inlined futex fast path, about twice as fast as a `pthread_mutex_t`), and a
/// `pthread_mutex_t` elsewhere.
#if canImport(Darwin)
@usableFromInline typealias PlatformLock = os_unfair_lock_s
#elseif os(Linux) && canImport(Synchronization)
@usableFromInline typealias PlatformLock = Mutex<Void>
#else
@usableFromInline typealias PlatformLock = pthread_mutex_t
#endif

extension PlatformLock {
    static func initialize(_ lock: UnsafeMutablePointer<PlatformLock>) {
        #if canImport(Darwin)
        lock.initialize(to: os_unfair_lock())
        #elseif os(Linux) && canImport(Synchronization)
        lock.initialize(to: Mutex(()))
        #else
        let result = pthread_mutex_init(lock, nil)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
        #endif
    }

    static func destroy(_ lock: UnsafeMutablePointer<PlatformLock>) {
        #if !canImport(Darwin) && !(os(Linux) && canImport(Synchronization))
        pthread_mutex_destroy(lock)
        #endif
        lock.deinitialize(count: 1)
    }
}

#if os(Linux) && canImport(Synchronization)
/// A result handed out of `Mutex.withLock`, which wants results it can send: the value comes from the state
/// guarded beside the mutex, which the caller owns either way.
@usableFromInline
struct UncheckedResult<Value>: @unchecked Sendable {
    @usableFromInline var value: Value

    @inlinable
    init(value: Value) {
        self.value = value
    }
}
#else
extension PlatformLock {
    @inlinable
    static func lock(_ lock: UnsafeMutablePointer<PlatformLock>) {
        #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        #else
        pthread_mutex_lock(lock)
        #endif
    }

    @inlinable
    static func unlock(_ lock: UnsafeMutablePointer<PlatformLock>) {
        #if canImport(Darwin)
        os_unfair_lock_unlock(lock)
        #else
        pthread_mutex_unlock(lock)
        #endif
    }
}
#endif
