import Foundation
import ResilienceKit
import ResilienceTesting
import Testing

/// A redirect hop refused after the server answered the request, through a real retry stage over loopback
/// sockets: the request was sent, so a POST without an idempotency key is never sent again on its account.
@Suite("A refused redirect hop through a retry stage (FaultServer)")
struct RefusedRedirectRetryLoopbackTests {
    @Test("A POST whose redirect hop the plaintext policy refuses is not resent, and its failure says it was sent")
    func refusedHopOfAPostIsNotResent() async throws {
        let server = try FaultServer()
        let other = try FaultServer()
        defer {
            server.stop()
            other.stop()
        }
        server.script("/submit", .redirect(to: "http://localhost:\(other.port)/submit", status: 307))
        other.script("/submit", .ok())
        let retries = Pipeline {
            RetryStrategy(policy: StandardRetryPolicy(maxAttempts: 3, backoff: .constant(.zero), jitter: .none))
        }
        let transport = ResilientTransport(
            wrapping: SecureTransport(
                wrapping: URLSessionTransport(),
                policy: SecureTransportPolicy(action: .block, allowedInsecureHosts: ["127.0.0.1"])),
            pipeline: retries)
        let request = HTTPRequest(method: .post, url: server.url("/submit"), body: Data("apply".utf8))
        let error = await #expect(throws: (any Error).self) {
            try await transport.send(request, context: ResilienceContext(key: "submit"))
        }
        let classification = try #require(error.map { CompositeErrorClassifier().classification(of: $0) })
        #expect(classification.code == .insecureTransportBlocked, "\(classification)")
        #expect(!classification.requestWasNotSent, "the server received and answered the POST")
        #expect(server.requests(to: "/submit").map(\.method) == ["POST"])
        #expect(other.requestCount == 0)

        // The retry guard follows the flag: were the refusal transient, the bare POST would still not be resent,
        // while a request safe to repeat would be.
        var transient = classification
        transient.isTransient = true
        var random = SystemRandomNumberGenerator()
        let policy = StandardRetryPolicy(maxAttempts: 3, backoff: .constant(.zero), jitter: .none)
        let bare = policy.decide(
            RetryAttempt(number: 1, failure: transient, idempotency: request.idempotency), using: &random)
        #expect(bare.stopReason == .notIdempotent, "\(bare)")
        let keyed = policy.decide(
            RetryAttempt(number: 1, failure: transient, idempotency: .keyed("k-1")), using: &random)
        #expect(keyed.shouldRetry, "\(keyed)")
    }
}
