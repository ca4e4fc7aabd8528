import Foundation
import ResilienceCore

/// A private HTTP cache (RFC 9111) around any ``HTTPTransport``.
///
/// Answers `GET` (and `HEAD`) from a fresh stored response, revalidates a stale one with `If-None-Match` /
/// `If-Modified-Since` (a `304` freshens the stored headers and is answered with the stored response, unless
/// its `ETag` or `Last-Modified` names another representation: then the request is sent again unconditionally; a
/// `HEAD`'s `200` freshens them too, and is answered with them, when its `ETag`, `Last-Modified` and
/// `Content-Length` agree, else removes it, as a `HEAD`'s `404`, `410` or redirect does),
/// honours `Vary`, `no-store`, `no-cache`, `must-revalidate`, `max-age`, `Expires`, `Age`, heuristic
/// freshness and the request's `max-age`, `max-stale`, `min-fresh`, `no-cache`, `no-store` and
/// `only-if-cached`, serves within `stale-while-revalidate` while revalidating in the background, and lets
/// a successful unsafe request (`POST`, `PUT`, `DELETE`, `PATCH` …) invalidate its target and same-origin
/// `Location` / `Content-Location`. Being private, it stores `private` responses and ignores `s-maxage`.
///
/// **A resilience fallback.** Wrap the pipeline (`CachingTransport(wrapping: ResilientTransport(…))`): when
/// the wrapped transport throws (what its retries could not recover) or answers 500, 502, 503 or 504, and
/// the stored response's (or request's) `stale-if-error` covers its staleness, the stored response answers
/// instead.
///
/// **Cache-Status** (RFC 9211, read it with ``HTTPCacheStatus``). Every answer carries a member saying what
/// the cache did: `hit` when storage answered without the origin; otherwise `fwd` (why the request went on:
/// `uri-miss`, `vary-miss`, `stale`, `request`, `partial`, `method` for an unsafe method, `bypass` when a
/// malformed `Cache-Control` made the cache step aside), `fwd-status` (what the origin answered, `304` for a
/// revalidation) and `stored` when the answer was stored. An answer built from a stored
/// response also carries `Age` and a `ttl` that is negative when it is stale, by how much.
///
/// **Range requests** (RFC 9110 §14, RFC 9111 §3.3–3.4). A `GET` for one byte range is answered with
/// `206 Partial Content` from a stored complete `200`, or from a stored part that holds those bytes. A
/// single-range `206` is stored (never over the whole representation it belongs to), and a request for the
/// whole representation is never answered from a part: the cache asks the origin for the missing bytes
/// (with `If-Range` when the part has a strong `ETag`) and combines the two only when they share that strong
/// validator and length, else it fetches the whole.
///
/// A store that fails is treated as a miss (the request goes to the origin, and its answer is not stored), and
/// each failed call to it is reported to the context's telemetry as ``ResilienceEventKind/cacheStoreFailed``, so a
/// full disk or a lost database shows instead of passing as a cold cache; a cancelled request is never answered
/// from the cache.
public struct CachingTransport: HTTPTransport {
    /// The name this cache writes in `Cache-Status`.
    public static let cacheName = HTTPCacheStatus.libraryCacheName

    /// The transport requests go to when the cache cannot answer.
    public let wrapped: any HTTPTransport
    /// Where responses are kept.
    public let store: any HTTPCacheStore
    /// The caching rules.
    public let policy: HTTPCachePolicy
    /// The wall clock (`Date`, `Expires` and ages are wall-clock times).
    public let wallClock: @Sendable () -> Date
    /// The stored responses (key and variant) being revalidated in the background: one revalidation at a
    /// time each, however many requests `stale-while-revalidate` answers meanwhile. Shared by copies.
    private let backgroundRevalidations = LockedState<Set<String>>(initialState: [])

    /// Creates a caching transport.
    ///
    /// - Parameters:
    ///   - wrapped: The transport requests go to when the cache cannot answer.
    ///   - store: Where responses are kept. Default: an ``InMemoryHTTPCacheStore`` of 16 MiB.
    ///   - policy: The caching rules. Default: ``HTTPCachePolicy/init(heuristicFraction:maximumHeuristicLifetime:maximumStoredBodyBytes:maximumStoredHeaderBytes:maximumVaryNames:)``.
    ///   - wallClock: The wall clock. Default: `Date()`.
    public init(
        wrapping wrapped: any HTTPTransport, store: any HTTPCacheStore = InMemoryHTTPCacheStore(),
        policy: HTTPCachePolicy = HTTPCachePolicy(), wallClock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.wrapped = wrapped
        self.store = store
        self.policy = policy
        self.wallClock = wallClock
    }

