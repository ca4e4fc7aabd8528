import Foundation
import HTTPTypes
import OpenAPIRuntime
import ResilienceCore
import ResilienceOpenAPI
import ResiliencePolicies
import ResilienceTesting
import ResilienceTransport
import Testing

/// Request bodies over the adapter's bound, without a network or real sleeps.
@Suite("Body bounds of ResilienceClientTransport and ResilienceMiddleware")
struct BodyBoundsTests {
    /// Answers 201 to every request and records the size of each body it was given.
    final class RecordingTransport: HTTPTransport {
        let sent = LockedBox<[Int]>([])

        func send(
            _ request: ResilienceCore.HTTPRequest, context: ResilienceContext
        ) async throws -> ResilienceCore.HTTPResponse {
            sent.mutate { $0.append(request.body?.count ?? 0) }
            return ResilienceCore.HTTPResponse(status: 201, url: request.url)
        }
    }

    static let limit = 16 * 1024 * 1024
    static let baseURL = URL(string: "http://127.0.0.1:1")!
    static let post = HTTPTypes.HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/jobs")

    /// A single-pass body of `count` bytes in 1 MiB chunks, of unknown length.
    static func stream(_ count: Int) -> HTTPBody {
        HTTPBody(
            AsyncStream { continuation in
                var left = count
                while left > 0 {
                    let size = min(left, 1024 * 1024)
                    continuation.yield(ArraySlice(repeating: 7, count: size))
                    left -= size
                }
                continuation.finish()
            }, length: .unknown)
    }

    /// Up to three attempts with no backoff, retrying whatever its policy finds transient.
    static func retrying() -> Pipeline {
        var policy = StandardRetryPolicy.standard
        policy.maxAttempts = 3
        policy.backoff = .constant(.zero)
        policy.jitter = .none
        return Pipeline { RetryStrategy(policy: policy) }
    }

    func expectTooLarge(_ error: (any Error)?) throws {
        let tooLarge = try #require(error as? TransportError, "\(String(describing: error))")
        #expect(tooLarge.code == .invalidFormat)
        #expect(tooLarge.classification.category == .clientError)
        #expect(tooLarge.classification.isTransient == false)
        #expect(tooLarge.classification.requestWasNotSent)
        #expect(tooLarge.classification.message?.contains("larger than \(Self.limit) bytes") == true)
    }

    @Test("A request body one byte over the default 16 MiB is a typed client error and is not sent")
    func requestBodyOverLimit() async throws {
        let recorder = RecordingTransport()
        let transport = ResilienceClientTransport(recorder)
        for body in [Self.stream(Self.limit + 1), HTTPBody([UInt8](repeating: 7, count: Self.limit + 1))] {
            let error = await #expect(throws: (any Error).self) {
                _ = try await transport.send(Self.post, body: body, baseURL: Self.baseURL, operationID: "createJob")
            }
            try expectTooLarge(error)
        }
        #expect(recorder.sent.value.isEmpty)
    }

    @Test("A request body of exactly 16 MiB is sent whole")
    func requestBodyAtLimit() async throws {
        let recorder = RecordingTransport()
        let transport = ResilienceClientTransport(recorder)
        let (response, _) = try await transport.send(
            Self.post, body: Self.stream(Self.limit), baseURL: Self.baseURL, operationID: "createJob")
        #expect(response.status.code == 201)
        #expect(recorder.sent.value == [Self.limit])
    }

    @Test("Under the middleware, a request body over the bound fails once, classified, and is not retried")
    func requestBodyOverLimitNotRetried() async throws {
        let recorder = RecordingTransport()
        let transport = ResilienceClientTransport(recorder)
        let pipeline = Self.retrying()
        let middleware = ResilienceMiddleware { _ in pipeline }
        var request = Self.post
        request.headerFields[HTTPField.Name("Idempotency-Key")!] = "k-1"
        let calls = LockedBox(0)
        let error = await #expect(throws: (any Error).self) {
            _ = try await middleware.intercept(
                request, body: HTTPBody([UInt8](repeating: 7, count: Self.limit + 1)), baseURL: Self.baseURL,
                operationID: "createJob"
            ) { request, body, baseURL in
                calls.mutate { $0 += 1 }
                return try await transport.send(request, body: body, baseURL: baseURL, operationID: "createJob")
            }
        }
        try expectTooLarge(error)
        #expect(calls.value == 1)
        #expect(recorder.sent.value.isEmpty)
    }
}
