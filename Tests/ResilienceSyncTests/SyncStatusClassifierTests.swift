import Foundation
import ResilienceCore
import ResilienceSync
import Testing

@Suite("SyncStatusClassifier: the sync engine's overlay on the Core status table")
struct SyncStatusClassifierTests {
    private func classify(_ response: HTTPResponse) -> FailureClassification? {
        SyncStatusClassifier().classify(HTTPStatusError(response: response))
    }

    @Test(
        "Every status but 409 is the Core table's, including those the two tables used to disagree on",
        arguments: [400, 401, 403, 404, 408, 410, 422, 429, 500, 501, 502, 503, 504, 200, 302, 600])
    func tableStatuses(_ status: Int) {
        #expect(classify(HTTPResponse(status: status)) == HTTPStatusTable.classification(status: status))
    }

    @Test("401, 403, 404, 501 and 504 read as RFC 9110 says, the same as in a fetch")
    func formerDisagreements() {
        #expect(classify(HTTPResponse(status: 401))?.code == .unauthorized)
        #expect(classify(HTTPResponse(status: 403))?.code == .forbidden)
        #expect(classify(HTTPResponse(status: 404))?.category == .notFound)
        #expect(classify(HTTPResponse(status: 501))?.isTransient == false)
        #expect(classify(HTTPResponse(status: 504))?.category == .timeout)
        #expect(classify(HTTPResponse(status: 504))?.code == .timedOut)
    }

    @Test("429, and a 403 whose quota is spent, are rate limits the engine counts")
    func rateLimits() {
        #expect(classify(HTTPResponse(status: 429))?.category == .rateLimited)
        #expect(classify(HTTPResponse(status: 429))?.code == .rateLimited)
        #expect(classify(HTTPResponse(status: 403, headers: ["X-RateLimit-Remaining": "0"]))?.category == .rateLimited)
    }

    @Test("The overlay: every 409 is a conflict, transient only while the key is in use")
    func conflictOverlay() {
        let inProgress = HTTPResponse(status: 409, body: Data(#"{"type":"idempotency-key-in-use"}"#.utf8))
        let tableReading = HTTPStatusTable.classification(of: inProgress)
        #expect(tableReading.category == .transient)
        let overlaid = classify(inProgress)
        #expect(overlaid?.category == .conflict)
        #expect(overlaid?.code == .http(409))
        #expect(overlaid?.isTransient == true)

        for body in [#"{"code":"duplicate"}"#, "", "not json"] {
            let conflict = classify(HTTPResponse(status: 409, body: Data(body.utf8)))
            #expect(conflict?.category == .conflict, "\(body)")
            #expect(conflict?.isTransient == false, "\(body)")
        }
    }

    @Test("Anything but a rejected response is left to other classifiers")
    func otherErrors() {
        struct Other: Error {}
        #expect(SyncStatusClassifier().classify(Other()) == nil)
    }
}
