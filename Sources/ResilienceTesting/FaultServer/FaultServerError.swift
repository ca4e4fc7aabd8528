/// Why a ``FaultServer`` could not start.
public struct FaultServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The failing system call (`socket`, `bind`, `listen`).
    public var operation: String
    /// The `errno` it set.
    public var errorNumber: Int32

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - operation: The failing system call (`socket`, `bind`, `listen`).
    ///   - errorNumber: The `errno` it set.
    public init(operation: String, errorNumber: Int32) {
        self.operation = operation
        self.errorNumber = errorNumber
    }

    /// `bind failed (errno 98)`.
    public var description: String { "\(operation) failed (errno \(errorNumber))" }
}
