import Foundation
import ResilienceCore

/// A private HTTP cache (RFC 9111) around any ``HTTPTransport``.
///
/// Answers `GET` (and `HEAD`) from a fresh stored response, revalidates a stale one with `If-None-Match` /
/// `If-Modified-Since` (a `304` freshens the stored headers and is answered with the stored response),
/// honours `Vary`, `no-store`, `no-cache`, `must-revalidate`, `max-age`, `Expires`, `Age`, heuristic
/// freshness and the request's `max-age`, `max-stale`, `min-fresh`, `no-cache`, `no-store` and
/// `only-if-cached`, serves within `stale-while-revalidate` while revalidating in the background, and lets
/// a successful unsafe request (`POST`, `PUT`, `DELETE`, `PATCH` …) invalidate its target and same-origin
/// `Location` / `Content-Location`. Being private, it stores `private` responses and ignores `s-maxage`.
///
/// **A resilience fallback.** Wrap the pipeline (`CachingTransport(wrapping: ResilientTransport(…))`): when
/// the wrapped transport throws (what its retries could not recover) or answers 500, 502, 503 or 504, and
/// the stored response's (or request's) `stale-if-error` covers its staleness, the stored response answers
/// instead. Every response answered from storage carries an `Age` field and a `Cache-Status` field
/// (RFC 9211, read it with ``HTTPCacheStatus``) whose negative `ttl` says it is stale and by how much.
///
/// A store that fails is treated as a miss; a cancelled request is never answered from the cache.
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
                try? store.removeEntries(forKey: key)
            }
            return response
        }
        guard var requestDirectives = try? CacheControl(headers: request.headers) ?? CacheControl() else {
            return try await wrapped.send(request, context: context)
        }
        if !request.headers.contains("Cache-Control"),
            request.headers.values(for: "Pragma").contains(where: { $0.lowercased().contains("no-cache") })
        {
            requestDirectives.directives.append(CacheControl.Directive(name: "no-cache"))
        }
        if requestDirectives.noStore { return try await wrapped.send(request, context: context) }

        let key = HTTPCachePolicy.key(for: request.url)
        let stored = (try? store.entries(forKey: key)) ?? []
        let candidate = stored.first { $0.isSelected(by: request) }
        if let candidate {
            let now = wallClock()
            switch policy.reuse(candidate, requestDirectives: requestDirectives, now: now) {
            case .fresh:
                return answer(from: candidate, to: request, now: now, detail: nil)
            case .staleAllowedByRequest:
                return answer(from: candidate, to: request, now: now, detail: "max-stale")
            case .staleWhileRevalidate:
                let revalidation = policy.validationRequest(for: request, entry: candidate)
                Task { [self] in
                    _ = try? await self.forward(
                        revalidation, original: request, candidate: candidate, requestDirectives: requestDirectives,
                        context: context)
                }
                return answer(from: candidate, to: request, now: now, detail: "stale-while-revalidate")
            case .validate:
                break
            }
        }
        if requestDirectives.onlyIfCached {
            return HTTPResponse(
                status: 504, headers: [HTTPCacheStatus.fieldName: cacheStatus(hit: false, forward: "miss").fieldValue],
                url: request.url)
        }
        let outgoing =
            candidate.map { policy.validationRequest(for: request, entry: $0) } ?? request
        return try await forward(
            outgoing, original: request, candidate: candidate, requestDirectives: requestDirectives, context: context)
    }

    private func forward(
        _ outgoing: HTTPRequest, original request: HTTPRequest, candidate: HTTPCacheEntry?,
        requestDirectives: CacheControl, context: ResilienceContext
    ) async throws -> HTTPResponse {
        let requestTime = wallClock()
        let response: HTTPResponse
        do {
            response = try await wrapped.send(outgoing, context: context)
        } catch {
            if error is CancellationError || Task.isCancelled { throw error }
            if let stale = staleAnswer(candidate, to: request, requestDirectives: requestDirectives) { return stale }
            throw error
        }
        let responseTime = wallClock()
        if response.status == 304, outgoing != request, let candidate {
            let updated = policy.freshened(
                candidate, with: response, requestTime: requestTime, responseTime: responseTime)
            if !requestDirectives.noStore { try? store.store(updated) }
            return answer(from: updated, to: request, now: responseTime, detail: nil, forwardStatus: 304)
        }
        if [500, 502, 503, 504].contains(response.status),
            let stale = staleAnswer(candidate, to: request, requestDirectives: requestDirectives)
        {
            return stale
        }
        if request.method == .get,
            let entry = policy.entry(
                for: response, to: request, requestTime: requestTime, responseTime: responseTime)
        {
            try? store.store(entry)
        }
        return response
    }

    private func staleAnswer(
        _ candidate: HTTPCacheEntry?, to request: HTTPRequest, requestDirectives: CacheControl
    ) -> HTTPResponse? {
        let now = wallClock()
        guard let candidate, policy.allowsStaleIfError(candidate, requestDirectives: requestDirectives, now: now)
        else { return nil }
        return answer(from: candidate, to: request, now: now, detail: "stale-if-error")
    }

    private func answer(
        from entry: HTTPCacheEntry, to request: HTTPRequest, now: Date, detail: String?, forwardStatus: Int? = nil
    ) -> HTTPResponse {
        var response = entry.response
        let age = entry.age(at: now)
        response.headers["Age"] = String(Int(min(age, Double(CacheControl.maximumDeltaSeconds))))
        let timeToLive = entry.freshnessLifetime - age
        let status = HTTPCacheStatus(
            cacheName: Self.cacheName, isHit: true, forwardReason: forwardStatus == nil ? nil : "stale",
            forwardStatus: forwardStatus,
            timeToLive: Int(timeToLive.rounded(.down).clamped(to: -2_147_483_648...2_147_483_648)),
            detail: detail)
        response.headers.add(name: HTTPCacheStatus.fieldName, value: status.fieldValue)
        if request.method == .head { response.body = Data() }
        if response.url == nil { response.url = request.url }
        return response
    }

    private func cacheStatus(hit: Bool, forward: String) -> HTTPCacheStatus {
        HTTPCacheStatus(cacheName: Self.cacheName, isHit: hit, forwardReason: forward)
    }
}

extension Double {
    fileprivate func clamped(to range: ClosedRange<Double>) -> Double {
        Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
    }
}
