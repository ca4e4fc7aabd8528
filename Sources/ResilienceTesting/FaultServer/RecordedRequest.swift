import Foundation

/// One request a ``FaultServer`` received, for assertions.
public struct RecordedRequest: Sendable, Hashable, CustomStringConvertible {
    /// The method (`GET`).
    public var method: String
    /// The path without the query (`/jobs`).
    public var path: String
    /// The query string without `?`, if any.
    public var query: String?
    /// The header fields as received.
    public var headers: HTTPHeaders
    /// The body (empty when none).
    public var body: Data
    /// The 1-based position among all requests the server received.
    public var sequenceNumber: Int

    /// Creates a record.
    ///
    /// - Parameters:
    ///   - method: The method (`GET`).
    ///   - path: The path without the query (`/jobs`).
    ///   - query: The query string without `?`, if any.
    ///   - headers: The header fields as received. Default: `[:]`.
    ///   - body: The body (empty when none). Default: `Data()`.
    ///   - sequenceNumber: The 1-based position among all requests the server received. Default: `0`.
    public init(
        method: String, path: String, query: String? = nil, headers: HTTPHeaders = [:], body: Data = Data(),
        sequenceNumber: Int = 0
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.sequenceNumber = sequenceNumber
    }

    /// `#3 GET /jobs`.
    public var description: String { "#\(sequenceNumber) \(method) \(path)" }
}
