import Foundation
import ResilienceCore

/// The rules of a private HTTP cache (RFC 9111, RFC 5861) as a pure value: what may be stored, how fresh a
/// stored response is, whether it may answer a request, how a `304` updates it and which URIs an unsafe
/// request invalidates. ``CachingTransport`` applies it; it reads no clock and keeps no state.
public struct HTTPCachePolicy: Hashable, Sendable {
    /// How a stored response may answer a request.
    public enum Reuse: Hashable, Sendable {
        /// Fresh: serve it.
        case fresh
        /// Stale, but the request's `max-stale` allows it: serve it.
        case staleAllowedByRequest
        /// Stale within the response's `stale-while-revalidate`: serve it and revalidate in the background.
        case staleWhileRevalidate
        /// Send the request on, conditionally when the response has validators.
        case validate
    }

    /// The share of the time since `Last-Modified` a response without explicit freshness stays fresh.
    /// Default: 0.1 (RFC 9111 §4.2.2). Negative and NaN give no heuristic freshness; the result never exceeds
    /// ``maximumHeuristicLifetime``.
    public var heuristicFraction: Double
    /// The longest heuristic freshness lifetime. Default: one week.
    public var maximumHeuristicLifetime: Duration
    /// The largest body stored, in bytes. Default: 8 MiB.
    public var maximumStoredBodyBytes: Int
    /// The largest header section stored, in bytes. Default: 64 KiB.
    public var maximumStoredHeaderBytes: Int
    /// The most header names a stored response's `Vary` may list; beyond it the response is not stored.
    /// Default: 32.
    public var maximumVaryNames: Int

    /// Statuses cacheable by default (RFC 9110 §15.1), so heuristic freshness applies to them.
    public static let heuristicallyCacheableStatuses: Set<Int> = [
        200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501,
    ]

    /// Statuses this cache understands (for `must-understand`).
    public static let understoodStatuses: Set<Int> = [
        200, 203, 204, 300, 301, 302, 303, 307, 308, 404, 405, 410, 414, 501,
    ]

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - heuristicFraction: The share of the `Last-Modified` age used as heuristic freshness; negative and NaN give
    ///     none. Default: 0.1.
    ///   - maximumHeuristicLifetime: The longest heuristic freshness lifetime. Default: one week.
    ///   - maximumStoredBodyBytes: The largest body stored. Default: 8 MiB.
    ///   - maximumStoredHeaderBytes: The largest header section stored. Default: 64 KiB.
    ///   - maximumVaryNames: The most names a stored response's `Vary` may list. Default: 32.
    public init(
        heuristicFraction: Double = 0.1, maximumHeuristicLifetime: Duration = .seconds(7 * 86_400),
        maximumStoredBodyBytes: Int = 8 << 20, maximumStoredHeaderBytes: Int = 64 << 10, maximumVaryNames: Int = 32
    ) {
        self.heuristicFraction = heuristicFraction
        self.maximumHeuristicLifetime = maximumHeuristicLifetime
        self.maximumStoredBodyBytes = maximumStoredBodyBytes
        self.maximumStoredHeaderBytes = maximumStoredHeaderBytes
        self.maximumVaryNames = maximumVaryNames
    }

    // MARK: Keys