    /// Answers `request` from the cache when the rules allow, else sends it on and stores the response.
    public func send(_ request: HTTPRequest, context: ResilienceContext) async throws -> HTTPResponse {
        guard request.method == .get || request.method == .head else {
            let response = try await wrapped.send(request, context: context)
            for key in policy.invalidatedKeys(by: request, response: response) {
                reporting("remove", to: context) { () throws(HTTPCacheStoreError) in
                    try store.removeEntries(forKey: key)
                }
            }
            return forwarded(response, reason: "method")
        }
        guard var requestDirectives = try? CacheControl(headers: request.headers) ?? CacheControl() else {
            return forwarded(try await wrapped.send(request, context: context), reason: "bypass")
        }
        if !request.headers.contains("Cache-Control"),
            request.headers.values(for: "Pragma").contains(where: { $0.lowercased().contains("no-cache") })
        {
            requestDirectives.directives.append(CacheControl.Directive(name: "no-cache"))
        }
        if requestDirectives.noStore {
            return forwarded(try await wrapped.send(request, context: context), reason: "request")
        }

        let key = HTTPCachePolicy.key(for: request.url)
        let stored =
            reporting("read", to: context) { () throws(HTTPCacheStoreError) in try store.entries(forKey: key) } ?? []
        let selected = stored.filter { $0.isSelected(by: request) }
        // A stored partial (206) response answers only a range request for bytes it holds; a request for the
        // whole representation is never answered from one.
        let candidate =
            selected.first { $0.response.status != 206 } ?? selected.first { rangeAnswer(from: $0, to: request) != nil }
        // Why the request goes on, if it does (RFC 9211 §2.2).
        var reason = stored.isEmpty ? "uri-miss" : selected.isEmpty ? "vary-miss" : "partial"
        if let candidate {
            let now = wallClock()
            // A response fresh by its own rules that the request's directives refuse went on for the request.
            let freshByItself = policy.reuse(candidate, requestDirectives: CacheControl(), now: now) == .fresh
            reason = freshByItself ? "request" : "stale"
            switch policy.reuse(candidate, requestDirectives: requestDirectives, now: now) {
            case .fresh:
                return answer(from: candidate, to: request, now: now, detail: nil)
            case .staleAllowedByRequest:
                return answer(from: candidate, to: request, now: now, detail: "max-stale")
            case .staleWhileRevalidate:
                // `only-if-cached` asks for no network at all, so it is answered without revalidating.
                let flight = candidate.key + " " + candidate.variantKey
                if !requestDirectives.onlyIfCached, backgroundRevalidations.withLock({ $0.insert(flight).inserted }) {
                    let revalidation = policy.validationRequest(for: request, entry: candidate)
                    Task { [self] in
                        defer { _ = backgroundRevalidations.withLock { $0.remove(flight) } }
                        _ = try? await self.forward(
                            revalidation, original: request, candidate: candidate,
                            requestDirectives: requestDirectives, reason: "stale", context: context)
                    }
                }
                return answer(from: candidate, to: request, now: now, detail: "stale-while-revalidate")
            case .validate:
                break
            }
        }
        if requestDirectives.onlyIfCached {
            // Not forwarded, and no stored response answers: the status says only why the cache answered 504.
            let status = HTTPCacheStatus(cacheName: Self.cacheName, isHit: false, detail: "only-if-cached")
            return HTTPResponse(status: 504, headers: [HTTPCacheStatus.fieldName: status.fieldValue], url: request.url)
        }
        if candidate == nil, request.method == .get, !request.headers.contains("Range"),
            let partial = selected.first(where: { $0.response.status == 206 }),
            let completion = completion(of: partial, for: request)
        {
            return try await complete(
                partial, with: completion, request: request, requestDirectives: requestDirectives, context: context)
        }
        let outgoing =
            candidate.map { policy.validationRequest(for: request, entry: $0) } ?? request
        return try await forward(
            outgoing, original: request, candidate: candidate, requestDirectives: requestDirectives, reason: reason,
            context: context)
    }

