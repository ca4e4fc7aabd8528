import Foundation
import ResilienceCore
import ResilienceSync

/// Sends every mutation to one FaultServer mutation-sink URL (FaultServer scripts by path): creates as POST, updates as PUT, deletes as
/// DELETE, each with its JSON payload (the engine adds the `Idempotency-Key`).
public struct SinkRequestBuilder: SyncRequestBuilder {
    /// The sink's URL.
    public var url: URL

    /// Creates a builder for `url`.
    public init(url: URL) { self.url = url }

    /// The request for one mutation.
    public func request(for mutation: Mutation) throws -> HTTPRequest {
        let method: HTTPMethod =
            switch mutation.operation {
            case .create: .post
            case .delete: .delete
            default: .put
            }
        return HTTPRequest(
            method: method, url: url, headers: ["Content-Type": "application/json"], body: mutation.payload)
    }
}
