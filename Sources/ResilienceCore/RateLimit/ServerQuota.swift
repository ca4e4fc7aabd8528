import Foundation

/// A quota a server advertised in a response's headers: how many requests are left and when the window
/// resets. It travels from the transport (which parses it from every response) to a quota-pacing limiter
/// through the context's ``ResilienceContext/quotaObserver``.
///
/// Understood, in this order:
/// - the IETF RateLimit fields: `RateLimit: "default";r=0;t=10` (structured field; the most restrictive
///   policy wins) with `RateLimit-Policy: "default";q=100;w=60` for the limit and window, and the older
///   draft's `RateLimit: limit=100, remaining=0, reset=30`;
/// - `RateLimit-Remaining` / `RateLimit-Reset` / `RateLimit-Limit`;
/// - `X-RateLimit-Remaining` / `X-RateLimit-Reset` (delta-seconds, or a Unix time when ≥ 1,000,000,000)
///   / `X-RateLimit-Limit`, as GitHub and many others send.
///
/// Values must be plain non-negative integers; anything else is ignored, never a crash.
public struct ServerQuota: Hashable, Sendable, CustomStringConvertible {
    /// Requests left in the current window.
    public var remaining: Int
    /// Time until the window resets (and ``remaining`` is replenished), when the server said.
    public var resetAfter: Duration?
    /// The window's request limit, when the server said.
    public var limit: Int?

    /// The longest reset accepted; larger values are clamped to it.
    public static let maximumReset: Duration = .seconds(86_400)

    /// Creates a quota.
    /// - Parameters:
    ///   - remaining: requests left in the current window.
    ///   - resetAfter: time until the window resets.
    ///   - limit: the window's request limit.
    public init(remaining: Int, resetAfter: Duration? = nil, limit: Int? = nil) {
        self.remaining = max(0, remaining)
        self.resetAfter = resetAfter.map { min(max($0, .zero), Self.maximumReset) }
        self.limit = limit
    }

    /// Parses the quota from response headers, or nil when they advertise none.
    /// - Parameters:
    ///   - headers: the response's header fields.
    ///   - responseDate: the response's `Date`, if known, against which a Unix-time reset is measured.
    ///   - now: the wall clock, used for a Unix-time reset when `responseDate` is nil.
    public init?(headers: HTTPHeaders, responseDate: Date? = nil, now: Date) {
        if let value = headers.combinedValue(for: "RateLimit"),
            let quota = Self.rateLimitField(value, policy: headers.combinedValue(for: "RateLimit-Policy"))
        {
            self = quota
            return
        }
        for prefix in ["RateLimit-", "X-RateLimit-"] {
            guard let remaining = headers.combinedValue(for: prefix + "Remaining").flatMap(Self.integer) else {
                continue
            }
            let reset = headers.combinedValue(for: prefix + "Reset").flatMap(Self.integer).map { value in
                Self.reset(value, allowsUnixTime: prefix == "X-RateLimit-", responseDate: responseDate, now: now)
            }
            self.init(
                remaining: remaining, resetAfter: reset,
                limit: headers.combinedValue(for: prefix + "Limit").flatMap(Self.integer))
            return
        }
        return nil
    }

    /// `remaining 0 of 100, reset in 10 seconds`.
    public var description: String {
        var text = "remaining \(remaining)"
        if let limit { text += " of \(limit)" }
        if let resetAfter { text += ", reset in \(resetAfter)" }
        return text
    }

    /// A non-negative integer of at most 12 digits (the first of comma-merged duplicates), else nil.
    static func integer(_ text: some StringProtocol) -> Int? {
        let whole = String(text)
        let first = whole.firstIndex(of: ",").map { String(whole[..<$0]) } ?? whole
        let trimmed = first.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 12, trimmed.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 })
        else { return nil }
        return Int(trimmed)
    }

    private static func reset(_ value: Int, allowsUnixTime: Bool, responseDate: Date?, now: Date) -> Duration {
        guard allowsUnixTime, value >= 1_000_000_000 else { return .seconds(value) }
        let seconds = Date(timeIntervalSince1970: TimeInterval(value)).timeIntervalSince(responseDate ?? now)
        guard seconds > 0 else { return .zero }
        return .seconds(min(seconds, Double(maximumReset.components.seconds)).rounded(.up))
    }

    /// The `RateLimit` field, structured (`"name";r=0;t=10`, several policies) or the older `key=value` list.
    static func rateLimitField(_ value: String, policy: String?) -> ServerQuota? {
        guard value.utf8.count <= 4_096 else { return nil }
        let items = value.split(separator: ",").map(parameters)
        let structured = items.filter { $0["r"] != nil }
        let policies = (policy.map { $0.utf8.count <= 4_096 ? $0.split(separator: ",").map(parameters) : [] } ?? [])
        if !structured.isEmpty {
            var best: ServerQuota?
            for item in structured {
                guard let remaining = item["r"].flatMap(integer) else { continue }
                let name = item[""]
                let matchingPolicy = policies.first { $0[""] == name } ?? (policies.count == 1 ? policies.first : nil)
                let window = (item["t"] ?? matchingPolicy?["w"]).flatMap(integer)
                let quota = ServerQuota(
                    remaining: remaining, resetAfter: window.map { .seconds($0) },
                    limit: matchingPolicy?["q"].flatMap(integer))
                if best.map({ quota.remaining < $0.remaining }) ?? true { best = quota }
            }
            return best
        }
        var merged: [String: String] = [:]
        for item in items { merged.merge(item) { first, _ in first } }
        guard let remaining = merged["remaining"].flatMap(integer) else { return nil }
        let window = policies.first?["w"] ?? policies.first?["window"]
        return ServerQuota(
            remaining: remaining, resetAfter: (merged["reset"] ?? window).flatMap(integer).map { .seconds($0) },
            limit: merged["limit"].flatMap(integer))
    }

    /// `"name";a=1;b=2` or `a=1` → parameters by lowercased key; a bare (possibly quoted) token under "".
    private static func parameters(_ item: Substring) -> [String: String] {
        var result: [String: String] = [:]
        for piece in item.split(separator: ";") {
            let pair = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
            if pair.count == 2 && key.isEmpty { continue }
            let raw = pair.count == 2 ? pair[1].trimmingCharacters(in: .whitespaces) : ""
            let unquoted = raw.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            if pair.count == 1 {
                if result[""] == nil { result[""] = key.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            } else if result[key] == nil {
                result[key] = unquoted
            }
        }
        return result
    }
}

/// Receives the quotas servers advertise, for a limiter that paces calls by them.
///
/// A stage puts itself in ``ResilienceContext/quotaObserver`` for the calls it wraps; a transport reports
/// every response's quota there with ``ResilienceContext/reportQuota(from:)``.
public protocol ServerQuotaObserver: Sendable {
    /// Records that the server advertised `quota` at `now`.
    func observe(_ quota: ServerQuota, now: ResilienceInstant)
}

extension ResilienceContext {
    /// Parses the quota advertised in `headers` (if any) and hands it to ``quotaObserver``; does nothing,
    /// and parses nothing, without an observer. Transports call it for every response they receive.
    /// - Parameters:
    ///   - headers: the response's header fields.
    ///   - responseDate: the response's `Date`, if known.
    public func reportQuota(from headers: HTTPHeaders, responseDate: Date? = nil) {
        guard let quotaObserver, let quota = ServerQuota(headers: headers, responseDate: responseDate, now: Date())
        else { return }
        quotaObserver.observe(quota, now: clock.now())
    }
}
