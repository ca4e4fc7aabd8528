#if canImport(Darwin)
import Darwin
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
/// allocation and locking costs none. `Mutex` from the Synchronization module needs macOS 15, which is why
/// this type exists. Third-party breakers, limiters and sinks use it the same way:
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
            PlatformLock.lock(lock)
            defer { PlatformLock.unlock(lock) }
            return try body(&state.pointee)
        }
    }

    deinit {
        withUnsafeMutablePointerToElements { PlatformLock.destroy($0) }
    }
}

/// The platform's cheapest non-recursive mutex. (On Linux, the Synchronization module's `Mutex` is faster
/// uncontended, 5.7 against 10-11 ns per round trip, but ThreadSanitizer cannot see its futex hand over a
/// contended lock, so every program that used ResilienceKit under the sanitizer would see false races.)
#if canImport(Darwin)
@usableFromInline typealias PlatformLock = os_unfair_lock_s
#else
@usableFromInline typealias PlatformLock = pthread_mutex_t
#endif

extension PlatformLock {
    @usableFromInline
    static func initialize(_ lock: UnsafeMutablePointer<PlatformLock>) {
        #if canImport(Darwin)
        lock.initialize(to: os_unfair_lock())
        #else
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        defer { pthread_mutexattr_destroy(&attributes) }
        #if canImport(Glibc)
        // Critical sections here are a few dozen instructions: spin briefly before sleeping in the kernel,
        // so contended tasks on other threads do not pay a futex round trip for every call.
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
        let result = pthread_mutex_init(lock, &attributes)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
        #endif
    }

    @usableFromInline
    static func destroy(_ lock: UnsafeMutablePointer<PlatformLock>) {
        #if !canImport(Darwin)
        pthread_mutex_destroy(lock)
        #endif
        lock.deinitialize(count: 1)
    }

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