    /// Sends `outgoing` (`request`, or its validation for `candidate`) and answers `request`. `reason` is why it
    /// went on, the `fwd` of the `Cache-Status` the answer carries.
    private func forward(
        _ outgoing: HTTPRequest, original request: HTTPRequest, candidate: HTTPCacheEntry?,
        requestDirectives: CacheControl, reason: String, context: ResilienceContext
    ) async throws -> HTTPResponse {
        let requestTime = wallClock()
        let response: HTTPResponse
        do {
            response = try await wrapped.send(outgoing, context: context)
        } catch {
            if error is CancellationError || Task.isCancelled { throw error }
            if let stale = staleAnswer(
                candidate, to: request, requestDirectives: requestDirectives, reason: reason, forwardStatus: nil)
            {
                return stale
            }
            throw error
        }
        let responseTime = wallClock()
        if response.status == 304, outgoing != request, let candidate {
            guard policy.notModified(response, identifies: candidate) else {
                // Another representation is current: the caller asked for the whole, so it is fetched.
                return try await forward(
                    request, original: request, candidate: nil, requestDirectives: requestDirectives, reason: reason,
                    context: context)
            }
            let updated = policy.freshened(
                candidate, with: response, requestTime: requestTime, responseTime: responseTime)
            // The freshened response is stored only if it still may be. A 304 that forbids storing it (`no-store`,
            // `Vary: *`) removes the stored response, which no stale answer (`stale-if-error`) may serve after the
            // origin said so; one that takes the fields past our own header limit leaves it as it was. A HEAD's
            // 304 freshens the stored GET response.
            var isStored = false
            if let stored = policy.storable(updated, selectedBy: request) {
                isStored = replace(candidate, with: stored, context: context)
            } else if policy.forbidsStoring(updated.response) {
                removeReporting(candidate, to: context)
            }
            return answer(
                from: updated, to: request, now: responseTime, detail: nil, forward: (reason, 304), stored: isStored)
        }
        if [500, 502, 503, 504].contains(response.status),
            let stale = staleAnswer(
                candidate, to: request, requestDirectives: requestDirectives, reason: reason,
                forwardStatus: response.status)
        {
            return stale
        }
        if request.method == .head, let candidate, candidate.response.status != 206 {
            // RFC 9111 §4.3.5: a HEAD's 200 updates the stored GET response it could have been answered from
            // when its validators and length agree, and the HEAD is answered with that response's fields, as a
            // 304 is; otherwise, or when another status shows a GET would no longer get it (a 404, a 410, a
            // redirect), that response is outdated: it goes, so that no fresh or stale answer (`stale-if-error`,
            // `max-stale`) serves a representation known to be gone. Only the stored response the HEAD selected
            // is concerned: the URL's other variants (another `Vary` selection) stay.
            if response.status == 200 {
                if let updated = policy.updated(
                    candidate, byHeadResponse: response, requestTime: requestTime, responseTime: responseTime),
                    let stored = policy.storable(updated, selectedBy: request)
                {
                    let isStored = replace(candidate, with: stored, context: context)
                    return answer(
                        from: stored, to: request, now: responseTime, detail: nil, forward: (reason, 200),
                        stored: isStored)
                }
                removeReporting(candidate, to: context)
            } else if policy.headAnswer(status: response.status, outdates: candidate) {
                removeReporting(candidate, to: context)
            }
        }
        if request.method == .get,
            let entry = policy.entry(
                for: response, to: request, requestTime: requestTime, responseTime: responseTime),
            entry.response.status != 206 || !holdsCompleteResponse(like: entry, context: context)
        {
            return forwarded(response, reason: reason, stored: storeReporting(entry, to: context))
        }
        return forwarded(response, reason: reason)
    }

    /// Stores `updated` in place of `candidate`, the stored response it updates, under the secondary key its
    /// `Vary` now gives (a `304` may change `Vary`), so no copy stays under the old key, which no request would
    /// select again. True when the store took it.
    private func replace(
        _ candidate: HTTPCacheEntry, with updated: HTTPCacheEntry, context: ResilienceContext
    ) -> Bool {
        if updated.variantKey != candidate.variantKey {
            removeReporting(candidate, to: context)
        }
        return storeReporting(updated, to: context)
    }

