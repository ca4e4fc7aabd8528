/// What a cache did with a response, as the `Cache-Status` field says it (RFC 9211), read and written through
/// the structured-field parser and serialiser.
///
/// A hit (``isHit``) is a request answered from storage without asking the origin. A request that went to the
/// origin has a ``forwardReason`` and, when the origin answered, its ``forwardStatus``: a stored response
/// revalidated by a `304` is `fwd=stale; fwd-status=304`, not a hit, and so is a stale response served because
/// the origin failed (`fwd=stale; fwd-status=503; detail="stale-if-error"`, without `fwd-status` when it could
/// not be reached). ``timeToLive`` is written on answers built from a stored response; a negative one means the
/// answer is stale (``isStale``), and ``detail`` says why stale was allowed (`stale-if-error`, `max-stale`,
/// `stale-while-revalidate`). Sources read it to report a result's age and staleness.
public struct HTTPCacheStatus: Hashable, Sendable {
    /// The field's name.
    public static let fieldName = "Cache-Status"
    /// The name the library's own HTTP cache writes.
    public static let libraryCacheName = "ResilienceKit"

    /// The cache's name (the list member's token).
    public var cacheName: String
    /// True when the request was answered from storage without going to the origin (RFC 9211 §2.1); false for
    /// a response revalidated with the origin, even when its body is the stored one.
    public var isHit: Bool
    /// Why the request went to the origin, if it did (RFC 9211 §2.2): `uri-miss` (nothing stored for the URI),
    /// `vary-miss` (nothing stored for the request's `Vary` selection), `stale` (the stored response had to be
    /// validated), `request` (the request's directives refused a fresh stored response, or its `no-store` kept
    /// the cache out), `partial` (only part of the representation was stored), `method` (an unsafe method),
    /// `bypass` (the cache stepped aside).
    public var forwardReason: String?
    /// The status the origin answered a forwarded request with, if it was forwarded.
    public var forwardStatus: Int?
    /// Seconds of freshness left in the stored response that answered; negative when it was served stale.
    public var timeToLive: Int?
    /// True when the response was stored (or the stored response it updated was stored again).
    public var stored: Bool
    /// A free-form detail (`stale-if-error`, `stale-while-revalidate`, `max-stale`, `only-if-cached`).
    public var detail: String?

    /// Creates a status.
    ///
    /// - Parameters:
    ///   - cacheName: The cache's name.
    ///   - isHit: Whether the request was answered from storage without going to the origin.
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

    /// True for a stored response served past its freshness lifetime: a stale hit, or one served because the
    /// origin failed (`stale-if-error`).
    public var isStale: Bool { (timeToLive ?? 0) < 0 }

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
