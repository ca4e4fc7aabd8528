import Foundation
import ResilienceTransport

/// Feeds arbitrary bodies to the error-document parsers (problem+json, `{"error": …}`, anything else) and
/// the whole-response classifier. They must never crash and must keep the message bounded.
@_cdecl("LLVMFuzzerTestOneInput")
public func errorBodyFuzzer(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let body = Data(UnsafeBufferPointer(start: start, count: count))
    let headers: HTTPHeaders = ["Content-Type": "application/problem+json"]
    let details = ServerErrorDetails.parse(body: body, headers: headers)
    if let message = details.message {
        precondition(message.unicodeScalars.count <= ServerErrorDetails.maximumMessageLength)
    }
    let response = HTTPResponse(status: 409, headers: headers, body: body)
    _ = IdempotencyConflict.meaning(of: response)
    for status in [400, 403, 409, 422, 503] {
        let classification = HTTPStatusClassifier().classification(
            of: HTTPResponse(status: status, headers: headers, body: body))
        precondition(classification.httpStatus == status)
    }
    return 0
}
