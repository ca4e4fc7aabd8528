import Foundation
import ResilienceTransport

/// Feeds arbitrary bytes to the `Retry-After` / HTTP-date parsers. They must never crash, hang or return a
/// negative or over-long delay.
@_cdecl("LLVMFuzzerTestOneInput")
public func retryAfterFuzzer(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let parser = RetryHintParser()
    if let date = HTTPDate.parse(text) {
        precondition(date.timeIntervalSince1970.isFinite)
    }
    for responseDate in [nil, now] {
        if let delay = parser.retryAfter(text, responseDate: responseDate, now: now) {
            precondition(delay >= .zero && delay <= parser.maximumDelay, "delay \(delay) out of range")
        }
    }
    var headers = HTTPHeaders()
    headers.add(name: "Retry-After", value: text)
    headers.add(name: "Date", value: text)
    if let delay = parser.retryDelay(from: headers, now: now) {
        precondition(delay >= .zero && delay <= parser.maximumDelay, "delay \(delay) out of range")
    }
    return 0
}
