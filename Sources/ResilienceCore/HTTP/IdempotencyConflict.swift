import Foundation

/// What a `409 Conflict` answer to a keyed write means, read from the response as a whole (status, RFC 9457
/// problem `type`, and the body's `code` / `error` fields), so the transport and the sync engine agree:
///
/// - ``requestInProgress``: the IETF Idempotency-Key draft's 409, "a request with this key is still being
///   processed". Transient: retry later with the **same** key; the write is not yet applied (nor lost).
/// - ``entityExists``: the server confirms the entity already exists (a duplicate create): the write is
///   done, and a local duplicate may be removed.
/// - ``ambiguous``: a 409 that says neither; a caller must not conclude the write was applied.
///
/// Recognised signals, compared case-insensitively after turning `_`, spaces and `.` into `-`:
/// - in progress: `idempotency-key-in-use`, `key-in-use`, `request-in-progress`, `in-progress`,
///   `still-processing`, `concurrent-request`, `request-in-flight`, or an `idempotency…` type or code whose
///   text says `progress` or `processing`;
/// - exists: `already-exists`, `duplicate`, `resource-exists`, `entity-exists`.
///
/// A problem `type` URI counts by its last path component (`https://example.com/problems/already-exists`).
/// Bodies over ``maximumInspectedBody`` bytes are not parsed (the answer is then ``ambiguous``).
public enum IdempotencyConflict: String, Sendable, Hashable, CaseIterable {
    /// A request with the same idempotency key is still being processed; retry later with the same key.
    case requestInProgress = "request-in-progress"
    /// The server confirms the entity already exists.
    case entityExists = "entity-exists"
    /// The 409 names neither meaning.
    case ambiguous = "ambiguous"

    /// The largest body parsed for the signal (1 MiB).
    public static let maximumInspectedBody = 1 << 20

    /// What `response` means; `nil` when its status is not 409.
    public static func meaning(of response: HTTPResponse) -> IdempotencyConflict? {
        guard response.status == 409 else { return nil }
        return meaning(ofSignals: signals(in: response.body))
    }

    /// What a 409 carrying these problem types or error codes means (the most specific signal wins:
    /// in-progress before exists).
    public static func meaning(ofSignals signals: [String]) -> IdempotencyConflict {
        let normalized = signals.map(normalize)
        if normalized.contains(where: isInProgress) { return .requestInProgress }
        if normalized.contains(where: isExists) { return .entityExists }
        return .ambiguous
    }

    /// The problem `type` and the `code` / `error` / `error_code` / `errorCode` strings of a JSON body (one
    /// level of nesting under `error` included), in that order. Empty for a body that is not a JSON object.
    public static func signals(in body: Data) -> [String] {
        guard !body.isEmpty, body.count <= maximumInspectedBody,
            let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        else { return [] }
        var found: [String] = []
        collect(object, into: &found)
        if let nested = object["error"] as? [String: Any] { collect(nested, into: &found) }
        return found
    }

    private static let fields = ["type", "code", "error", "error_code", "errorCode", "reason"]

    private static func collect(_ object: [String: Any], into found: inout [String]) {
        for field in fields {
            guard let value = object[field] as? String else { continue }
            if field == "type", let url = URL(string: value), !url.lastPathComponent.isEmpty,
                url.lastPathComponent != "/"
            {
                found.append(url.lastPathComponent)
            }
            found.append(value)
        }
    }

    private static func normalize(_ signal: String) -> String {
        String(
            signal.lowercased().unicodeScalars.map { scalar -> Character in
                scalar == "_" || scalar == " " || scalar == "." ? "-" : Character(scalar)
            })
    }

    private static let inProgressTokens = [
        "idempotency-key-in-use", "key-in-use", "request-in-progress", "in-progress", "still-processing",
        "concurrent-request", "request-in-flight",
    ]
    private static let existsTokens = ["already-exists", "duplicate", "resource-exists", "entity-exists"]

    private static func isInProgress(_ signal: String) -> Bool {
        if inProgressTokens.contains(where: signal.contains) { return true }
        return signal.contains("idempotency") && (signal.contains("progress") || signal.contains("processing"))
    }

    private static func isExists(_ signal: String) -> Bool { existsTokens.contains(where: signal.contains) }
}
