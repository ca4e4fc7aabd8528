/// A test-kit expectation that did not hold (thrown by ``RecordingTelemetrySink``'s `expect…` helpers), with
/// a message saying what was expected and what was seen.
public struct ExpectationFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was expected and what was seen.
    public var message: String

    /// Creates a failure.
    ///
    /// - Parameter message: What was expected and what was seen.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}