    /// The primary cache key for `url`: its absolute string without the fragment, normalised as RFC 9110
    /// §4.2.3 compares URIs: the scheme and host in lowercase, without the scheme's default port (80 for
    /// `http`, 443 for `https`), and an empty path as `/`. `HTTPS://API.example:443/a` and
    /// `https://api.example/a` are one key; path and query keep their case.
    public static func key(for url: URL) -> String {
        var text = url.absoluteString
        if let hash = text.utf8.firstIndex(of: UInt8(ascii: "#")) { text = String(text[..<hash]) }
        guard let parts = authority(of: text) else { return text }
        let scheme = text[..<parts.schemeEnd]
        let authority = text[parts.authorityStart..<parts.authorityEnd]
        let isUppercase: (UInt8) -> Bool = { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
        let pathIsEmpty = parts.authorityEnd == text.endIndex || text[parts.authorityEnd] == "?"
        // Most keys are already in normal form: they are returned as they are, without building a string.
        guard
            scheme.utf8.contains(where: isUppercase) || authority.utf8.contains(where: isUppercase)
                || authority.utf8.contains(UInt8(ascii: ":")) || pathIsEmpty
        else { return text }
        let lowercaseScheme = scheme.lowercased()
        var userInfo = Substring("")
        var hostAndPort = authority
        if let at = authority.lastIndex(of: "@") {
            userInfo = authority[...at]
            hostAndPort = authority[authority.index(after: at)...]
        }
        var host = hostAndPort
        var port: Substring?
        if let colon = hostAndPort.lastIndex(of: ":"), !hostAndPort[colon...].contains("]") {
            host = hostAndPort[..<colon]
            port = hostAndPort[hostAndPort.index(after: colon)...]
        }
        let defaultPort: Substring? =
            switch lowercaseScheme {
            case "http": "80"
            case "https": "443"
            default: nil
            }
        var normalised = lowercaseScheme + "://" + userInfo + host.lowercased()
        if let port, !port.isEmpty, port != defaultPort { normalised += ":" + port }
        if pathIsEmpty, defaultPort != nil { normalised += "/" }
        return normalised + text[parts.authorityEnd...]
    }

    /// Where the scheme ends and the authority (between `://` and the path or query) begins and ends in an
    /// absolute URI, or nil when it has no authority.
    private static func authority(
        of text: String
    ) -> (schemeEnd: String.Index, authorityStart: String.Index, authorityEnd: String.Index)? {
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
        let start = text.index(colon, offsetBy: 3)
        let end = text[start...].firstIndex { $0 == "/" || $0 == "?" } ?? text.endIndex
        return (colon, start, end)
    }

    /// The origin part (scheme and authority) of a key ``key(for:)`` made, or the key itself without one.
    private static func origin(ofKey key: String) -> Substring {
        guard let parts = authority(of: key) else { return key[...] }
        return key[..<parts.authorityEnd]
    }

    /// The secondary key of `request` for a response with `responseHeaders`: the values of the request
    /// headers its `Vary` names, or `nil` when it can never be selected (`Vary: *`, or more than
    /// ``maximumVaryNames`` names).
    public func variantKey(for request: HTTPRequest, varyingOn responseHeaders: HTTPHeaders) -> String? {
        selectingFieldNames(of: responseHeaders).map { Self.variantKey(for: request, selectingFieldNames: $0) }
    }

    /// The sorted, lowercased, distinct field names a response's `Vary` lists (empty without `Vary`), or `nil`
    /// when it can never be selected (`Vary: *`, or more than ``maximumVaryNames`` names).
    public func selectingFieldNames(of responseHeaders: HTTPHeaders) -> [String]? {
        let varyValues = responseHeaders.values(for: "Vary")
        if varyValues.isEmpty { return [] }
        var commas = 0
        for value in varyValues {
            for byte in value.utf8 where byte == UInt8(ascii: ",") {
                commas += 1
                if commas >= maximumVaryNames { return nil }
            }
        }
        var names: [String] = []
        for value in varyValues {
            for name in value.split(separator: ",") {
                let trimmed = Self.trimmed(name).lowercased()
                if trimmed == "*" { return nil }
                if !trimmed.isEmpty, !names.contains(trimmed) { names.append(trimmed) }
            }
        }
        guard names.count <= maximumVaryNames else { return nil }
        return names.sorted()
    }

    /// The secondary key of `request` for a response whose `Vary` lists `names` (as
    /// ``selectingFieldNames(of:)`` returns them).
    public static func variantKey(for request: HTTPRequest, selectingFieldNames names: [String]) -> String {
        var key = ""
        for name in names {
            key += name
            if let value = request.headers.combinedValue(for: name) {
                key += "="
                let normalised = value.split(separator: ",").map(Self.trimmed).joined(separator: ",")
                key += caseInsensitiveSelectingFields.contains(name) ? normalised.lowercased() : normalised
            }
            key += "\n"
        }
        return key
    }

    /// Selecting fields whose values compare case-insensitively (their tokens and language tags do).
    private static let caseInsensitiveSelectingFields: Set<String> = [
        "accept", "accept-charset", "accept-encoding", "accept-language",
    ]

    private static func trimmed(_ text: Substring) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return text[first...last]
    }

    // MARK: Storing

