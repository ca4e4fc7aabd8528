/// What a cache did with a response, as the `Cache-Status` field says it (RFC 9211), read and written through
/// the structured-field parser and serialiser.
///
/// A response answered from a stored one is a hit; a stale hit (``isStale``) has a negative
/// ``timeToLive``, and its ``detail`` says why stale was allowed (`stale-if-error`, `max-stale`,
/// `stale-while-revalidate`). Sources read it to report a result's age and staleness.
public struct HTTPCacheStatus: Hashable, Sendable {
    /// The field's name.
    public static let fieldName = "Cache-Status"
    /// The name the library's own HTTP cache writes.
    public static let libraryCacheName = "ResilienceKit"

    /// The cache's name (the list member's token).
    public var cacheName: String
    /// True when the response was answered from storage (possibly after validation).
    public var isHit: Bool
    /// Why the request went to the origin (`miss`, `stale`, `request`, `uri-miss`, `vary-miss`), if it did.
    public var forwardReason: String?
    /// The status the origin answered a forwarded request with, if it was forwarded.
    public var forwardStatus: Int?
    /// Seconds of freshness left; negative when the response was served stale.
    public var timeToLive: Int?
    /// True when the response was stored.
    public var stored: Bool
    /// A free-form detail (`stale-if-error`).
    public var detail: String?

    /// Creates a status.
    ///
    /// - Parameters:
    ///   - cacheName: The cache's name.
    ///   - isHit: Whether the response was answered from storage.
    ///   - forwardReason: Why the request went to the origin, if it did.
    ///   - forwardStatus: The origin's status for a forwarded request.
    ///   - timeToLive: Seconds of freshness left (negative when stale).
    ///   - stored: Whether the response was stored.
    ///   - detail: A free-form detail.
    public init(
        cacheName: String, isHit: Bool, forwardReason: String? = nil, forwardStatus: Int? = nil,
        timeToLive: Int? = nil, stored: Bool = false, detail: String? = nil
    ) {
        self.cacheName = cacheName
        self.isHit = isHit
        self.forwardReason = forwardReason
        self.forwardStatus = forwardStatus
        self.timeToLive = timeToLive
        self.stored = stored
        self.detail = detail
    }

    /// The status `cacheName` wrote into `headers`, or `nil` when it wrote none (or the field is malformed).
    ///
    /// - Parameters:
    ///   - headers: The response's header fields.
    ///   - cacheName: The cache whose entry to read (the last one of that name wins).
    public init?(headers: HTTPHeaders, cacheName: String) {
        guard let value = headers.combinedValue(for: Self.fieldName),
            let list = try? StructuredFieldList(parsing: value),
            let item = list.members.last(where: { $0.item?.bareItem == .token(cacheName) })?.item
        else { return nil }
        let parameters = item.parameters
        self.cacheName = cacheName
        isHit = parameters["hit"]?.booleanValue ?? false
        if case .token(let reason) = parameters["fwd"] { forwardReason = reason }
        forwardStatus = parameters["fwd-status"]?.integerValue.map { Int($0) }
        timeToLive = parameters["ttl"]?.integerValue.map { Int($0) }
        stored = parameters["stored"]?.booleanValue ?? false
        detail = parameters["detail"]?.stringValue
    }

    /// True for a hit served past its freshness lifetime.
    public var isStale: Bool { isHit && (timeToLive ?? 0) < 0 }

    /// The list member this status serialises to (`ResilienceKit; hit; ttl=-30; detail="stale-if-error"`).
    public var fieldValue: String {
        var parameters = StructuredFieldParameters()
        if isHit { parameters["hit"] = .boolean(true) }
        if let forwardReason { parameters["fwd"] = .token(forwardReason) }
        if let forwardStatus { parameters["fwd-status"] = .integer(Int64(forwardStatus)) }
        if let timeToLive { parameters["ttl"] = .integer(Int64(timeToLive)) }
        if stored { parameters["stored"] = .boolean(true) }
        if let detail { parameters["detail"] = .string(detail) }
        let item = StructuredFieldItem(.token(cacheName), parameters: parameters)
        return (try? StructuredFieldList([.item(item)]).serialized()) ?? cacheName
    }
}