    /// Runs one call to the store. When it throws, the failure goes to the context's telemetry as
    /// ``ResilienceEventKind/cacheStoreFailed`` (`detail`: the call, `read`, `store` or `remove`, the error's
    /// reason and its message) and the answer is `nil`: the request goes on as a miss, and nothing is stored.
    @discardableResult
    private func reporting<Result>(
        _ call: String, to context: ResilienceContext, _ body: () throws(HTTPCacheStoreError) -> Result
    ) -> Result? {
        do {
            return try body()
        } catch {
            context.emit(.cacheStoreFailed) { $0.detail = "\(call) \(error.reason.rawValue): \(error.message)" }
            return nil
        }
    }

    /// Stores `entry`, reporting a failure (`reporting(_:to:_:)`); true when the store took it.
    private func storeReporting(_ entry: HTTPCacheEntry, to context: ResilienceContext) -> Bool {
        reporting("store", to: context) { () throws(HTTPCacheStoreError) in try store.store(entry) } != nil
    }

    /// Removes the stored response `entry` (its key and variant), reporting a failure (`reporting(_:to:_:)`).
    private func removeReporting(_ entry: HTTPCacheEntry, to context: ResilienceContext) {
        reporting("remove", to: context) { () throws(HTTPCacheStoreError) in
            try store.removeEntry(forKey: entry.key, variantKey: entry.variantKey)
        }
    }

    /// True when the store holds the whole representation `partial` is a part of (same variant, same strong
    /// validator, or neither has one): a part must not replace it.
    private func holdsCompleteResponse(like partial: HTTPCacheEntry, context: ResilienceContext) -> Bool {
        let tag = strongEntityTag(of: partial.response.headers)
        let stored = reporting("read", to: context) { () throws(HTTPCacheStoreError) in
            try store.entries(forKey: partial.key)
        }
        return (stored ?? []).contains { stored in
            stored.variantKey == partial.variantKey && stored.response.status != 206
                && strongEntityTag(of: stored.response.headers) == tag
        }
    }

    /// The `Range` request that fetches what `partial` lacks when it holds one end of a representation of
    /// known length (RFC 9111 §3.4), with `If-Range` when it has a strong validator; nil when it holds a
    /// middle part or its length is unknown.
    private func completion(of partial: HTTPCacheEntry, for request: HTTPRequest) -> HTTPRequest? {
        guard let stored = HTTPContentRange(of: partial.response), let length = stored.completeLength else {
            return nil
        }
        let missing: HTTPByteRangeSpec
        if stored.range.lowerBound == 0, stored.range.upperBound < length - 1 {
            missing = .span(first: stored.range.upperBound + 1, last: nil)
        } else if stored.range.upperBound == length - 1, stored.range.lowerBound > 0 {
            missing = .span(first: 0, last: stored.range.lowerBound - 1)
        } else {
            return nil
        }
        var outgoing = request
        outgoing.headers["Range"] = missing.fieldValue
        if let tag = strongEntityTag(of: partial.response.headers) { outgoing.headers["If-Range"] = tag }
        return outgoing
    }

    /// Sends `completion` for what `partial` lacks and answers the full `request`: the two parts combined
    /// when the origin sends the missing range of the same representation (same strong validator, same
    /// length), the origin's answer as it is when it sends anything but a 206 or a 416, and otherwise the full
    /// request sent again, because parts that cannot be proven to belong together are never combined.
    private func complete(
        _ partial: HTTPCacheEntry, with completion: HTTPRequest, request: HTTPRequest, requestDirectives: CacheControl,
        context: ResilienceContext
    ) async throws -> HTTPResponse {
        let requestTime = wallClock()
        let response = try await wrapped.send(completion, context: context)
        let responseTime = wallClock()
        if response.status == 416 {
            // The representation no longer has the bytes the part lacks: it changed, so fetch the whole.
            return try await forward(
                request, original: request, candidate: nil, requestDirectives: requestDirectives, reason: "partial",
                context: context)
        }
        guard response.status == 206 else {
            if let entry = policy.entry(
                for: response, to: request, requestTime: requestTime, responseTime: responseTime)
            {
                return forwarded(response, reason: "partial", stored: storeReporting(entry, to: context))
            }
            return forwarded(response, reason: "partial")
        }
        guard let combined = policy.combined(partial.response, with: response) else {
            return try await forward(
                request, original: request, candidate: nil, requestDirectives: requestDirectives, reason: "partial",
                context: context)
        }
        var isStored = false
        if let entry = policy.entry(for: combined, to: request, requestTime: requestTime, responseTime: responseTime) {
            isStored = storeReporting(entry, to: context)
        }
        return forwarded(combined, reason: "partial", status: 206, stored: isStored)
    }