    /// True when `response` to `request` may be stored (RFC 9111 §3) by a private cache within this policy's
    /// bounds. A `206 Partial Content` is stored only when it answers a `Range` request with one byte range
    /// whose body matches its `Content-Range` (RFC 9111 §3.3).
    public func isStorable(_ response: HTTPResponse, for request: HTTPRequest) -> Bool {
        guard request.method == .get, (200..<600).contains(response.status), response.status != 304 else {
            return false
        }
        // RFC 9111 §3.3: partial content is stored only as one byte range whose body is exactly that range,
        // answering a request that asked for a range (the cache never answers a full request from it).
        if response.status == 206 {
            guard request.headers.contains("Range"), HTTPContentRange(of: response) != nil else { return false }
        }
        guard let requestDirectives = try? CacheControl(headers: request.headers) ?? CacheControl(),
            !requestDirectives.noStore
        else { return false }
        guard let directives = try? CacheControl(headers: response.headers) ?? CacheControl() else { return false }
        // RFC 9111 §5.2.2.3: with must-understand, an understood status is stored despite no-store.
        if directives.contains("must-understand") {
            guard Self.understoodStatuses.contains(response.status) else { return false }
        } else if directives.noStore {
            return false
        }
        guard response.body.count <= maximumStoredBodyBytes,
            response.headers.fields.reduce(0, { $0 + $1.name.utf8.count + $1.value.utf8.count })
                <= maximumStoredHeaderBytes,
            variantKey(for: request, varyingOn: response.headers) != nil
        else { return false }
        return directives.isPublic || directives.isPrivate || directives.maxAge != nil
            || response.headers.contains("Expires") || Self.heuristicallyCacheableStatuses.contains(response.status)
    }

    /// The entry to store for `response` to `request`, exchanged between `requestTime` and `responseTime`,
    /// or `nil` when it may not be stored.
    public func entry(
        for response: HTTPResponse, to request: HTTPRequest, requestTime: Date, responseTime: Date
    ) -> HTTPCacheEntry? {
        guard isStorable(response, for: request),
            let variantKey = variantKey(for: request, varyingOn: response.headers)
        else { return nil }
        var stored = response
        stored.headers = Self.withoutHopByHopFields(response.headers)
        return HTTPCacheEntry(
            key: Self.key(for: request.url), variantKey: variantKey, response: stored, requestTime: requestTime,
            responseTime: responseTime, freshnessLifetime: freshnessLifetime(of: response, responseTime: responseTime),
            initialAge: initialAge(of: response, requestTime: requestTime, responseTime: responseTime))
    }

    /// The freshness lifetime of `response` in seconds (RFC 9111 §4.2.1): `max-age`, else `Expires` − `Date`,
    /// else 10 % of `Date` − `Last-Modified` for a heuristically cacheable status, else 0. A private cache
    /// ignores `s-maxage`; an invalid `Expires` means already stale.
    public func freshnessLifetime(of response: HTTPResponse, responseTime: Date) -> Double {
        guard let directives = try? CacheControl(headers: response.headers) ?? CacheControl() else { return 0 }
        if let maxAge = directives.maxAge { return Double(maxAge) }
        let date = response.headers["Date"].flatMap { HTTPDate.parse($0, now: responseTime) } ?? responseTime
        if let expiresText = response.headers["Expires"] {
            guard let expires = HTTPDate.parse(expiresText, now: responseTime) else { return 0 }
            return max(0, expires.timeIntervalSince(date))
        }
        if let lastModified = response.headers["Last-Modified"].flatMap({ HTTPDate.parse($0, now: responseTime) }),
            Self.heuristicallyCacheableStatuses.contains(response.status) || directives.isPublic
        {
            let elapsed = max(0, date.timeIntervalSince(lastModified))
            let fraction = heuristicFraction.isNaN ? 0 : max(0, heuristicFraction)
            // Neither factor zero, so no 0 × ∞ (NaN): at most the limit.
            guard elapsed > 0, fraction > 0 else { return 0 }
            let limit = Double(maximumHeuristicLifetime.components.seconds)
            return min(elapsed * fraction, limit)
        }
        return 0
    }

