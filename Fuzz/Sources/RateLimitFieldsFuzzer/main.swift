import Foundation
import ResilienceTransport

/// Feeds arbitrary header blocks (`Name: value` lines) to the rate-limit parsers: ``ServerQuota``, the retry
/// hint parser and the whole-response classifier. They must never crash or return out-of-range values.
@_cdecl("LLVMFuzzerTestOneInput")
public func rateLimitFieldsFuzzer(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    var headers = HTTPHeaders()
    for line in text.split(whereSeparator: \.isNewline) {
        let parts = line.split(separator: ":", maxSplits: 1)
        guard parts.count == 2 else { continue }
        headers.add(name: String(parts[0]), value: String(parts[1]))
    }
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    if let quota = ServerQuota(headers: headers, responseDate: now, now: now) {
        precondition(quota.remaining >= 0)
        if let reset = quota.resetAfter { precondition(reset >= .zero && reset <= ServerQuota.maximumReset) }
    }
    let parser = RetryHintParser()
    if let delay = parser.retryDelay(from: headers, now: now) {
        precondition(delay >= .zero && delay <= parser.maximumDelay)
    }
    for status in [200, 403, 409, 429] {
        let classification = HTTPStatusClassifier(wallClock: { now }).classification(
            of: HTTPResponse(status: status, headers: headers))
        precondition(classification.httpStatus == status)
    }
    return 0
}
