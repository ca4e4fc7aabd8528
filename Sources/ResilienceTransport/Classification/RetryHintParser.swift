import Foundation

/// Turns a response's rate-limit headers into one retry delay.
///
/// `Retry-After` wins (delta-seconds or any HTTP-date, measured against the response's own `Date` header so a
/// skewed device clock does not matter). Without it, the secondary hints are used, in order: the RateLimit
/// draft's `RateLimit` field when its quota is spent (`t=`, or `RateLimit-Policy`'s window `w=`; both read
/// as RFC 9651 structured fields, a malformed field ignored), `RateLimit-Reset`, then `X-RateLimit-Reset`
/// (each delta-seconds, or a Unix time when it looks like one, as GitLab and GitHub send), each unless its
/// `Remaining` field says calls are left.
/// Negative, fractional and garbage values are ignored; huge values are clamped to ``maximumDelay``.
public struct RetryHintParser: Sendable, Hashable {
    /// The longest delay reported; larger hints are clamped to it.
    public var maximumDelay: Duration = .seconds(3_600)

    /// Creates a parser.
    ///
    /// - Parameter maximumDelay: The longest delay reported; larger hints are clamped to it. Default:
    ///   `.seconds(3_600)`.
    public init(maximumDelay: Duration = .seconds(3_600)) { self.maximumDelay = maximumDelay }

    /// The delay the headers ask for, or nil without a usable hint. `now` (wall clock) is used only for an
    /// HTTP-date or Unix time when the response has no valid `Date` header.
    public func retryDelay(from headers: HTTPHeaders, now: Date) -> Duration? {
        let responseDate = headers["Date"].flatMap { HTTPDate.parse($0, now: now) }
        if let value = headers.combinedValue(for: "Retry-After"),
            let delay = retryAfter(value, responseDate: responseDate, now: now)
        {
            return delay
        }
        if let value = headers.combinedValue(for: "RateLimit"),
            let delay = rateLimitField(value, policy: headers.combinedValue(for: "RateLimit-Policy"))
        {
            return delay
        }
        if let value = headers.combinedValue(for: "RateLimit-Reset"), !callsRemain(headers, prefix: "RateLimit-"),
            let delay = resetTime(value, responseDate: responseDate, now: now)
        {
            return delay
        }
        if let value = headers.combinedValue(for: "X-RateLimit-Reset"), !callsRemain(headers, prefix: "X-RateLimit-") {
            return resetTime(value, responseDate: responseDate, now: now)
        }
        return nil
    }

    /// Whether the `Remaining` field beside a `Reset` (`prefix` + `Remaining`) says calls are left: the reset
    /// is then only when the window renews (GitHub sends it on every response, errors included), not a wait
    /// the server asks for.
    private func callsRemain(_ headers: HTTPHeaders, prefix: String) -> Bool {
        guard let remaining = headers.combinedValue(for: prefix + "Remaining") else { return false }
        return firstDeltaSeconds(in: remaining).map { $0 > .zero } ?? false
    }

    /// One `Retry-After` value (possibly several merged with commas): the first valid delta-seconds or
    /// HTTP-date, relative to `responseDate` (or `now`). A date in the past means "now" (zero). However many
    /// values were merged (a proxy that repeats the header), only the first 32 comma-separated pieces are
    /// looked at.
    public func retryAfter(_ value: String, responseDate: Date?, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        if let seconds = deltaSeconds(trimmed) { return seconds }
        if let date = HTTPDate.parse(trimmed, now: now) {
            return delay(until: date, responseDate: responseDate, now: now)
        }
        // Merged duplicates: "120, 120" or "<date>, <date>" (an HTTP-date has a comma of its own).
        let pieces = trimmed.split(
            separator: ",", maxSplits: Self.maximumMergedPieces
        )
        .prefix(Self.maximumMergedPieces).map { $0.trimmingCharacters(in: .whitespaces) }
        for (index, piece) in pieces.enumerated() {
            if let seconds = deltaSeconds(piece) { return seconds }
            if index + 1 < pieces.count, let date = HTTPDate.parse(piece + ", " + pieces[index + 1], now: now) {
                return delay(until: date, responseDate: responseDate, now: now)
            }
            if let date = HTTPDate.parse(piece, now: now) {
                return delay(until: date, responseDate: responseDate, now: now)
            }
        }
        return nil
    }

    /// How many comma-separated pieces of a merged `Retry-After` are looked at for the first valid value
    /// (an HTTP-date is two of them): enough for any repetition a server or proxy makes, and a bound on the
    /// work a hostile field can cause.
    static let maximumMergedPieces = 32

    /// `1*DIGIT` only: no sign, no fraction, no spaces inside; clamped to ``maximumDelay``. Leading zeros do
    /// not make a value larger (`00000000000030` is 30 s): only the digits after them are measured.
    func deltaSeconds(_ text: String) -> Duration? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        let significant = text.drop { $0 == "0" }
        guard significant.utf8.count <= 12 else { return maximumDelay }
        return min(.seconds(Int64(significant) ?? 0), maximumDelay)
    }

    private func firstDeltaSeconds(in value: String) -> Duration? {
        for piece in value.split(separator: ",") {
            if let delay = deltaSeconds(piece.trimmingCharacters(in: .whitespaces)) { return delay }
        }
        return nil
    }

    /// The whole seconds until `date` (rounded up: never before it), clamped to ``maximumDelay`` as a
    /// duration, so a maximum with a fraction of a second (`1.5 s`, `200 ms`) bounds a date as it bounds
    /// delta-seconds.
    private func delay(until date: Date, responseDate: Date?, now: Date) -> Duration {
        let seconds = date.timeIntervalSince(responseDate ?? now)
        guard seconds > 0 else { return .zero }
        let maximum = Double(maximumDelay.components.seconds) + Double(maximumDelay.components.attoseconds) * 1e-18
        guard seconds.rounded(.up) < maximum else { return maximumDelay }
        return .seconds(seconds.rounded(.up))
    }

    /// The delay a `RateLimit` field asks for: the reset of its most restrictive policy when that quota is
    /// spent (remaining 0), from `t` (or the older draft's `reset`), else the matching `RateLimit-Policy`
    /// window `w`. The fields are read by ``ServerQuota/init(rateLimitField:policyField:)`` as RFC 9651
    /// structured fields; a malformed field gives no delay.
    func rateLimitField(_ value: String, policy: String?) -> Duration? {
        guard let quota = ServerQuota(rateLimitField: value, policyField: policy), quota.remaining == 0,
            let reset = quota.resetAfter
        else { return nil }
        return min(reset, maximumDelay)
    }

    /// `RateLimit-Reset` or `X-RateLimit-Reset` (the first valid of comma-merged duplicates): delta-seconds, or a
    /// Unix time (≥ 1,000,000,000) relative to the `Date` header.
    func resetTime(_ value: String, responseDate: Date?, now: Date) -> Duration? {
        for piece in value.split(separator: ",") {
            let text = piece.trimmingCharacters(in: .whitespaces)
            guard let delay = deltaSeconds(text) else { continue }
            guard let value = Int64(text), value >= 1_000_000_000 else { return delay }
            return self.delay(
                until: Date(timeIntervalSince1970: TimeInterval(value)), responseDate: responseDate, now: now)
        }
        return nil
    }
}
