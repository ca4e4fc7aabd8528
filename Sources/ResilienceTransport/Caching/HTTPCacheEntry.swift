import Foundation
import ResilienceCore

/// One stored response and what the cache computed about it when it arrived.
///
/// Entries are keyed by ``key`` (the request's normalised URL without fragment) and, within a key, by ``variantKey``
/// (the values of the request headers the response's `Vary` names), so a URL may keep several variants.
public struct HTTPCacheEntry: Hashable, Sendable {
    /// The primary cache key: the request URL as ``HTTPCachePolicy/key(for:)`` normalises it.
    public var key: String
    /// The secondary key: the selecting request headers' values, as ``HTTPCachePolicy/variantKey(for:varyingOn:)``
    /// writes them.
    public var variantKey: String
    /// The stored response (status, headers, full body).
    public var response: HTTPResponse {
        didSet {
            directives = Self.directives(of: response)
            selectingFieldNames = Self.namesPolicy.selectingFieldNames(of: response.headers)
        }
    }
    /// The response's `Cache-Control`, parsed once (`nil` when it was rejected as too long).
    private(set) var directives: CacheControl?
    /// The request fields its `Vary` names, read once (`nil` when it can never be selected).
    private(set) var selectingFieldNames: [String]?
    /// When the request that produced (or last validated) the response was sent.
    public var requestTime: Date
    /// When that response arrived.
    public var responseTime: Date
    /// Its freshness lifetime in seconds (RFC 9111 §4.2.1), explicit or heuristic.
    public var freshnessLifetime: Double
    /// Its corrected initial age in seconds (RFC 9111 §4.2.3).
    public var initialAge: Double

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - key: The primary cache key.
    ///   - variantKey: The secondary key for `Vary`.
    ///   - response: The stored response.
    ///   - requestTime: When the request was sent.
    ///   - responseTime: When the response arrived.
    ///   - freshnessLifetime: The freshness lifetime in seconds.
    ///   - initialAge: The corrected initial age in seconds.
    public init(
        key: String, variantKey: String, response: HTTPResponse, requestTime: Date, responseTime: Date,
        freshnessLifetime: Double, initialAge: Double
    ) {
        self.key = key
        self.variantKey = variantKey
        self.response = response
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.freshnessLifetime = freshnessLifetime
        self.initialAge = initialAge
        directives = Self.directives(of: response)
        selectingFieldNames = Self.namesPolicy.selectingFieldNames(of: response.headers)
    }

    /// True when `request` selects this entry: its `Vary` fields have the values this entry was stored with.
    public func isSelected(by request: HTTPRequest) -> Bool {
        guard let selectingFieldNames else { return false }
        if selectingFieldNames.isEmpty { return variantKey.isEmpty }
        return HTTPCachePolicy.variantKey(for: request, selectingFieldNames: selectingFieldNames) == variantKey
    }

    /// Reads `Vary` for selection only: whether the names were few enough to store was the storing policy's call.
    private static let namesPolicy = HTTPCachePolicy(maximumVaryNames: .max)

    private static func directives(of response: HTTPResponse) -> CacheControl? {
        try? CacheControl(headers: response.headers) ?? CacheControl()
    }

    /// The bytes the entry costs a store's budget: body, header fields and keys, plus
    /// ``bookkeepingByteCount`` for what holding an entry costs beyond them.
    public var byteCount: Int {
        Self.bookkeepingByteCount + response.body.count + key.utf8.count + variantKey.utf8.count
            + response.headers.fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
    }

    /// What one stored entry costs besides its bytes of content (the response, its URL, parsed directives, the
    /// store's own records): 800 bytes, about what an empty-bodied entry was measured to take in memory (823
    /// bytes each for 60,000). Without it a budget filled with small responses held 13 times its size.
    public static let bookkeepingByteCount = 800

    /// The current age in seconds at `now` (RFC 9111 §4.2.3).
    public func age(at now: Date) -> Double { initialAge + max(0, now.timeIntervalSince(responseTime)) }
}