    /// The corrected initial age of `response` in seconds (RFC 9111 §4.2.3).
    public func initialAge(of response: HTTPResponse, requestTime: Date, responseTime: Date) -> Double {
        var ageValue = 0.0
        // The first value of a repeated field; a value that is not delta-seconds (`7200.0`, `-1`) is ignored.
        if let first = response.headers["Age"]?.split(separator: ",", omittingEmptySubsequences: false).first {
            let digits = first.trimmingCharacters(in: .whitespaces)
            if !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                ageValue = Double(digits.utf8.count > 10 ? CacheControl.maximumDeltaSeconds : Int(digits) ?? 0)
            }
        }
        let apparentAge =
            response.headers["Date"].flatMap { HTTPDate.parse($0, now: responseTime) }.map {
                max(0, responseTime.timeIntervalSince($0))
            } ?? 0
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        return max(apparentAge, ageValue + responseDelay)
    }

    // MARK: Reusing

    /// Whether `entry` may answer a request with `requestDirectives` at `now` (RFC 9111 §4, RFC 5861 §3).
    ///
    /// - Parameters:
    ///   - entry: The selected stored response.
    ///   - requestDirectives: The request's `Cache-Control` (with `Pragma: no-cache` read as `no-cache`).
    ///   - now: The current wall-clock time.
    public func reuse(_ entry: HTTPCacheEntry, requestDirectives: CacheControl, now: Date) -> Reuse {
        guard let directives = entry.directives else { return .validate }
        let age = entry.age(at: now)
        if requestDirectives.noCache || directives.noCache { return .validate }
        if let maxAge = requestDirectives.maxAge, age > Double(maxAge) { return .validate }
        let staleness = age - entry.freshnessLifetime
        if staleness < 0 {
            if let minFresh = requestDirectives.minFresh, -staleness < Double(minFresh) { return .validate }
            return .fresh
        }
        if directives.mustRevalidate { return .validate }
        if let maxStale = requestDirectives.maxStale, staleness <= Double(maxStale) { return .staleAllowedByRequest }
        if let window = directives.staleWhileRevalidate, staleness <= Double(window) { return .staleWhileRevalidate }
        return .validate
    }

    /// True when `entry` may answer a request that failed (the network or a 500/502/503/504) at `now`:
    /// the response's or the request's `stale-if-error` covers its staleness, and neither `no-cache`,
    /// `must-revalidate` nor `no-store` forbids serving it stale (RFC 5861 §4, RFC 9111 §4.2.4).
    public func allowsStaleIfError(_ entry: HTTPCacheEntry, requestDirectives: CacheControl, now: Date) -> Bool {
        guard let directives = entry.directives, !directives.noCache, !directives.mustRevalidate,
            !directives.noStore, !requestDirectives.noStore
        else { return false }
        let window = max(directives.staleIfError ?? -1, requestDirectives.staleIfError ?? -1)
        guard window >= 0 else { return false }
        return entry.age(at: now) - entry.freshnessLifetime <= Double(window)
    }

    /// The request to send to validate `entry`: `request` with `If-None-Match` from its `ETag` and
    /// `If-Modified-Since` from its `Last-Modified`, unless the caller set conditionals of its own.
    public func validationRequest(for request: HTTPRequest, entry: HTTPCacheEntry) -> HTTPRequest {
        var conditional = request
        guard !request.headers.contains("If-None-Match"), !request.headers.contains("If-Modified-Since") else {
            return conditional
        }
        if let entityTag = entry.response.headers["ETag"] {
            conditional.headers.add(name: "If-None-Match", value: entityTag)
        }
        if let lastModified = entry.response.headers["Last-Modified"] {
            conditional.headers.add(name: "If-Modified-Since", value: lastModified)
        }
        return conditional
    }

    /// `entry` freshened by a `304 Not Modified` (RFC 9111 §4.3.4): the 304's header fields replace the
    /// stored ones of the same name (except framing fields), and the times are the validation's. A 304 without
    /// `Date` is dated when it arrived (RFC 9110 §6.6.1), so the stored `Date` never outlives the validation.
    /// The entry keeps its ``HTTPCacheEntry/variantKey``: when the 304 changes `Vary`, key it again with
    /// ``variantKey(for:varyingOn:)`` for the request it was selected for, or no request selects it.
    public func freshened(
        _ entry: HTTPCacheEntry, with notModified: HTTPResponse, requestTime: Date, responseTime: Date
    ) -> HTTPCacheEntry {
        var newer = notModified.headers
        if !newer.contains("Date") { newer.add(name: "Date", value: HTTPDate.format(responseTime)) }
        var updated = entry
        updated.response.headers = Self.updating(entry.response.headers, with: newer)
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        updated.freshnessLifetime = freshnessLifetime(of: updated.response, responseTime: responseTime)
        updated.initialAge = initialAge(of: notModified, requestTime: requestTime, responseTime: responseTime)
        return updated
    }

    /// Whether a `304` answering the validation of `entry` may update it (RFC 9111 §4.3.4): its `ETag`, or
    /// without one its `Last-Modified`, names the stored response's. A `304` naming another representation
    /// updates nothing (a stored body labelled with another validator would be validated as that one for
    /// ever); one without validators updates the response it validated.
    func notModified(_ notModified: HTTPResponse, identifies entry: HTTPCacheEntry) -> Bool {
        let name = notModified.headers.contains("ETag") ? "ETag" : "Last-Modified"
        guard let received = notModified.headers[name] else { return true }
        return entry.response.headers[name]?.trimmingCharacters(in: .whitespaces)
            == received.trimmingCharacters(in: .whitespaces)
    }

    /// `entry` updated by a `200` answering a `HEAD` for it (RFC 9111 §4.3.5), as ``freshened(_:with:requestTime:responseTime:)``
    /// updates it with a `304`; nil when the `HEAD` response shows the stored one is no longer the current
    /// representation: the stored status is not the `HEAD`'s (a stored `404`), an `ETag` or `Last-Modified` it
    /// carries differs from the stored one's (or the stored one has none), or its `Content-Length` differs from
    /// the stored body's length.
    func updated(
        _ entry: HTTPCacheEntry, byHeadResponse head: HTTPResponse, requestTime: Date, responseTime: Date
    ) -> HTTPCacheEntry? {
        guard entry.response.status == head.status else { return nil }
        for name in ["ETag", "Last-Modified"] {
            guard let received = head.headers[name] else { continue }
            guard let stored = entry.response.headers[name], stored == received else { return nil }
        }
        if let length = head.headers["Content-Length"] {
            let stored = entry.response.headers["Content-Length"] ?? String(entry.response.body.count)
            guard length.trimmingCharacters(in: .whitespaces) == stored.trimmingCharacters(in: .whitespaces) else {
                return nil
            }
        }
        return freshened(entry, with: head, requestTime: requestTime, responseTime: responseTime)
    }

    /// `updated`, a stored response whose header fields a `304` or a `HEAD`'s `200` replaced (RFC 9111 §3.2,
    /// §4.3.4, §4.3.5), keyed for `request`, the request it was selected for: its secondary key follows the
    /// `Vary` it now carries, so that request selects it again. Nil when it may no longer be stored (the update
    /// added `no-store` or `Vary: *`, or took its header section past ``maximumStoredHeaderBytes``).
    func storable(_ updated: HTTPCacheEntry, selectedBy request: HTTPRequest) -> HTTPCacheEntry? {
        var storing = request
        storing.method = .get
        guard isStorable(updated.response, for: storing),
            let variantKey = variantKey(for: storing, varyingOn: updated.response.headers)
        else { return nil }
        var keyed = updated
        keyed.variantKey = variantKey
        return keyed
    }

    /// True when `response`'s own fields forbid storing it, whatever this cache's limits: `no-store` (unless
    /// `must-understand` lets an understood status be stored), `Vary: *` (no request can select it), or a
    /// `Cache-Control` that cannot be parsed. A stored response that a `304` updates into such a response is
    /// removed, not kept as it was.
    func forbidsStoring(_ response: HTTPResponse) -> Bool {
        guard let directives = try? CacheControl(headers: response.headers) ?? CacheControl() else { return true }
        if directives.noStore {
            guard directives.contains("must-understand"), Self.understoodStatuses.contains(response.status) else {
                return true
            }
        }
        return response.headers.values(for: "Vary").contains { value in
            value.split(separator: ",").contains { Self.trimmed($0) == "*" }
        }
    }

    /// True when a `HEAD` answered with `status` (not `200`) shows that a `GET` would no longer get `entry`, the
    /// stored response the `HEAD` could have been answered from (a `HEAD` is answered as a `GET` would be,
    /// without content: RFC 9110 §9.3.2), so that `entry` is outdated: a status other than the stored one's,
    /// from 201 to 499, except `206` and `304` (neither says anything against it), `408` and `429` (failures of
    /// the moment, as every `5xx` is, after which the stored response still answers within `stale-if-error`).
    /// Only a `200` updates a stored response (RFC 9111 §4.3.5): a `410`'s fields are never merged into a
    /// stored `200`.
    func headAnswer(status: Int, outdates entry: HTTPCacheEntry) -> Bool {
        status != entry.response.status && (201..<500).contains(status) && ![206, 304, 408, 429].contains(status)
    }

    /// `stored` with every field `newer` carries replacing the stored fields of that name (RFC 9111 §3.2),
    /// except framing fields and the connection-specific ones a cache does not store. Linear in the fields of
    /// both (a 304 may carry thousands).
    private static func updating(_ stored: HTTPHeaders, with newer: HTTPHeaders) -> HTTPHeaders {
        let replacing = withoutHopByHopFields(newer).fields.filter { !framingFields.contains($0.name.lowercased()) }
        let replaced = Set(replacing.map { $0.name.lowercased() })
        return HTTPHeaders(stored.fields.filter { !replaced.contains($0.name.lowercased()) } + replacing)
    }

    // MARK: Combining partial content

    /// `stored` and `newer`, two 206 parts of one representation, combined into the whole as a 200 (RFC 9111
    /// §3.4), or nil unless both are single-part, carry the same strong `ETag` and the same complete length,
    /// and together hold every byte of it. The newer part's header fields replace the stored ones of the same
    /// name; the body is never larger than the two parts together.
    func combined(_ stored: HTTPResponse, with newer: HTTPResponse) -> HTTPResponse? {
        guard let storedRange = HTTPContentRange(of: stored), let newerRange = HTTPContentRange(of: newer),
            let length = storedRange.completeLength, newerRange.completeLength == length,
            let tag = strongEntityTag(of: stored.headers), strongEntityTag(of: newer.headers) == tag,
            min(storedRange.range.lowerBound, newerRange.range.lowerBound) == 0,
            max(storedRange.range.upperBound, newerRange.range.upperBound) == length - 1,
            storedRange.range.upperBound + 1 >= newerRange.range.lowerBound,
            newerRange.range.upperBound + 1 >= storedRange.range.lowerBound
        else { return nil }
        var body = Data(count: length)
        body.replaceSubrange(storedRange.range.lowerBound..<(storedRange.range.upperBound + 1), with: stored.body)
        body.replaceSubrange(newerRange.range.lowerBound..<(newerRange.range.upperBound + 1), with: newer.body)
        var headers = Self.updating(stored.headers, with: newer.headers)
        headers.remove("Content-Range")
        if headers.contains("Content-Length") { headers["Content-Length"] = String(length) }
        return HTTPResponse(status: 200, headers: headers, body: body, url: newer.url ?? stored.url)
    }

    /// `headers` without the fields a cache must not store (RFC 9111 §3.1): the connection-specific fields
    /// of RFC 9110 §7.6.1 and every field `Connection` names.
    public static func withoutHopByHopFields(_ headers: HTTPHeaders) -> HTTPHeaders {
        var named = hopByHopFields
        for value in headers.values(for: "Connection") {
            for name in value.split(separator: ",") {
                named.insert(name.trimmingCharacters(in: .whitespaces).lowercased())
            }
        }
        guard headers.contains(where: { named.contains($0.name.lowercased()) }) else { return headers }
        return HTTPHeaders(headers.fields.filter { !named.contains($0.name.lowercased()) })
    }

    private static let hopByHopFields: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "proxy-authenticate",
        "proxy-authentication-info", "proxy-authorization",
    ]

    private static let framingFields: Set<String> = [
        "content-length", "content-encoding", "transfer-encoding", "content-range", "connection",
    ]

    // MARK: Invalidating

    /// The keys a non-error response to an unsafe `request` invalidates (RFC 9111 §4.4): the target URI and
    /// the same-origin URIs in `Location` and `Content-Location`. Empty for safe methods and error statuses.
    public func invalidatedKeys(by request: HTTPRequest, response: HTTPResponse) -> [String] {
        guard !Self.safeMethods.contains(request.method), (200..<400).contains(response.status) else { return [] }
        let target = Self.key(for: request.url)
        var keys = [target]
        for name in ["Location", "Content-Location"] {
            guard let value = response.headers[name],
                let url = URL(string: value, relativeTo: request.url)?.absoluteURL
            else { continue }
            let key = Self.key(for: url)
            // Same origin: the same scheme, host and port, compared in the keys' normal form.
            guard Self.origin(ofKey: key) == Self.origin(ofKey: target), !keys.contains(key) else { continue }
            keys.append(key)
        }
        return keys
    }

    private static let safeMethods: Set<HTTPMethod> = [.get, .head, .options, HTTPMethod(rawValue: "TRACE")]
}
