import Foundation

/// Gives every non-idempotent request (POST and PATCH by default) an `Idempotency-Key` header with a fresh
/// UUID, and marks the request ``Idempotency/keyed(_:)`` so a retry guard knows repeating it is safe.
///
/// Put it *outside* the retrying stage (``ResilientTransport`` wraps the pipeline, so wrap that): the key is
/// set once per logical request and every retry sends the same key. A request that already carries a key keeps
/// it; a blank one (empty or only spaces) is no key and is replaced, since a server ignores it and a retry would
/// apply the request twice.
public struct IdempotencyKeyTransport: HTTPTransport {
    /// The wrapped transport.
    public let base: any HTTPTransport
    /// The methods that get a key.
    public var methods: Set<HTTPMethod>
    /// The header's name.
    public var headerName: String
    private let makeKey: @Sendable () -> String

    /// Wraps `base`. `makeKey` defaults to a random UUID string.
    ///
    /// - Parameters:
    ///   - base: The wrapped transport.
    ///   - methods: The methods that get a key. Default: `[.post, .patch]`.
    ///   - headerName: The header's name. Default: `"Idempotency-Key"`.
    ///   - makeKey: Makes a new key for a request that has none. Default: a random UUID string.
    public init(
        wrapping base: any HTTPTransport, methods: Set<HTTPMethod> = [.post, .patch],
        headerName: String = "Idempotency-Key", makeKey: @escaping @Sendable () -> String = { UUID().uuidString }
    ) {
        self.base = base
        self.methods = methods
        self.headerName = headerName
        self.makeKey = makeKey
    }

    /// Adds the key (if needed) and sends.
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        try await base.send(keyed(request), context: context)
    }

    /// `request` with its key: the existing header, the existing ``Idempotency/key``, or a new one (a blank header
    /// or key counts as none).
    public func keyed(_ request: HTTPRequest) -> HTTPRequest {
        guard methods.contains(request.method) else { return request }
        var request = request
        func usable(_ key: String?) -> String? {
            guard let key, !key.allSatisfy({ $0 == " " || $0 == "\t" }) else { return nil }
            return key
        }
        let key = usable(request.headers[headerName]) ?? usable(request.idempotency.key) ?? makeKey()
        request.headers[headerName] = key
        request.idempotency = .keyed(key)
        return request
    }
}
