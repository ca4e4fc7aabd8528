/// A thread-safe box for values that tests and scripted doubles mutate from several tasks.
public final class LockedBox<Value: Sendable>: Sendable {
    private let state: LockedState<Value>

    /// Creates a box holding `value`.
    ///
    /// - Parameter value: The initial value.
    public init(_ value: Value) { state = LockedState(initialState: value) }

    /// The current value.
    public var value: Value { state.withLock { $0 } }

    /// Mutates the value under the lock and returns `body`'s result.
    @discardableResult
    public func mutate<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try state.withLock(body)
    }
}
