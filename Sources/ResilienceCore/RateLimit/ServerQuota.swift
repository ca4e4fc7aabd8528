import Foundation

/// A quota a server advertised in a response's headers: how many requests are left and when the window
/// resets. It travels from the transport (which parses it from every response) to a quota-pacing limiter
/// through the context's ``ResilienceContext/quotaObserver``.
///
/// Understood, in this order:
/// - the IETF RateLimit fields, parsed as RFC 9651 structured fields (see
///   ``init(rateLimitField:policyField:)``): `RateLimit: "default";r=0;t=10` (the most restrictive policy
///   wins) with `RateLimit-Policy: "default";q=100;w=60` for the limit and window, and the older draft's
///   `RateLimit: limit=100, remaining=0, reset=30`; a malformed `RateLimit` is ignored;
/// - `RateLimit-Remaining` / `RateLimit-Reset` / `RateLimit-Limit`, and `X-RateLimit-Remaining` /
///   `X-RateLimit-Reset` / `X-RateLimit-Limit`, as GitHub, GitLab and many others send; a reset is
///   delta-seconds, or a Unix time when ≥ 1,000,000,000 (no delay is 31 years; GitLab's `RateLimit-Reset` and
///   GitHub's `X-RateLimit-Reset` are Unix times).
///
/// Values must be non-negative integers; anything else is ignored, never a crash.
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
            let quota = ServerQuota(rateLimitField: value, policyField: headers.combinedValue(for: "RateLimit-Policy"))
        {
            self = quota
            return
        }
        for prefix in ["RateLimit-", "X-RateLimit-"] {
            guard let remaining = headers.combinedValue(for: prefix + "Remaining").flatMap(Self.integer) else {
                continue
            }
            let reset = headers.combinedValue(for: prefix + "Reset").flatMap(Self.integer).map { value in
                Self.reset(value, responseDate: responseDate, now: now)
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

    /// A non-negative integer of at most 12 digits after any leading zeros (the first of comma-merged
    /// duplicates), else nil.
    static func integer(_ text: some StringProtocol) -> Int? {
        let whole = String(text)
        let first = whole.firstIndex(of: ",").map { String(whole[..<$0]) } ?? whole
        let trimmed = first.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        let significant = trimmed.drop { $0 == "0" }
        guard significant.utf8.count <= 12 else { return nil }
        return Int(significant) ?? 0
    }

    /// The wait a `Reset` field's `value` names: delta-seconds, or the time until a Unix time (≥ 1,000,000,000)
    /// measured against `responseDate` (else `now`).
    private static func reset(_ value: Int, responseDate: Date?, now: Date) -> Duration {
        guard value >= 1_000_000_000 else { return .seconds(value) }
        let seconds = Date(timeIntervalSince1970: TimeInterval(value)).timeIntervalSince(responseDate ?? now)
        guard seconds > 0 else { return .zero }
        return .seconds(min(seconds, Double(maximumReset.components.seconds)).rounded(.up))
    }

    /// Reads the IETF RateLimit fields as RFC 9651 structured fields, or nil when `RateLimit` is malformed or
    /// carries no usable quota (a malformed field is ignored, as the RateLimit draft requires).
    ///
    /// `RateLimit` is a List of policies (`"hour";r=40;t=600, "minute";r=0;t=20`): each item names a
    /// policy and carries its remaining quota `r` and the seconds until it resets `t`; an item whose `r` is
    /// not a non-negative integer is skipped, and the most restrictive of the others wins: the fewest remaining,
    /// and of policies with as many, the one that resets last (a known reset before an unknown one). `RateLimit-Policy` is a List of the same names with the quota `q` and the window `w` in
    /// seconds; the item with the same name (or the only item) gives the limit, and the window when `t` is
    /// absent. The older draft's Dictionary form, `RateLimit: limit=100, remaining=0, reset=30` with
    /// `RateLimit-Policy: 100;w=60`, is read too.
    /// - Parameters:
    ///   - rateLimitField: the `RateLimit` field value (several field lines combined with `", "`).
    ///   - policyField: the `RateLimit-Policy` field value, if sent; ignored when malformed.
    public init?(rateLimitField: String, policyField: String?) {
        let policies = policyField.flatMap { try? StructuredFieldList(parsing: $0) } ?? []
        if let list = try? StructuredFieldList(parsing: rateLimitField) {
            // The first policy of each name, looked up once per item: linear however many a hostile field lists.
            var policiesByName: [String: StructuredFieldMember] = [:]
            for policy in policies {
                guard let name = policy.item?.bareItem.stringValue, policiesByName[name] == nil else { continue }
                policiesByName[name] = policy
            }
            var best: ServerQuota?
            for case .item(let item) in list {
                guard let remaining = Self.count(item.parameters["r"]) else { continue }
                let policy =
                    item.bareItem.stringValue.flatMap { policiesByName[$0] }
                    ?? (policies.count == 1 ? policies.first : nil)
                let reset = Self.count(item.parameters["t"]) ?? Self.count(policy?.parameters["w"])
                let quota = ServerQuota(
                    remaining: remaining, resetAfter: reset.map { .seconds($0) },
                    limit: Self.count(policy?.parameters["q"]))
                if best.map({ quota.isMoreRestrictive(than: $0) }) ?? true { best = quota }
            }
            guard let best else { return nil }
            self = best
            return
        }
        guard let dictionary = try? StructuredFieldDictionary(parsing: rateLimitField),
            let remaining = Self.count(dictionary["remaining"]?.item?.bareItem)
        else { return nil }
        let reset = Self.count(dictionary["reset"]?.item?.bareItem) ?? Self.count(policies.first?.parameters["w"])
        self.init(
            remaining: remaining, resetAfter: reset.map { .seconds($0) },
            limit: Self.count(dictionary["limit"]?.item?.bareItem))
    }

    /// Whether this policy holds calls back longer than `other`: fewer calls remaining; with as many, a known
    /// reset over an unknown one, then the later reset (two spent policies allow the next call only when both
    /// have reset).
    private func isMoreRestrictive(than other: ServerQuota) -> Bool {
        if remaining != other.remaining { return remaining < other.remaining }
        guard let resetAfter else { return false }
        guard let otherReset = other.resetAfter else { return true }
        return resetAfter > otherReset
    }

    /// A non-negative structured-field integer, else nil.
    private static func count(_ value: StructuredFieldBareItem?) -> Int? {
        guard let integer = value?.integerValue, integer >= 0 else { return nil }
        return Int(integer)
    }
}

/// Receives the quotas servers advertise, for a limiter that paces calls by them.
///
/// A stage puts itself in ``ResilienceContext/quotaObserver`` for the calls it wraps; a transport reports
/// every response's quota there with ``ResilienceContext/reportQuota(from:responseDate:)``.
public protocol ServerQuotaObserver: Sendable {
    /// Records that the server advertised `quota` at `now`.
    func observe(_ quota: ServerQuota, now: ResilienceInstant)
}

extension ResilienceContext {
    /// Parses the quota advertised in `headers` (if any) and hands it to ``quotaObserver``; does nothing,
    /// and parses nothing, without an observer or without header fields (most responses: it then costs no
    /// clock read and no copy of the observer). Transports call it for every response they receive.
    /// - Parameters:
    ///   - headers: the response's header fields.
    ///   - responseDate: the response's `Date`, if known.
    public func reportQuota(from headers: HTTPHeaders, responseDate: Date? = nil) {
        guard !headers.fields.isEmpty, let quotaObserver,
            let quota = ServerQuota(headers: headers, responseDate: responseDate, now: Date())
        else { return }
        quotaObserver.observe(quota, now: clock.now())
    }
}
