import Foundation

/// Recognises a `409 Conflict` that means "a request with this `Idempotency-Key` is still in progress" (the
/// IETF Idempotency-Key draft's meaning): the original request has not finished, so the answer is unknown and
/// the request must be retried later with the same key. Such a 409 is transient; it never confirms that the
/// entity exists.
///
/// A 409 matches when its error document's `type`, `title`, `detail`, `code` or message says so
/// (`in progress`, `in-progress`, `outstanding`, `still processing`, `being processed`, `concurrent request`)
/// or when it carries a `Retry-After`.
public enum InProgressConflict {
    /// Phrases that mark an in-progress 409, matched case-insensitively in the error document.
    public static let phrases = [
        "in progress", "in-progress", "in_progress", "inprogress", "outstanding", "still processing",
        "being processed", "concurrent request",
    ]

    /// Whether `response` is a 409 for a request still in progress.
    public static func matches(_ response: HTTPResponse) -> Bool {
        guard response.status == 409 else { return false }
        if response.headers.contains("Retry-After") { return true }
        let details = ServerErrorDetails.parse(body: response.body, headers: response.headers)
        let documentText = [details.code, details.message, problemType(response.body)].compactMap { $0 }
        let text = documentText.joined(separator: " ").lowercased()
        return phrases.contains { text.contains($0) }
    }

    /// The `type` and `title` members of a small JSON error document, which ``ServerErrorDetails`` may not keep.
    private static func problemType(_ body: Data) -> String? {
        guard body.count <= 64 * 1024, body.first(where: { $0 > 0x20 }) == UInt8(ascii: "{"),
            let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
        else { return nil }
        let parts = ["type", "title"].compactMap { object[$0] as? String }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }
}
