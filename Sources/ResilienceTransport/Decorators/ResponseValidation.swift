/// Which statuses a ``ResilientTransport`` accepts; others throw ``HTTPStatusError`` so retry stages see them.
public struct ResponseValidation: Sendable, Hashable {
    /// The accepted statuses.
    public var acceptedStatuses: Set<Int>

    /// Creates a validation.
    ///
    /// - Parameter acceptedStatuses: The statuses that count as success; any other status throws
    ///   ``HTTPStatusError``.
    public init(acceptedStatuses: Set<Int>) { self.acceptedStatuses = acceptedStatuses }

    /// Whether `status` is accepted.
    public func accepts(_ status: Int) -> Bool { acceptedStatuses.contains(status) }

    /// 2xx only.
    public static let successful = ResponseValidation(acceptedStatuses: Set(200..<300))
    /// 2xx and 304 (conditional requests).
    public static let successfulOrNotModified = ResponseValidation(acceptedStatuses: Set(200..<300).union([304]))
    /// 2xx and 404, for sources where "not found" means an empty result.
    public static let successfulOrNotFound = ResponseValidation(acceptedStatuses: Set(200..<300).union([404]))
}
