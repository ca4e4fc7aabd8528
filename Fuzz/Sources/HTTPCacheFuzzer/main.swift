import Foundation
import ResilienceCore
import ResilienceTransport

/// Feeds arbitrary bytes to the HTTP cache's rules: the input is a request header block and a response
/// header block separated by a NUL byte (`Name: value` lines). Whatever the fields say (a huge
/// `Cache-Control`, thousands of `Vary` names, nonsense dates and ages, `Range` and `Content-Range` values
/// for partial content), parsing and every decision of
/// ``HTTPCachePolicy`` must return without crashing, with a finite, non-negative lifetime and age.
@_cdecl("LLVMFuzzerTestOneInput")
public func httpCacheFuzzer(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    let split = bytes.firstIndex(of: 0) ?? bytes.endIndex
    let requestHeaders = headers(String(decoding: bytes[..<split], as: UTF8.self))
    let responseHeaders = headers(String(decoding: bytes[min(split + 1, bytes.endIndex)...], as: UTF8.self))
    _ = try? CacheControl(headers: requestHeaders)
    let policy = HTTPCachePolicy()
    let request = HTTPRequest(url: URL(string: "https://fuzz.example/resource")!, headers: requestHeaders)
    let response = HTTPResponse(status: 200, headers: responseHeaders, body: Data("body".utf8))
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    _ = policy.variantKey(for: request, varyingOn: responseHeaders)
    // Partial content: whatever `Range` and `Content-Range` say, deciding whether a 206 may be stored returns.
    _ = policy.isStorable(HTTPResponse(status: 206, headers: responseHeaders, body: Data("body".utf8)), for: request)
    guard let entry = policy.entry(for: response, to: request, requestTime: now, responseTime: now) else { return 0 }
    precondition(entry.freshnessLifetime.isFinite && entry.freshnessLifetime >= 0)
    precondition(entry.initialAge.isFinite && entry.initialAge >= 0)
    let directives = (try? CacheControl(headers: requestHeaders) ?? CacheControl()) ?? CacheControl()
    _ = policy.reuse(entry, requestDirectives: directives, now: now.addingTimeInterval(60))
    _ = policy.allowsStaleIfError(entry, requestDirectives: directives, now: now.addingTimeInterval(60))
    let freshened = policy.freshened(
        entry, with: HTTPResponse(status: 304, headers: requestHeaders), requestTime: now, responseTime: now)
    precondition(freshened.response.body == entry.response.body)
    return 0
}

func headers(_ text: String) -> HTTPHeaders {
    var headers = HTTPHeaders()
    for line in text.split(separator: "\n") {
        let pieces = line.split(separator: ":", maxSplits: 1)
        if pieces.count == 2 { headers.add(name: String(pieces[0]), value: String(pieces[1].drop { $0 == " " })) }
    }
    return headers
}
