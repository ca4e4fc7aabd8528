import ResilienceCore

/// Turns queued mutations into HTTP requests: the integrator's knowledge of the API.
///
/// The engine adds the `Idempotency-Key` header (the mutation's key) to every single request, so the builder
/// need not. A batch request carries several mutations: the builder must put each item's idempotency key in
/// the body, and the engine sets the header to a key derived from the items' keys.
public protocol SyncRequestBuilder: Sendable {
    /// The request that applies `mutation`. Throwing counts as a failed attempt of the mutation.
    func request(for mutation: Mutation) throws -> HTTPRequest

    /// One request that creates all of `mutations` (all `.create`), or `nil` when the API has no batch
    /// endpoint. The default returns `nil`.
    func batchRequest(for mutations: [Mutation]) throws -> HTTPRequest?

    /// The per-item results of a successful batch response, one response per mutation in the same order.
    /// Throwing, or returning the wrong number of results, counts as a failed attempt of every item.
    func batchResults(from response: HTTPResponse, for mutations: [Mutation]) throws -> [HTTPResponse]
}

extension SyncRequestBuilder {
    /// No batch endpoint.
    public func batchRequest(for mutations: [Mutation]) throws -> HTTPRequest? { nil }

    /// Every item gets the batch's response.
    public func batchResults(from response: HTTPResponse, for mutations: [Mutation]) throws -> [HTTPResponse] {
        Array(repeating: response, count: mutations.count)
    }
}
