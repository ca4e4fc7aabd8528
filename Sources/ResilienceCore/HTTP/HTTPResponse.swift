import Foundation

/// One HTTP response, as a value.
public struct HTTPResponse: Hashable, Sendable, CustomStringConvertible {
    /// The status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body (already size-limited by the transport).
    public var body: Data
    /// The final URL after redirects, if known.
    public var url: URL?

    /// Creates a response.
    ///
    /// - Parameters:
    ///   - status: The status code.
    ///   - headers: The header fields. Default: `[:]`.
    ///   - body: The body (already size-limited by the transport). Default: `Data()`.
    ///   - url: The final URL after redirects, if known.
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data(), url: URL? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// True for 2xx.
    public var isSuccess: Bool { (200..<300).contains(status) }

    /// `HTTP 200 (123 bytes)`.
    public var description: String { "HTTP \(status) (\(body.count) bytes)" }
}
