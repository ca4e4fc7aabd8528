import Foundation
import ResilienceCore
import Testing

@Suite("IdempotencyConflict")
struct IdempotencyConflictTests {
    static let cases: [(body: String, meaning: IdempotencyConflict)] = [
        (#"{"type":"https://api.example.com/problems/idempotency-key-in-use"}"#, .requestInProgress),
        (#"{"type":"about:blank","code":"request_in_progress"}"#, .requestInProgress),
        (#"{"error":{"type":"idempotency_error","code":"idempotency_key_in_use"}}"#, .requestInProgress),
        (#"{"error":"Idempotency request still processing"}"#, .requestInProgress),
        (#"{"type":"https://api.example.com/problems/already-exists"}"#, .entityExists),
        (#"{"code":"DUPLICATE_ENTITY"}"#, .entityExists),
        (#"{"errorCode":"resource_exists"}"#, .entityExists),
        (#"{"title":"Conflict"}"#, .ambiguous),
        ("Conflict", .ambiguous),
        ("", .ambiguous),
        (#"{"type":"https://api.example.com/problems/version-mismatch"}"#, .ambiguous),
    ]

    @Test("409 bodies are read for their meaning", arguments: cases)
    func meaning(body: String, meaning: IdempotencyConflict) {
        let response = HTTPResponse(status: 409, body: Data(body.utf8))
        #expect(IdempotencyConflict.meaning(of: response) == meaning)
    }

    @Test("Only a 409 has a conflict meaning; oversized bodies are not parsed")
    func onlyConflicts() {
        let body = Data(#"{"code":"duplicate"}"#.utf8)
        #expect(IdempotencyConflict.meaning(of: HTTPResponse(status: 400, body: body)) == nil)
        var huge = Data(#"{"code":"duplicate","pad":""#.utf8)
        huge.append(Data(repeating: 0x61, count: IdempotencyConflict.maximumInspectedBody))
        huge.append(Data(#""}"#.utf8))
        #expect(IdempotencyConflict.meaning(of: HTTPResponse(status: 409, body: huge)) == .ambiguous)
    }
}