    /// The part of `entry` that answers `request`'s single byte range, or nil when the request asks for no
    /// range, for several, names a validator in `If-Range` the entry does not have, or asks for bytes the
    /// entry does not hold (RFC 9110 §14.2, §13.1.5).
    private func rangeAnswer(
        from entry: HTTPCacheEntry, to request: HTTPRequest
    ) -> (
        body: Data, contentRange: HTTPContentRange
    )? {
        guard case .single(let spec) = HTTPRangeRequest(request) else { return nil }
        if let ifRange = request.headers["If-Range"] {
            guard let tag = strongEntityTag(of: entry.response.headers),
                ifRange.trimmingCharacters(in: .whitespaces) == tag
            else { return nil }
        }
        let body = entry.response.body
        let wanted: ClosedRange<Int>
        let holds: HTTPContentRange
        if entry.response.status == 206 {
            guard let stored = HTTPContentRange(of: entry.response), let covered = stored.covering(spec) else {
                return nil
            }
            wanted = covered
            holds = stored
        } else {
            guard entry.response.status == 200, let resolved = spec.resolved(completeLength: body.count) else {
                return nil
            }
            wanted = resolved
            holds = HTTPContentRange(range: 0...(body.count - 1), completeLength: body.count)
        }
        let start = body.startIndex + (wanted.lowerBound - holds.range.lowerBound)
        return (
            body[start..<(start + wanted.count)], HTTPContentRange(range: wanted, completeLength: holds.completeLength)
        )
    }

    /// The stored response answering `request` after the origin failed (`forwardStatus` nil when it threw),
    /// when `stale-if-error` allows; nil otherwise.
    private func staleAnswer(
        _ candidate: HTTPCacheEntry?, to request: HTTPRequest, requestDirectives: CacheControl, reason: String,
        forwardStatus: Int?
    ) -> HTTPResponse? {
        let now = wallClock()
        guard let candidate, policy.allowsStaleIfError(candidate, requestDirectives: requestDirectives, now: now)
        else { return nil }
        return answer(
            from: candidate, to: request, now: now, detail: "stale-if-error", forward: (reason, forwardStatus))
    }

    /// `entry` answering `request` (its range, no body for a `HEAD`) with `Age` and a `Cache-Status` member:
    /// a `hit` when `forward` is nil, else what the request went forward for and the status it got (RFC 9211).
    private func answer(
        from entry: HTTPCacheEntry, to request: HTTPRequest, now: Date, detail: String?,
        forward: (reason: String, status: Int?)? = nil, stored: Bool = false
    ) -> HTTPResponse {
        var response = entry.response
        if let part = rangeAnswer(from: entry, to: request) {
            response.status = 206
            response.body = Data(part.body)
            response.headers["Content-Range"] = part.contentRange.fieldValue
            if response.headers.contains("Content-Length") {
                response.headers["Content-Length"] = String(part.body.count)
            }
        }
        let age = entry.age(at: now)
        response.headers["Age"] = String(Int(min(age, Double(CacheControl.maximumDeltaSeconds))))
        let timeToLive = entry.freshnessLifetime - age
        let status = HTTPCacheStatus(
            cacheName: Self.cacheName, isHit: forward == nil, forwardReason: forward?.reason,
            forwardStatus: forward?.status,
            timeToLive: Int(timeToLive.rounded(.down).clamped(to: -2_147_483_648...2_147_483_648)), stored: stored,
            detail: detail)
        response.headers.add(name: HTTPCacheStatus.fieldName, value: status.fieldValue)
        if request.method == .head { response.body = Data() }
        if response.url == nil { response.url = request.url }
        return response
    }

    /// `response`, which the origin sent (`status` its status, when it differs from the answer's), with a
    /// `Cache-Status` member saying why the request went forward and whether the answer was stored.
    private func forwarded(
        _ response: HTTPResponse, reason: String, status: Int? = nil, stored: Bool = false
    ) -> HTTPResponse {
        var response = response
        let cacheStatus = HTTPCacheStatus(
            cacheName: Self.cacheName, isHit: false, forwardReason: reason, forwardStatus: status ?? response.status,
            stored: stored)
        response.headers.add(name: HTTPCacheStatus.fieldName, value: cacheStatus.fieldValue)
        return response
    }
}

extension Double {
    fileprivate func clamped(to range: ClosedRange<Double>) -> Double {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}
